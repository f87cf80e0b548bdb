"""The worker pool a file harvest reads its files with: items in the order tasks were given, a bounded lead, a
task's exception raised where its items are read, a dead worker named, every worker reaped, orphans exiting."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from ingest_assets.core.errors import IngestError, ParseError
from ingest_assets.core.workers import InProcess, RemoteTraceback, WorkerPool, default_workers, open_workers
from ingest_assets_tests.support import Worker, alive, wait_for
from ingest_assets_tests.support.workers import Task, counting

ROOT = Path(__file__).resolve().parents[1]


def importable(monkeypatch) -> None:
    """The work's module importable by the workers, which start with this process's ``sys.path``, whatever the
    folder the fork server started in."""
    monkeypatch.syspath_prepend(str(ROOT))


def test_items_come_back_in_the_order_the_tasks_were_given(monkeypatch):
    importable(monkeypatch)
    with open_workers(counting, 3) as pool:
        assert isinstance(pool, WorkerPool) and len(set(pool.pids)) == 3
        slow = pool.submit(Task("slow", 3, seconds=0.5))  # the others end first
        quick = [pool.submit(Task(f"quick-{n}", 4)) for n in range(2)]
        read = [item[:2] for items in (slow, *quick) for item in items]
        later = pool.submit(Task("later", 2))  # a worker that has been read to its end takes the next task
        read += [item[:2] for item in later]
    assert read == [("slow", 0), ("slow", 1), ("slow", 2)] + [(f"quick-{t}", n) for t in range(2) for n in range(4)] + [
        ("later", 0), ("later", 1)]


def test_one_worker_is_this_process_and_the_default_is_one_per_cpu_at_most_one_per_task():
    with open_workers(counting, 1) as pool:
        assert isinstance(pool, InProcess)
        assert [item[2] for item in pool.submit(Task("here", 2))] == [os.getpid()] * 2
    assert default_workers(1) == 1 and default_workers(10_000) == len(os.sched_getaffinity(0))


def test_a_worker_runs_ahead_of_the_reader_by_depth_items_at_most(tmp_path, monkeypatch):
    importable(monkeypatch)
    progress = tmp_path / "made"
    with open_workers(counting, 2, depth=4) as pool:
        items = pool.submit(Task("big", 40, size=200_000, progress=str(progress)))  # each item fills the pipe
        next(items)
        wait_for("the worker's lead", lambda: progress.exists() and int(progress.read_text()) >= 4, timeout=20)
        time.sleep(0.5)  # time enough to run further ahead, would it
        # read 1, one in the pipe, `depth` queued, one waiting for room: the work stops there
        assert int(progress.read_text()) <= 1 + 1 + 4 + 1
        assert sum(1 for _ in items) == 39
        with pytest.raises(ValueError, match="all 2 workers have a task"):
            pool.submit(Task("a", 1)), pool.submit(Task("b", 1)), pool.submit(Task("c", 1))


def test_a_tasks_exception_is_raised_where_its_items_are_read_and_the_worker_goes_on(monkeypatch):
    importable(monkeypatch)
    with open_workers(counting, 2) as pool:
        failing, other = pool.submit(Task("s3://hub/a.xml.gz", 2, then="parse")), pool.submit(Task("b", 2))
        read, error = _read(failing)
        assert [item[1] for item in read] == [0, 1]
        assert isinstance(error, ParseError) and (error.provider, error.file) == ("prov", "s3://hub/a.xml.gz")
        assert isinstance(error.__cause__, RemoteTraceback) and "in counting" in str(error.__cause__)
        assert [item[1] for item in other] == [0, 1]
        read, error = _read(pool.submit(Task("c", 1, then="unpicklable")))  # the failed task's worker takes it
        assert len(read) == 1 and type(error) is IngestError and error.message == "Unpicklable: holds a lambda"


def test_a_worker_that_dies_is_an_error_and_every_worker_is_reaped_however_the_pool_ends(monkeypatch):
    importable(monkeypatch)
    with open_workers(counting, 2) as pool:
        pids = pool.pids
        _, error = _read(pool.submit(Task("a", 1, then="die")))  # its last items may die with it
        assert error.retryable and "is gone (exit code -9" in error.message
    assert not any(alive(pid) for pid in pids)
    with pytest.raises(KeyError), open_workers(counting, 2) as pool:  # the reader stops early, on an error
        pids = pool.pids
        next(pool.submit(Task("big", 100, size=200_000)))  # its worker waits for room to send the rest
        raise KeyError("the reader failed")
    assert not any(alive(pid) for pid in pids)


def test_workers_that_cannot_start_say_so_where_they_are_first_needed():
    with open_workers(lambda task: [task], 2) as pool:  # a lambda cannot be sent to a worker
        with pytest.raises(IngestError, match="the worker processes could not start: .*pickle"):
            pool.submit("a")
        assert pool.ready and pool.pids == []


def test_workers_exit_by_themselves_when_the_pools_process_is_killed():
    code = f"""
import json, sys, time
sys.path.insert(0, {str(ROOT)!r})
from ingest_assets.core.workers import open_workers
from ingest_assets_tests.support.workers import Task, counting
with open_workers(counting, 2) as pool:
    busy = pool.submit(Task("big", 100, size=200_000))  # never read: its worker waits on a full pipe
    print(json.dumps(pool.pids), flush=True)
    time.sleep(120)
"""
    owner = Worker(code, {})
    try:
        pids = json.loads(owner.process.stdout.readline())
        assert all(alive(pid) for pid in pids)
        os.kill(owner.process.pid, signal.SIGKILL)  # the pool's process alone, not its process group
        owner.process.wait(30)
        wait_for("the orphaned workers' exit", lambda: not any(alive(pid) for pid in pids), timeout=20)
    finally:
        owner.kill()


def _read(items) -> tuple[list, Exception | None]:
    """A task's items up to its exception, and the exception (None when it ended well)."""
    read = []
    try:
        for item in items:
            read.append(item)
    except Exception as exc:
        return read, exc
    return read, None
