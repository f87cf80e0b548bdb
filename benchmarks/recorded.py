"""The benchmarks' record: one JSON line per recorded run in ``benchmarks/record.jsonl``, and the comparison of a new
run with the last one recorded for the same command.

    uv run python benchmarks/records_pipeline.py --records 400000 --workers 2 --record   # run, compare, append
    uv run python benchmarks/records_pipeline.py --records 400000 --workers 2 --compare  # run, compare only
    uv run python benchmarks/recorded.py show [BENCHMARK]      # the recorded runs, newest last
    uv run python benchmarks/recorded.py refresh               # benchmarks/README.md's recorded table, from the record

A line holds the date (UTC), the commit (``+dirty`` when the checkout had uncommitted changes), the machine (CPU
model and count), the load average before and after the run, the benchmark, its command and its figures (a flat
object of numbers and short strings). The comparison prints each figure's ratio new / recorded, so a change
touching the record path is measured against the last recorded run of the same command on the same machine.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shlex
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
RECORD = HERE / "record.jsonl"
README = HERE / "README.md"
TABLE_START, TABLE_END = "<!-- recorded runs: start (benchmarks/recorded.py refresh) -->", "<!-- recorded runs: end -->"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--record`` and ``--compare`` for a benchmark's command line."""
    parser.add_argument("--record", action="store_true",
                        help=f"compare with the last recorded run of this command, then append this run to {RECORD.name}")
    parser.add_argument("--compare", action="store_true",
                        help="compare with the last recorded run of this command (nothing is appended)")


def machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} CPUs"


def commit() -> str:
    """The commit of the code measured; when ``PYTHONPATH`` runs another checkout's ``ingest_assets`` (a before/after
    pair from one venv), that checkout's, with the benchmarks' own beside it."""
    def head(where: Path) -> str:
        def git(*args: str) -> str:
            return subprocess.run(["git", *args], cwd=where, capture_output=True, text=True, check=False).stdout.strip()

        return (git("rev-parse", "--short", "HEAD") or "unknown") + (
            "+dirty" if git("status", "--porcelain", "--untracked-files=no") else "")

    spec = importlib.util.find_spec("ingest_assets")  # finds the package without importing it
    code = Path(spec.origin).resolve().parents[1] if spec and spec.origin else HERE.parent
    return head(HERE) if code == HERE.parent else f"{head(code)} (benchmarks at {head(HERE)})"


def command_line(argv: list[str] | None = None) -> str:
    """The benchmark's command as a reader types it, without ``--record``/``--compare``."""
    argv = sys.argv if argv is None else argv
    kept = [a for a in argv[1:] if a not in ("--record", "--compare")]
    return shlex.join(["uv", "run", "python", f"benchmarks/{Path(argv[0]).name}", *kept])


class Run:
    """One benchmark run: made before it starts (the load then), then :meth:`finish`\\ ed with its figures."""

    def __init__(self, benchmark: str, args: argparse.Namespace) -> None:
        self.benchmark, self.args = benchmark, args
        self.load_before, self.commit = os.getloadavg()[0], commit()  # the code measured is the code at the start

    def finish(self, figures: dict) -> dict | None:
        """Print the ratios against the last recorded run of the command (``--record``/``--compare``), then append
        this one (``--record``); returns the entry."""
        if not (self.args.record or self.args.compare):
            return None
        entry = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "commit": self.commit,
                 "machine": machine(), "load": [round(self.load_before, 2), round(os.getloadavg()[0], 2)],
                 "benchmark": self.benchmark, "command": command_line(), "figures": figures}
        previous = last(entry["command"])
        print(compare(entry, previous) if previous else f"no recorded run of `{entry['command']}` to compare with")
        if self.args.record:
            with RECORD.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry, ensure_ascii=False) + "\n")
            print(f"recorded in {RECORD}")
        return entry


