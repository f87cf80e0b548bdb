"""Embedded repository on an OCFL storage root (ocfl-py): one OCFL object per repository object.

Every update is a new OCFL version holding ``DC.xml`` (oai_dc) and ``RELS-EXT.ttl`` (DC + K2N +
relations). A delete is a new version holding only ``TOMBSTONE``; history is never rewritten.

Atomicity on OCFL, exactly: a transaction left by an exception writes nothing (its work is only
buffered). Its commit is not atomic: OCFL has no multi-object transactions, so the work is written
object by object (per PID only the last ``put``/``delete`` counts), first every new or updated object,
then the deletes. A failure part-way leaves some objects updated and the old ones still there - never
members deleted with their replacements missing - and writing the same work again completes it. One
object's version is not atomic either: ocfl-py writes the version's files, then rewrites the object's
root inventory in place. A version directory the root inventory does not name (a crash before that
rewrite) is removed before the object's next write; a crash during the rewrite, or while a new object is
created (ocfl-py writes its inventory before its content), leaves that object damaged, and this store
does not repair it.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import ocfl

from ingest_assets.repository.model import RepositoryObject
from ingest_assets.repository.backend import ObjectGone, ObjectNotFound, Repository, RepositoryError, Transaction

LAYOUT = "0003-hash-and-id-n-tuple-storage-layout"
TOMBSTONE = "TOMBSTONE"
METADATA = "RELS-EXT.ttl"


class OcflTransaction(Transaction):
    def __init__(self, repository: "OcflRepository"):
        self.repository = repository
        self.work: dict[str, RepositoryObject | None] = {}  # pid -> object to write, None: delete

    def put(self, obj: RepositoryObject) -> None:
        self.work[obj.pid] = obj

    def delete(self, pid: str) -> None:
        self.work[pid] = None

    def keep_alive(self) -> None:
        """Nothing expires in an embedded store."""


class OcflRepository(Repository):
    def __init__(self, root: Path | str, *, agent: str = "ingest-assets"):
        self.root = Path(root)
        self.agent = agent
        self.storage = ocfl.StorageRoot(root=str(self.root), layout_name=LAYOUT)
        if not any(self.root.glob("0=ocfl_*")):
            if self.root.exists() and any(self.root.iterdir()):
                raise RepositoryError(f"{self.root} exists but is not an OCFL storage root", file=str(self.root))
            if self.root.exists():
                self.root.rmdir()
            self.root.parent.mkdir(parents=True, exist_ok=True)
            self.storage.initialize()

    @contextmanager
    def transaction(self) -> Iterator[OcflTransaction]:
        tx = OcflTransaction(self)
        yield tx
        for item in tx.work.values():
            if item is not None:
                self._write(item.pid, {"DC.xml": item.dc_xml(), METADATA: item.to_turtle()}, f"update {item.pid}")
        for pid, item in tx.work.items():
            if item is None and self.exists(pid):
                stamp = datetime.now(timezone.utc).isoformat()
                self._write(pid, {TOMBSTONE: json.dumps({"deleted": stamp}).encode()}, f"delete {pid}")

    def object_dir(self, pid: str) -> Path:
        return self.root / self.storage.object_path(pid)

    def versions(self, pid: str) -> list[str]:
        inventory = self._inventory(pid)
        return sorted(inventory["versions"], key=lambda v: int(v[1:])) if inventory else []

    def exists(self, pid: str) -> bool:
        state = self._state(pid)
        return bool(state) and TOMBSTONE not in state

    def get(self, pid: str) -> RepositoryObject:
        state = self._state(pid)
        if not state:
            raise ObjectNotFound("no such object", record=pid)
        if TOMBSTONE in state:
            raise ObjectGone("object was deleted (tombstone)", record=pid)
        return RepositoryObject.from_turtle(state[METADATA].read_bytes(), pid)

    def _inventory(self, pid: str) -> dict | None:
        path = self.object_dir(pid) / "inventory.json"
        return json.loads(path.read_text()) if path.exists() else None

    def _state(self, pid: str) -> dict[str, Path]:
        """Logical path -> content file of the head version ({} if the object does not exist)."""
        inventory = self._inventory(pid)
        if not inventory:
            return {}
        where = {digest: paths[0] for digest, paths in inventory["manifest"].items()}
        state = inventory["versions"][inventory["head"]]["state"]
        return {logical: self.object_dir(pid) / where[digest] for digest, paths in state.items() for logical in paths}

    def _write(self, pid: str, files: dict[str, bytes], message: str) -> None:
        objdir = self.object_dir(pid)
        inventory = self._inventory(pid)
        if inventory is None and objdir.exists():
            shutil.rmtree(objdir)  # a crash interrupted the object's creation
        elif inventory is not None:
            for leftover in objdir.glob("v*"):
                if leftover.is_dir() and leftover.name not in inventory["versions"]:
                    shutil.rmtree(leftover)  # a crash interrupted a version
        metadata = ocfl.VersionMetadata(created=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                                        message=message, name=self.agent)
        with tempfile.TemporaryDirectory(prefix="ocfl-version-") as srcdir:
            for name, data in files.items():
                (Path(srcdir) / name).write_bytes(data)
            try:
                if inventory is None:
                    objdir.parent.mkdir(parents=True, exist_ok=True)
                    ocfl.Object(identifier=pid).create(srcdir=srcdir, metadata=metadata, objdir=str(objdir))
                else:
                    ocfl.Object(identifier=pid).add_version_with_content(objdir=str(objdir), srcdir=srcdir,
                                                                         metadata=metadata)
            except (ocfl.ObjectException, ocfl.NewVersionException, OSError) as exc:
                raise RepositoryError(f"OCFL write failed: {exc}", file=str(objdir), record=pid) from exc
