"""Embedded repository on an OCFL storage root (ocfl-py): one OCFL object per repository object.

Every update is a new OCFL version holding ``DC.xml`` (oai_dc) and ``RELS-EXT.ttl`` (DC + K2N +
relations). A delete is a new version holding only ``TOMBSTONE``; history is never rewritten.
Transactions buffer their work and write it on commit; a version left half-written by a crash
(a version directory the root inventory does not name) is removed before the next write.
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
from ingest_assets.repository.store import ObjectGone, ObjectNotFound, RepositoryError

LAYOUT = "0003-hash-and-id-n-tuple-storage-layout"
TOMBSTONE = "TOMBSTONE"
METADATA = "RELS-EXT.ttl"


class OcflTransaction:
    def __init__(self, repository: "OcflRepository"):
        self.repository = repository
        self.work: list[tuple[str, RepositoryObject | str]] = []

    def put(self, obj: RepositoryObject) -> None:
        self.work.append(("put", obj))

    def delete(self, pid: str) -> None:
        self.work.append(("delete", pid))

    def keep_alive(self) -> None:
        """Nothing expires in an embedded store."""


class OcflRepository:
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
        for action, item in tx.work:
            if action == "put":
                self._write(item.pid, {"DC.xml": item.dc_xml(), METADATA: item.to_turtle()}, f"update {item.pid}")
            elif self._state(item) and TOMBSTONE not in self._state(item):
                stamp = datetime.now(timezone.utc).isoformat()
                self._write(item, {TOMBSTONE: json.dumps({"deleted": stamp}).encode()}, f"delete {item}")

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
