"""Start-up cost: CPU seconds of ``ingest-assets --help`` and of loading the code location (every part's
definitions built, as ``dagster dev`` and the daemon load them), each in a fresh interpreter.

    uv run --locked python benchmarks/startup.py [--runs 11] [--before DIR]

``--before DIR`` (another checkout's root, e.g. ``git archive REV ingest_assets | tar -x -C DIR``) measures its
``ingest_assets`` too, the two taking turns run by run so that both see the same load; the median and the least
of ``--runs`` are printed, user + system CPU of the child (its interpreter's own start included).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOAD = "from ingest_assets.definitions import build_definitions; build_definitions().get_repository_def()"
CASES = {"ingest-assets --help": ["-m", "ingest_assets.cli", "--help"], "code location load": ["-c", LOAD]}


def cpu_seconds(root: Path, args: list[str], cwd: str) -> float:
    """User + system CPU of one child running ``python ARGS`` with ``root``'s ``ingest_assets`` first."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, *args], env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--before", type=Path, help="another checkout's root, measured in turn with this one")
    args = parser.parse_args()
    sides = {"ours": ROOT}
    if args.before is not None:
        if not (args.before / "ingest_assets").is_dir():
            raise SystemExit(f"{args.before}: no ingest_assets package there")
        sides["before"] = args.before.resolve()
    print(f"load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="startup-") as home:  # no registry, settings of an empty INGEST_HOME
        os.environ["INGEST_HOME"] = home
        for side in sides.values():  # compiled once, outside the clock
            cpu_seconds(side, ["-m", "compileall", "-q", str(side / "ingest_assets")], home)
        runs = {(name, case): [] for case in CASES for name in sides}
        for _ in range(args.runs):
            for case, case_args in CASES.items():
                for name, side in sides.items():
                    runs[name, case].append(cpu_seconds(side, case_args, home))
    for (name, case), values in runs.items():
        print(f"  {case:<22} {name:<6} median {statistics.median(values):.3f} CPU-s, least {min(values):.3f}")
    if "before" in sides:
        for case in CASES:
            ratio = statistics.median(runs["ours", case]) / statistics.median(runs["before", case])
            print(f"{case}: ours takes {ratio:.2f}x the CPU seconds of before (medians)")


if __name__ == "__main__":
    main()