def entries() -> list[dict]:
    if not RECORD.exists():
        return []
    return [json.loads(line) for line in RECORD.read_text(encoding="utf-8").splitlines() if line.strip()]


def last(command: str) -> dict | None:
    """The newest recorded run of ``command``."""
    found = [e for e in entries() if e["command"] == command]
    return found[-1] if found else None


def compare(new: dict, old: dict) -> str:
    """Each numeric figure of both runs with its ratio new / recorded."""
    lines = [f"against the run recorded {old['date']} at {old['commit']} (load {old['load'][0]}-{old['load'][1]}; "
             f"now {new['load'][0]}-{new['load'][1]}):"]
    for name, value in new["figures"].items():
        before = old["figures"].get(name)
        if isinstance(value, (int, float)) and isinstance(before, (int, float)) and before:
            lines.append(f"  {name}: {before:,.4g} -> {value:,.4g} ({value / before:.2f}x)")
    return "\n".join(lines)


def _cell(figures: dict) -> str:
    return "; ".join(f"{name} {_number(value)}" for name, value in figures.items())


def _number(value) -> str:
    """A figure as a reader reads it: whole numbers in full (``300,000``), others to 4 significant digits."""
    if isinstance(value, int) or isinstance(value, float) and value.is_integer() and abs(value) >= 1e4:
        return f"{value:,.0f}"
    return f"{value:,.4g}" if isinstance(value, float) else str(value)


def instruction_ratio(entry: dict, recorded: list[dict]) -> str:
    """The instruction-count ratio of a row: its own (an ``--instructions`` run), else that of the newest such run of
    the same benchmark at the same commit (the steady figure beside a timed one), else nothing."""
    for other in [entry, *reversed(recorded)]:
        if (other["benchmark"], other["commit"]) == (entry["benchmark"], entry["commit"]) and \
                "instruction_ratio" in other["figures"]:
            return _number(other["figures"]["instruction_ratio"])
    return ""


def table() -> str:
    """The newest recorded run of each command, as the rows of a Markdown table."""
    recorded = entries()
    newest: dict[str, dict] = {}
    for entry in recorded:
        newest[entry["command"]] = entry
    rows = ["| command | recorded (date, commit, load before-after, machine) | instruction ratio | figures |",
            "|---|---|---|---|"]
    for entry in sorted(newest.values(), key=lambda e: (e["benchmark"], e["command"])):
        rows.append(f"| `{entry['command']}` | {entry['date'][:10]}, {entry['commit']}, load {entry['load'][0]}-"
                    f"{entry['load'][1]}, {entry['machine']} | {instruction_ratio(entry, recorded)} | "
                    f"{_cell(entry['figures'])} |")
    return "\n".join(rows)


def refresh(readme: Path = README) -> None:
    """Rewrite the recorded-runs table of ``readme`` (between its markers) from the record."""
    text = readme.read_text(encoding="utf-8")
    start, end = text.find(TABLE_START), text.find(TABLE_END)
    if start < 0 or end < start:
        raise SystemExit(f"{readme} has no recorded-runs markers ({TABLE_START} ... {TABLE_END})")
    readme.write_text(text[: start + len(TABLE_START)] + "\n" + table() + "\n" + text[end:], encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description="The benchmarks' record of figures")
    sub = parser.add_subparsers(dest="action", required=True)
    show = sub.add_parser("show", help="the recorded runs, newest last")
    show.add_argument("benchmark", nargs="?")
    sub.add_parser("refresh", help=f"rewrite the recorded-runs table of {README.name} from the record")
    args = parser.parse_args()
    if args.action == "refresh":
        refresh()
        print(f"{README} refreshed from {RECORD}")
        return
    for entry in entries():
        if args.benchmark in (None, entry["benchmark"]):
            print(f"{entry['date']} {entry['commit']} load {entry['load']}: {entry['command']}\n  {_cell(entry['figures'])}")


if __name__ == "__main__":
    main()
