"""Instruction counts of marked regions of a child process, under ``valgrind --tool=callgrind``: a steady measure where
this machine's CPU seconds swing 20-40% between runs of the same code (no hardware counters here).

The child runs uninstrumented until it calls :func:`instrument` (imports and set-up under valgrind's JIT alone, ~8x
faster than counted); each :func:`mark` starts a region: callgrind dumps its counts there (``--dump-before=ctermid``),
so a region holds exactly the instructions between two consecutive marks.
Python's string hashing is seeded (``PYTHONHASHSEED``) so a run's counts repeat to the instruction.

    uv run python benchmarks/records_pipeline.py --records 6000 --workers 2 --instructions
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

MARKER = "ctermid"  # a libc function nothing on the measured paths calls: its entry is the region boundary


def mark() -> None:
    """End the current region and start the next (natively a no-op: ``os.ctermid`` only returns ``/dev/tty``)."""
    os.ctermid()


def instrument(on: bool = True) -> None:
    """Switch callgrind's instrumentation of this process on (or off) through vgdb; no-op outside valgrind."""
    if "vgpreload" not in os.environ.get("LD_PRELOAD", ""):  # valgrind preloads its core library into the child
        return
    command = subprocess.Popen(["vgdb", f"--pid={os.getpid()}", "instrumentation", "on" if on else "off"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    while command.poll() is None:  # busy: valgrind reads vgdb's request only while this process runs code
        pass
    if command.returncode:
        raise RuntimeError(f"vgdb could not switch callgrind's instrumentation: {command.stderr.read().decode()}")


def count(argv: list[str], workdir: Path, *, hash_seed: int = 0) -> list[int]:
    """Run ``argv`` under callgrind; returns the instructions between each two consecutive :func:`mark` calls of it,
    in order (what runs before its first mark or after its last is not counted)."""
    if shutil.which("valgrind") is None or shutil.which("vgdb") is None:
        raise SystemExit("--instructions needs valgrind (with vgdb) on PATH: apt-get install valgrind")
    workdir.mkdir(parents=True, exist_ok=True)
    out = workdir / "callgrind.out"
    command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--dump-before={MARKER}",
               f"--callgrind-out-file={out}.%p", f"--log-file={workdir / 'valgrind.log'}", *argv]
    env = {**os.environ, "PYTHONHASHSEED": str(hash_seed)}
    with open(workdir / "output.log", "w") as log:
        done = subprocess.run(command, env=env, stdout=log, stderr=subprocess.STDOUT, check=False)
    if done.returncode:
        tail = (workdir / "output.log").read_text(errors="replace")[-2000:]
        raise RuntimeError(f"the counted child failed (exit {done.returncode}): {tail}")
    dumps = sorted(workdir.glob("callgrind.out.*.*"), key=lambda p: int(p.suffix[1:]))
    return [totals(path) for path in dumps[1:]]  # dump 1 holds what ran before the first mark


def totals(path: Path) -> int:
    """The instructions a callgrind dump counted (its ``totals:`` line)."""
    found = re.search(r"^totals: (\d+)", path.read_text(errors="replace"), re.MULTILINE)
    if not found:
        raise RuntimeError(f"{path} has no totals line")
    return int(found.group(1))
