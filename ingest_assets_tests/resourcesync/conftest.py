"""ResourceSync fixtures: a source world (files + index + server + publisher) and the reference client (the live
search servers come from the root conftest's ``search_server``)."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace

import pytest

from ingest_assets.resourcesync.events import record_event
from ingest_assets.resourcesync.model import ResourceSet
from ingest_assets.resourcesync.publish import Publisher
from ingest_assets.resourcesync.server import ResourceSyncApp
from ingest_assets.resourcesync.sql_index import SqlResourceIndex
from ingest_assets.core.sql import make_engine
from ingest_assets.storage import LocalStorage
from ingest_assets_tests.support import resync as support_resync

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)


class Source:
    """Files under ``root`` whose every change is recorded as an event and published for ``base``."""

    def __init__(self, tmp: Path, base: str, index, name: str = "set1", clock=None, **publisher):
        self.root = tmp / f"{name}-root"
        self.root.mkdir(parents=True, exist_ok=True)
        self.index = index
        self.storage = LocalStorage(tmp / "storage")
        self.base = base
        self.set = ResourceSet(name, f"{base}/{name}/resources/", str(self.root))
        self.publisher = Publisher(index, self.storage, base, **({"clock": clock} if clock else {}), **publisher)

    def put(self, rel: str, data: bytes, when: datetime, links=(), recorded: datetime | None = None,
            mime: str = "text/plain") -> None:
        path = self.root / rel
        change = "updated" if path.exists() else "created"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        record_event(
            self.index,
            self.set,
            str(path),
            change,
            when,
            when,
            length=len(data),
            md5=hashlib.md5(data).hexdigest(),
            sha256=hashlib.sha256(data).hexdigest(),
            mime=mime,
            links=links,
            timestamp=recorded,
        )

    def delete(self, rel: str, when: datetime, recorded: datetime | None = None) -> None:
        (self.root / rel).unlink()
        record_event(self.index, self.set, rel, "deleted", None, when, timestamp=recorded)

    def publish(self) -> dict:
        return self.publisher.publish([self.set])[self.set.name]

    def state(self) -> dict:
        return json.loads(self.storage.read_bytes(f"_resourcesync/{self.set.name}/changelists.json"))


@pytest.fixture
def source(tmp_path, http_server):
    """A published source with an embedded (SQLite) index, served over HTTP on 127.0.0.1."""

    def make(name: str = "set1", index=None, **publisher) -> Source:
        holder = {}
        app = _LateApp(holder)
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


class _LateApp:
    """The server starts before the source exists (its URL is part of the documents). ``paths`` logs every
    request's path; ``before(path)`` may return an HTTP status to answer with instead."""

    def __init__(self, holder):
        self.holder = holder
        self.paths: list[str] = []
        self.before = None

    def __call__(self, environ, start_response):
        self.paths.append(environ["PATH_INFO"])
        status = self.before(environ["PATH_INFO"]) if self.before else None
        if status:
            start_response(f"{status} Injected", [("Content-Type", "text/plain")])
            return [b"injected failure"]
        return self.holder["app"](environ, start_response)


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
