"""List (and hash) the files inside a downloaded zip/tar bundle without trusting it or extracting it.

Bundles are hostile input: the checks of :mod:`ingest_assets.core.archives` apply, and the first bad entry refuses
the whole bundle (``bundle-unsafe``). Links that stay inside the bundle are listed with their target.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ingest_assets.core.archives import Limits, members
from ingest_assets.datasets.file_types import HEAD_BYTES, file_type
from ingest_assets.datasets.hashing import Digests, hash_file
from ingest_assets.datasets.status import DatasetIngestFailure
from ingest_assets.core.errors import ArchiveError


@dataclass(frozen=True)
class BundleEntry:
    path: str
    digests: Digests | None  # None for an in-bundle symlink
    link_target: str | None = None
    mimetype: str | None = None  # its own, by name or first bytes (never the bundle's)


class _Head(io.RawIOBase):
    """A member's stream, keeping its first :data:`HEAD_BYTES` as they are read through."""

    def __init__(self, stream: BinaryIO):
        self.stream, self.head = stream, b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        read = self.stream.readinto(buffer)
        if len(self.head) < HEAD_BYTES:
            self.head += bytes(memoryview(buffer)[: min(read, HEAD_BYTES - len(self.head))])
        return read


def _entry(member) -> BundleEntry:
    if member.stream is None:
        return BundleEntry(member.name, None, member.link)
    stream = _Head(member.stream)
    digests = hash_file(stream)
    return BundleEntry(member.name, digests, member.link, file_type(member.name, stream.head))


def list_bundle(path: Path, limits: Limits, name: str | None = None) -> list[BundleEntry]:
    """Entries of a zip or tar (any compression) with their digests and media types, in bundle order."""
    label = name or path.name
    try:
        return [_entry(member) for member in members(path, limits, label=label, links=True)]
    except ArchiveError as exc:
        raise DatasetIngestFailure("bundle-unsafe", f"bundle {label}: {exc.message}") from exc
