"""A server the whole pytest run shares, whether it runs in one process or in pytest-xdist workers (``-n 2``):
the first session that needs it starts it, the others reuse it, the last one still using it stops it.

    @pytest.fixture(scope="session")
    def thing_url(tmp_path_factory):
        with once_per_run("thing", tmp_path_factory, start_thing, stop_thing) as server:
            yield server["url"]

``start(folder)`` gets a fresh folder of the run's temporary tree and returns what the tests need to reach the
server (JSON: URL, port, pid, data folder); ``stop(that)`` must work from any worker's process, so a server
started by ``start`` runs in its own process group (``start_new_session=True``) and is stopped through it
(:func:`support.stop_pid`), never through a ``Popen`` object only one worker holds. State that tests write into a shared
server must be kept apart per test or per worker (a database, index prefix or graph name of their own).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

from ingest_assets_tests.support import alive

Server = dict[str, Any]


def worker_id() -> str:
    """``gw0``, ``gw1``, ... in an xdist worker; ``main`` in a plain run."""
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The temporary folder of this whole run: the workers' common parent under xdist, the base folder otherwise."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if "PYTEST_XDIST_WORKER" in os.environ else base


@contextmanager
def once_per_run(name: str, tmp_path_factory: pytest.TempPathFactory, start: Callable[[Path], Server],
                 stop: Callable[[Server], None]) -> Iterator[Server]:
    """Yield the run's ``name`` server (see the module docstring), counting this session among its users."""
    root = run_folder(tmp_path_factory)
    state, lock = root / f"{name}.server.json", FileLock(str(root / f"{name}.server.lock"))
    me = os.getpid()
    with lock:  # a worker that died without leaving is no longer a user
        shared = json.loads(state.read_text()) if state.exists() else None
        if shared is None or not [pid for pid in shared["users"] if alive(pid)]:
            if shared is not None:
                stop(shared["server"])  # left behind by workers that were killed
            shared = {"server": start(Path(tempfile.mkdtemp(prefix=f"{name}-", dir=root))), "users": []}
        shared["users"] = [pid for pid in shared["users"] if alive(pid)] + [me]
        state.write_text(json.dumps(shared))
    try:
        yield shared["server"]
    finally:
        with lock:
            shared = json.loads(state.read_text())
            shared["users"] = [pid for pid in shared["users"] if pid != me and alive(pid)]
            if shared["users"]:
                state.write_text(json.dumps(shared))
            else:
                state.unlink()
                stop(shared["server"])
