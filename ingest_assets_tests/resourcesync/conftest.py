"""ResourceSync fixtures: a source world (:class:`support.resync.Source`: files + index + server + publisher)
and the reference client; the search servers are the root conftest's ``es``, each test alone with the fixed
``resourcesync-*`` indices among the run's processes."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import pytest

from ingest_assets.resourcesync.server import ResourceSyncApp
from ingest_assets.resourcesync.sql_index import SqlResourceIndex
from ingest_assets.core.sql import make_engine
from ingest_assets_tests.support import resync as support_resync
from ingest_assets_tests.support.resync import LateApp, Source

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)


@pytest.fixture
def source(tmp_path, http_server):
    """A published source with an embedded (SQLite) index, served over HTTP on 127.0.0.1."""

    def make(name: str = "set1", index=None, **publisher) -> Source:
        holder = {}
        app = LateApp(holder)
        base = http_server(app=app)
        src = Source(
            tmp_path,
            base,
            index or SqlResourceIndex(make_engine(f"sqlite:///{tmp_path}/index.sqlite3")),
            name,
            **publisher,
        )
        holder["app"] = ResourceSyncApp(src.storage, [src.set])
        src.server = app
        return src

    return make


# -- the reference client ------------------------------------------------------------------------------


@pytest.fixture
def tree():
    """``tree(folder)`` -> {relative path: bytes} of every file below ``folder``."""
    return support_resync.tree


@pytest.fixture
def resync():
    """``resync(workdir, *args)`` runs the resync package's ``resync-sync`` client and returns its output."""
    return support_resync.resync_sync


@pytest.fixture
def es(es, search_backend, live_servers):
    """The root's ``es``: the live server behind the recording proxy, its ``resourcesync-*`` indices (fixed names)
    used by no other process of the run (an xdist worker) while the test runs."""
    with live_servers.exclusive(f"{search_backend}-fixed-names"):
        yield es
        es.close()  # its indices deleted before another process may create them


@pytest.fixture
def t0() -> datetime:
    return T0


@pytest.fixture
def fixed_clock():
    """A clock that advances one second per call, from 2026-01-06 12:00 UTC."""
    state = {"now": datetime(2026, 1, 6, 12, 0, tzinfo=timezone.utc)}

    def clock() -> datetime:
        state["now"] += timedelta(seconds=1)
        return state["now"]

    return SimpleNamespace(clock=clock, state=state)
