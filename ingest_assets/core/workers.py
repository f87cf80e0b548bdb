"""Work done in worker processes and read back in the order it was given, memory bounded (a delivery of many files
read on every core, its records in the delivery's order).

    with open_workers(work, workers=4) as pool:      # work(task) yields picklable items; work itself is picklable
        first = pool.submit(task_a)                   # at most ``workers`` tasks submitted and not yet read to the end
        second = pool.submit(task_b)
        for item in first: ...                        # task_a's items as its worker makes them
        for item in second: ...

Each worker is a process of the ``forkserver`` context (forked from a clean single-threaded server, never from the
caller's threads; the module of ``work`` is imported there once) that reads one task at a time and sends its items
through a pipe only it writes, at most ``depth`` items ahead of the reader: memory stays bounded by ``workers *
depth`` items whatever the input. An exception a task raises is raised again where its items are read, the
worker's traceback as its cause; a worker that dies (killed, out of memory) is an :class:`IngestError` there.
Closing the pool, also on an error or when the reader stops early, stops and reaps every worker; a worker whose
pool's process is gone exits by itself (its pipes break). The workers start in the background (the fork server's
start imports the work's module, about a second of CPU the first time): until ``pool.ready``, a caller may do the
work itself. With ``workers=1`` the tasks run in this process, each as its items are read: the same interface, no
process.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import queue
import signal
import threading
import traceback
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from typing import Any

from ingest_assets.core.errors import IngestError

Work = Callable[[Any], Iterable[Any]]
ITEM, DONE, FAILED = 0, 1, 2  # what a worker sends: one of a task's items, its end, or the exception it raised
DEFAULT_DEPTH = 32  # items a worker holds ahead of the reader (a file harvest: chunks of records)
STOP_SECONDS = 10  # a worker told to stop is killed after this long


def default_workers(tasks: int) -> int:
    """Worker processes for ``tasks`` independent tasks: the CPUs this process may run on, at most one per task."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(cpus, tasks))


class RemoteTraceback(Exception):
    """The traceback of an exception raised in a worker process (the cause of the one raised again here)."""

    def __str__(self) -> str:
        return self.args[0]


class InProcess:
    """``workers=1``: each task runs in this process, lazily, as its items are read."""

    workers, ready = 1, True

    def __init__(self, work: Work):
        self.work = work

    def submit(self, task: Any) -> Iterator[Any]:
        return iter(self.work(task))

    def close(self) -> None:
        pass


class WorkerPool:
    """``workers`` processes running ``work``; see the module's docstring. They start in the background: until
    :attr:`ready`, the caller may do its work itself rather than wait."""

    def __init__(self, work: Work, workers: int, depth: int = DEFAULT_DEPTH):
        self.workers, self.idle, self.all = workers, deque(), []
        self._failed: BaseException | None = None
        self._starting = threading.Thread(target=self._start, args=(work, depth), name="worker pool start", daemon=True)
        self._starting.start()

    def _start(self, work: Work, depth: int) -> None:
        context = multiprocessing.get_context("forkserver")
        # imported once, in the server (when this starts it): the main module, as by default, and the work's
        context.set_forkserver_preload(["__main__", work.__module__])
        try:
            for _ in range(self.workers):
                worker = _Worker(context, work, depth)
                self.all.append(worker)
                self.idle.append(worker)
        except BaseException as exc:  # raised where the workers are first needed
            self._failed = exc

    @property
    def ready(self) -> bool:
        """Whether the workers have started (or failed to, which :meth:`submit` raises)."""
        return not self._starting.is_alive()

    def _started(self) -> None:
        self._starting.join()
        if self._failed is not None:
            raise IngestError(f"the worker processes could not start: {self._failed!r}") from self._failed

    def submit(self, task: Any) -> Iterator[Any]:
        """The items of ``task``, from the next idle worker (a ValueError when every worker has a task not yet read
        to its end)."""
        self._started()
        if not self.idle:
            raise ValueError(f"all {self.workers} workers have a task not yet read")
        worker = self.idle.popleft()
        try:
            worker.tasks.send(task)
        except OSError as exc:  # its end of the pipe is closed: it is gone
            raise worker.gone() from exc
        return self._items(worker)

    def _items(self, worker: _Worker) -> Iterator[Any]:
        while True:
            kind, payload = worker.receive()
            if kind == ITEM:
                yield payload
                continue
            self.idle.append(worker)
            if kind == DONE:
                return
            error, remote = payload
            raise error from RemoteTraceback(remote)

    def close(self) -> None:
        """Stop every worker (one busy with a task at once, an idle one when it has read the end of its tasks) and
        reap it."""
        self._starting.join()
        for worker in self.all:
            worker.stop(busy=worker not in self.idle)
        self.all, self.idle = [], deque()

    @property
    def pids(self) -> list[int]:
        self._starting.join()
        return [worker.process.pid for worker in self.all]


