"""Work for the worker pool's tests (:mod:`ingest_assets.core.workers`): a picklable callable a worker process imports
by name, which counts, sleeps, fails or dies as its task says."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from ingest_assets.core.errors import ParseError


@dataclass(frozen=True)
class Task:
    name: str
    count: int
    seconds: float = 0.0  # slept before the first item
    size: int = 0  # bytes of padding in each item (large items fill the pipe to the reader)
    progress: str | None = None  # a file that holds how many items the work has made so far
    then: str | None = None  # after the items: "parse" (a ParseError), "unpicklable", "die" (SIGKILL itself)


class Unpicklable(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.callback = lambda: None


def counting(task: Task):
    """``task.count`` items ``(name, n, pid, padding)``, then what ``task.then`` says."""
    time.sleep(task.seconds)
    for n in range(task.count):
        if task.progress:  # replaced whole: a reader never sees it half written
            Path(f"{task.progress}.new").write_text(str(n + 1))
            os.replace(f"{task.progress}.new", task.progress)
        yield task.name, n, os.getpid(), b"x" * task.size
    if task.then == "parse":
        raise ParseError("not well-formed XML after record #3", provider="prov", file=task.name)
    if task.then == "unpicklable":
        raise Unpicklable("holds a lambda")
    if task.then == "die":
        os.kill(os.getpid(), signal.SIGKILL)


def worker_pids() -> set[int]:
    """The live processes this process's fork server has started (the workers of its pools)."""
    servers = [child for child in psutil.Process().children() if "forkserver" in " ".join(_command(child))]
    return {worker.pid for server in servers for worker in server.children() if worker.is_running()}


def _command(process: psutil.Process) -> list[str]:
    try:
        return process.cmdline()
    except psutil.Error:
        return []
