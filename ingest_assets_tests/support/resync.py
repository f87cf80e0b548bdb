"""The reference ResourceSync client (``resync-sync`` of the ``resync`` package) against our publisher and
server: :class:`Mirror` serves the resource sets with :class:`~ingest_assets.resourcesync.server.ResourceSyncApp`
over HTTP and brings a destination folder up to date with one set, as an operator would. :class:`Source` is a
source world of files whose every change is recorded and published; :class:`LateApp` serves it once it exists."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from ingest_assets.resourcesync.events import record_event
from ingest_assets.resourcesync.index import ResourceIndex
from ingest_assets.resourcesync.model import ResourceSet
from ingest_assets.resourcesync.publish import Publisher
from ingest_assets.resourcesync.server import ResourceSyncApp
from ingest_assets.storage import LocalStorage
from ingest_assets.storage.backends import Storage
from ingest_assets.storage.layout import resourcesync_key

RESYNC_SYNC = Path(sys.executable).with_name("resync-sync")


def tree(folder: Path) -> dict[str, bytes]:
    """{relative path: bytes} of every file below ``folder``."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def resync_sync(workdir: Path, *args: str) -> str:
    """Run ``resync-sync`` in ``workdir`` (where it keeps its state file); fail on any error it reports."""
    workdir.mkdir(exist_ok=True)
    done = subprocess.run([str(RESYNC_SYNC), *args], cwd=workdir, capture_output=True, text=True, timeout=60)
    output = done.stdout + done.stderr
    assert done.returncode == 0 and "Error" not in output, output
    return output


class Mirror:
    """A destination of the set ``name`` served, with every other set, at ``base`` (``http_server`` of the
    tests' conftest starts the server before the sets exist: their URLs hold its address)."""

    def __init__(self, http_server: Callable[..., str], workdir: Path, name: str):
        self._app: ResourceSyncApp | None = None
        self.base = http_server(app=lambda environ, start_response: self._app(environ, start_response))
        self.workdir, self.name = workdir, name
        self.folder = workdir / "mirror"
        self._since: str | None = None  # the Resource List ``at`` the destination is in sync with

    def sync(self, index: ResourceIndex, storage: Storage, sets: list[ResourceSet]) -> list[str]:
        """Publish ``sets`` and serve them; then a baseline (the first time) or every Change List since the
        previous sync, oldest first (resync reads one per run). Returns resync's outputs."""
        Publisher(index, storage, self.base).publish(sets)
        self._app = ResourceSyncApp(storage, sets)
        state = json.loads(storage.read_bytes(resourcesync_key(self.name, "changelists.json")))
        source = f"{self.base}/{self.name}/resources={self.folder}"
        if self._since is None:
            capabilities = f"{self.base}/{self.name}/capabilitylist.xml"  # the Source Description lists all sets
            outputs = [resync_sync(self.workdir, "-b", "--capabilitylist", capabilities, source)]
        else:
            outputs = [
                resync_sync(self.workdir, "-i", "--delete", "--changelist-uri", part["url"], source)
                for part in state["parts"]
                if part["from"] >= self._since
            ]
        self._since = state["resource_list_ats"][-1]
        return outputs

    def source_description(self, storage: Storage) -> str:
        return storage.read_bytes(resourcesync_key(".well-known", "resourcesync")).decode()


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


class LateApp:
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