@contextmanager
def open_workers(work: Work, workers: int, depth: int = DEFAULT_DEPTH) -> Iterator[WorkerPool | InProcess]:
    """A :class:`WorkerPool` of ``workers`` processes (:class:`InProcess` for one, or inside a daemonic process,
    which may not start any), closed when the block ends however it ends."""
    pool = InProcess(work) if workers <= 1 or multiprocessing.current_process().daemon else WorkerPool(work, workers, depth)
    try:
        yield pool
    finally:
        pool.close()


class _Worker:
    def __init__(self, context, work: Work, depth: int):
        task_reader, self.tasks = context.Pipe(duplex=False)
        self.results, result_writer = context.Pipe(duplex=False)
        self.process = context.Process(target=_serve, args=(work, task_reader, result_writer, depth), daemon=True,
                                       name="ingest-assets worker")
        try:
            self.process.start()
        except BaseException:
            self.tasks.close()
            self.results.close()
            raise
        finally:  # the worker holds the other ends alone: its death is the end of its results, ours of its tasks
            task_reader.close()
            result_writer.close()

    def receive(self) -> tuple[int, Any]:
        try:
            return pickle.loads(self.results.recv_bytes())
        except (EOFError, OSError) as exc:
            raise self.gone() from exc

    def gone(self) -> IngestError:
        self.process.join(1)
        return IngestError(f"a worker process (pid {self.process.pid}) is gone (exit code {self.process.exitcode}: "
                           "killed, or out of memory?)", retryable=True)

    def stop(self, busy: bool) -> None:
        self.tasks.close()  # an idle worker reads the end of its tasks and exits
        if busy:
            self.process.terminate()
        self.process.join(STOP_SECONDS)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.results.close()
        self.process.close()


def _serve(work: Work, tasks: Connection, results: Connection, depth: int) -> None:
    """A worker: each task's items, pickled here, go to a sender thread through a queue of ``depth``, so the work
    goes on while the reader reads another worker's items."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group: the pool decides
    outbox: queue.Queue[bytes] = queue.Queue(depth)
    threading.Thread(target=_send, args=(outbox, results), daemon=True).start()
    while True:
        try:
            task = tasks.recv()
        except EOFError:  # the pool is closed (or its process gone)
            break
        try:
            for item in work(task):
                outbox.put(pickle.dumps((ITEM, item), pickle.HIGHEST_PROTOCOL))
            outbox.put(pickle.dumps((DONE, None)))
        except Exception as exc:
            outbox.put(pickle.dumps((FAILED, _portable(exc)), pickle.HIGHEST_PROTOCOL))
    outbox.join()  # sent, or the sender has ended the process


def _send(outbox: queue.Queue, results: Connection) -> None:
    while True:
        data = outbox.get()
        try:
            results.send_bytes(data)
        except OSError:  # nobody reads any more: the pool's process is gone
            os._exit(1)
        outbox.task_done()


def _portable(exc: Exception) -> tuple[Exception, str]:
    """``exc`` as it can cross to the pool's process (else an :class:`IngestError` saying what it was) and its
    traceback."""
    remote = "".join(traceback.format_exception(exc))
    try:
        pickle.loads(pickle.dumps(exc))
        return exc, remote
    except Exception:
        return IngestError(f"{type(exc).__name__}: {exc}"), remote
