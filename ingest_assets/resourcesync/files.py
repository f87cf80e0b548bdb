"""Where the files of a resource set live: one rule for the feeds that write them and the server.

A set with a ``root`` (a directory or storage URL) keeps its files there. A set without one (a record
provider's set) keeps them in the platform storage under ``_resourcesync/<set>/resources/``
(:func:`~ingest_assets.storage.layout.resourcesync_resource_key`). Either way the file at the relative
path ``p`` is the ``rel_path`` location ``p``, published as ``<url_prefix><p>`` and served by
:mod:`.server` at ``/<set>/resources/<p>``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ingest_assets.resourcesync.model import ResourceSet
from ingest_assets.storage import open_storage
from ingest_assets.storage.backends import LocalStorage, Storage, check_key
from ingest_assets.storage.layout import resourcesync_key, resourcesync_resource_key


@dataclass(frozen=True)
class ResourceFiles:
    """The files of one set: ``storage`` holds them, below ``set_name``'s storage area when given."""

    storage: Storage
    set_name: str | None = None

    @classmethod
    def of(cls, storage: Storage, resource_set: ResourceSet) -> "ResourceFiles":
        """The set's ``root`` when it has one, else its area of the platform ``storage``."""
        if resource_set.root:
            return cls(open_storage(resource_set.root))
        return cls(storage, resource_set.name)

    def key(self, path: str) -> str:
        """The storage key of the relative path ``path`` (ValueError if it is not canonical)."""
        return resourcesync_resource_key(self.set_name, path) if self.set_name else check_key(path)

    def write(self, path: str, data: bytes) -> None:
        """Write (or replace) the file atomically."""
        self.storage.write_bytes(self.key(path), data, overwrite=True)

    def write_file(self, path: str, local_path: Path) -> None:
        """Write (or replace) the file atomically with a local file's content."""
        self.storage.write_file(self.key(path), local_path, overwrite=True)

    def delete(self, path: str) -> None:
        """Remove the file (nothing to do when it is already gone)."""
        self.storage.delete(self.key(path))

    def open_read(self, path: str) -> BinaryIO:
        """Open the file for reading; LookupError for a local path that a symbolic link leads outside."""
        key = self.key(path)
        if isinstance(self.storage, LocalStorage):
            area = self.storage.root
            if self.set_name:
                area = self.storage.uri(resourcesync_key(self.set_name, "resources"))
            if not os.path.realpath(self.storage.uri(key)).startswith(os.path.realpath(area) + os.sep):
                raise LookupError(key)
        return self.storage.open_read(key)
