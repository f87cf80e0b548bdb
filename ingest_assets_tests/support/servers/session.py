"""The live servers of one test run, shared by every pytest process of it (the pytest-xdist workers): each server is
started once, by the first process that needs it, under a lock in the run's folder, and recorded there as JSON for
the others; the process that owns the run (the xdist controller, or the only process) stops them all at its end.

Starting is lazy and parallel: nothing starts until a test needs a live server; then every server the run's
selected tests need starts at once in background threads (downloads and JVM start-ups overlap), and a test waits
only for the one it uses.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from ingest_assets_tests.support import locked
from ingest_assets_tests.support.servers import Server, Unavailable, stop_launched

RUN_FOLDER = "INGEST_LIVE_RUN"  # environment variable: the run's folder, inherited by the xdist workers


def open_run() -> Path:
    """A fresh folder for this run's servers, named in the environment for the worker processes to come."""
    folder = Path(tempfile.mkdtemp(prefix="ingest-live-run-"))
    os.environ[RUN_FOLDER] = str(folder)
    return folder


def run_folder() -> Path:
    folder = os.environ.get(RUN_FOLDER)
    return Path(folder) if folder else open_run()


def recorded(folder: Path) -> dict[str, dict]:
    """What the run's servers recorded: per name, the server's record or ``{"error": ...}``."""
    return {path.stem: json.loads(path.read_text()) for path in sorted(folder.glob("*.json"))}


def close_run(folder: Path) -> None:
    """Stop every server the run started (together: each may take seconds to shut down) and forget the folder."""
    servers = [Server.from_record(r) for r in recorded(folder).values() if "pid" in r]
    with ThreadPoolExecutor(max(len(servers), 1)) as pool:
        list(pool.map(Server.stop, servers))
    shutil.rmtree(folder, ignore_errors=True)


class LiveServers:
    """The run's live servers by name (``starters``: name -> a function starting that server). :meth:`start`
    begins getting servers in background threads; :meth:`get` waits for one. A server that could not start is not
    tried again in the run: its :class:`Unavailable` is raised to every caller, in every process."""

    def __init__(self, folder: Path, starters: dict[str, Callable[[], Server]]):
        self.folder = folder
        self._starters = starters
        self._results: dict[str, Server | Unavailable] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._lock = threading.Lock()

    def start(self, *names: str) -> None:
        with self._lock:
            for name in names:
                if name not in self._threads:
                    self._threads[name] = threading.Thread(target=self._run, args=(name,), daemon=True)
                    self._threads[name].start()

    def get(self, name: str) -> Server:
        self.start(name)
        self._threads[name].join()
        result = self._results[name]
        if isinstance(result, Unavailable):
            raise result
        return result

    @contextmanager
    def exclusive(self, what: str) -> Iterator[None]:
        """No other process of the run holds ``what`` meanwhile (tests that use a server's fixed names, such as
        the ResourceSync indices, on a server every worker shares)."""
        with locked(self.folder / f"{what}.use.lock"):
            yield

    def wait_started(self) -> None:
        """Wait until every server this process began getting is ready (and recorded) or has failed."""
        for thread in list(self._threads.values()):
            thread.join()

    def abandon_starting(self) -> None:
        """Stop the servers this process launched that are not ready yet (nobody else knows of them: the run's
        owner stops only recorded servers)."""
        stop_launched(keep={result.pid for result in self._results.values() if isinstance(result, Server)})

    def _run(self, name: str) -> None:
        try:
            self._results[name] = self._shared(name)
        except Unavailable as err:
            self._results[name] = err
        except Exception as err:  # noqa: BLE001 - reported to the test that needs the server
            self._results[name] = Unavailable(f"{name} failed to start: {err!r}")

    def _shared(self, name: str) -> Server:
        state = self.folder / f"{name}.json"
        with locked(self.folder / f"{name}.lock"):
            if state.exists():
                record = json.loads(state.read_text())
                if "error" in record:
                    raise Unavailable(record["error"])
                return Server.from_record(record)
            began = time.monotonic()
            try:
                server = self._starters[name]()
            except Exception as err:
                _write(state, {"error": str(err) if isinstance(err, Unavailable) else f"{name}: {err!r}"})
                raise
            server.facts["seconds"] = round(time.monotonic() - began, 1)
            _write(state, server.record())
            return server


def _write(path: Path, record: dict) -> None:
    partial = path.with_suffix(".part")
    partial.write_text(json.dumps(record))
    partial.replace(path)
