"""List (and hash) the files inside a downloaded zip/tar bundle without trusting it or extracting it.

Bundles are hostile input: absolute or ``..`` paths, links pointing outside the bundle, device files,
duplicate names, encrypted entries, too many entries, too many bytes and zip-bomb ratios are refused.
"""

from __future__ import annotations

import posixpath
import stat
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ingest_assets.datasets.hashing import Digests, hash_file
from ingest_assets.datasets.status import DatasetIngestFailure


@dataclass(frozen=True)
class BundleLimits:
    max_entries: int = 10_000
    max_total_size: int = 64 * 1024**3
    max_ratio: int = 200  # uncompressed/compressed: zip entries above 1 MiB, a tar's content above 1 MiB in all


@dataclass(frozen=True)
class BundleEntry:
    path: str
    digests: Digests | None  # None for an in-bundle symlink
    link_target: str | None = None


def _unsafe(bundle: str, message: str) -> DatasetIngestFailure:
    return DatasetIngestFailure("bundle-unsafe", f"bundle {bundle}: {message}")


def safe_member_path(name: str) -> str | None:
    """The normalised relative path, or None if ``name`` is absolute, escapes, or is otherwise hostile."""
    if not name or "\x00" in name or "\\" in name or name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return None
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        return None
    return "/".join(parts)


def _inside(path: str, target: str) -> bool:
    if target.startswith("/") or "\\" in target:
        return False
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    return not (resolved == ".." or resolved.startswith("../"))


def _hash_limited(handle: BinaryIO, limit: int, bundle: str, path: str) -> Digests:
    try:
        return hash_file(handle, limit=limit)
    except OverflowError as exc:
        raise _unsafe(bundle, f"{path} expands beyond the size limit") from exc


def list_bundle(path: Path, limits: BundleLimits, name: str | None = None) -> list[BundleEntry]:
    """Entries of a zip or tar (any compression) with their digests, in bundle order."""
    label = name or path.name
    if zipfile.is_zipfile(path):
        entries = _zip_entries(path, limits, label)
    else:
        try:
            is_tar = tarfile.is_tarfile(path)
        except (OSError, tarfile.TarError):
            is_tar = False
        if not is_tar:
            raise _unsafe(label, "is neither a zip nor a tar file")
        entries = _tar_entries(path, limits, label)
    seen: set[str] = set()
    result = []
    for entry in entries:
        if entry.path in seen:
            raise _unsafe(label, f"duplicate entry {entry.path!r}")
        seen.add(entry.path)
        result.append(entry)
        if len(result) > limits.max_entries:
            raise _unsafe(label, f"more than {limits.max_entries} entries")
    return result


def _zip_entries(path: Path, limits: BundleLimits, label: str) -> Iterator[BundleEntry]:
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
            if len(infos) > limits.max_entries:
                raise _unsafe(label, f"{len(infos)} entries > {limits.max_entries}")
            if sum(i.file_size for i in infos) > limits.max_total_size:
                raise _unsafe(label, f"declares more than {limits.max_total_size} uncompressed bytes")
            remaining = limits.max_total_size
            for info in infos:
                member = safe_member_path(info.filename)
                if member is None:
                    raise _unsafe(label, f"unsafe entry name {info.filename!r}")
                if info.is_dir():
                    continue
                if info.flag_bits & 0x1:
                    raise _unsafe(label, f"{member} is encrypted")
                mode = info.external_attr >> 16
                if stat.S_ISLNK(mode):
                    target = archive.read(info)[:4096].decode("utf-8", "replace")
                    if not _inside(member, target):
                        raise _unsafe(label, f"link {member} -> {target!r} points outside the bundle")
                    yield BundleEntry(member, None, target)
                    continue
                if stat.S_IFMT(mode) not in (0, stat.S_IFREG):  # 0: no Unix type recorded
                    raise _unsafe(label, f"{member} is not a regular file")
                if info.file_size > 1024 * 1024 and info.file_size > limits.max_ratio * max(info.compress_size, 1):
                    raise _unsafe(label, f"{member} compression ratio is beyond {limits.max_ratio}")
                with archive.open(info) as handle:
                    digests = _hash_limited(handle, min(info.file_size, remaining), label, member)
                remaining -= digests.size
                yield BundleEntry(member, digests)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError) as exc:
        raise _unsafe(label, f"corrupt zip: {exc}") from exc


def _tar_entries(path: Path, limits: BundleLimits, label: str) -> Iterator[BundleEntry]:
    try:
        with tarfile.open(path, "r:*") as archive:
            remaining, count = limits.max_total_size, 0
            compressed = max(path.stat().st_size, 1)  # a .tar.gz/.bz2/.xz is one stream: its ratio is the whole's
            expandable = max(limits.max_ratio * compressed, 1024 * 1024)
            for info in archive:
                count += 1
                if count > limits.max_entries:
                    raise _unsafe(label, f"more than {limits.max_entries} entries")
                member = safe_member_path(info.name)
                if member is None:
                    raise _unsafe(label, f"unsafe entry name {info.name!r}")
                if info.isdir():
                    continue
                if info.issym() or info.islnk():
                    # hard link names are relative to the archive root, symlinks to the member's folder
                    target = info.linkname if info.issym() else "/".join([".."] * member.count("/") + [info.linkname])
                    if not _inside(member, target) or (info.islnk() and safe_member_path(info.linkname) is None):
                        raise _unsafe(label, f"link {member} -> {info.linkname!r} points outside the bundle")
                    yield BundleEntry(member, None, info.linkname)
                    continue
                if not info.isfile():
                    raise _unsafe(label, f"{member} is a device, fifo or other special file")
                if info.size > remaining:
                    raise _unsafe(label, f"more than {limits.max_total_size} uncompressed bytes")
                if limits.max_total_size - remaining + info.size > expandable:
                    raise _unsafe(label, f"{member} takes it beyond {limits.max_ratio} times its {compressed} "
                                         "compressed bytes (compression ratio)")
                handle = archive.extractfile(info)
                digests = _hash_limited(handle, info.size, label, member)
                remaining -= digests.size
                yield BundleEntry(member, digests)
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise _unsafe(label, f"corrupt tar: {exc}") from exc
