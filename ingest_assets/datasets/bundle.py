"""List (and hash) the files inside a downloaded zip/tar bundle without trusting it or extracting it.

Bundles are hostile input: the checks of :mod:`ingest_assets.core.archives` apply, and the first bad entry refuses
the whole bundle (``bundle-unsafe``). Links that stay inside the bundle are listed with their target.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ingest_assets.core.archives import Limits, members
from ingest_assets.datasets.hashing import Digests, hash_file
from ingest_assets.datasets.status import DatasetIngestFailure
from ingest_assets.core.errors import ArchiveError


@dataclass(frozen=True)
class BundleEntry:
    path: str
    digests: Digests | None  # None for an in-bundle symlink
    link_target: str | None = None


def list_bundle(path: Path, limits: Limits, name: str | None = None) -> list[BundleEntry]:
    """Entries of a zip or tar (any compression) with their digests, in bundle order."""
    label = name or path.name
    try:
        return [
            BundleEntry(member.name, hash_file(member.stream) if member.stream else None, member.link)
            for member in members(path, limits, label=label, links=True)
        ]
    except ArchiveError as exc:
        raise DatasetIngestFailure("bundle-unsafe", f"bundle {label}: {exc.message}") from exc
