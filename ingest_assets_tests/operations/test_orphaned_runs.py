"""The orphaned-runs sensor's view of a run worker: alive while its process lives (a code server's run worker is a
bare ``multiprocessing`` child whose command line says nothing of Dagster), dead once it is gone, and a pid reused by
a later process is not the worker."""

from __future__ import annotations

import subprocess
import sys
import time

from ingest_assets.defs.operations.orphans import is_alive


def test_a_live_worker_without_dagster_in_its_command_line_is_alive_and_a_dead_one_is_not():
    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        reported_at = time.time()  # the worker's engine event comes after it started
        assert is_alive(worker.pid, reported_at)
        assert not is_alive(worker.pid, reported_at - 3600)  # started after the report: another process's pid
    finally:
        worker.kill()
        worker.wait()
    assert not is_alive(worker.pid, reported_at)


def test_a_zombie_worker_is_dead():
    worker = subprocess.Popen([sys.executable, "-c", "pass"])
    reported_at = time.time()
    deadline = time.monotonic() + 30
    while subprocess.run(["ps", "-o", "stat=", "-p", str(worker.pid)], capture_output=True, text=True).stdout.strip()[:1] != "Z":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert not is_alive(worker.pid, reported_at)  # exited, not yet reaped
    worker.wait()
