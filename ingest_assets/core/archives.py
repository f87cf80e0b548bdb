"""Hostile zip and tar (.gz/.bz2/.xz) archives, read without extracting: one set of checks, members streamed.

    for member in members(path, limits, label=name):        # ArchiveError on the first bad member
        consume(member.name, member.size, member.stream)
    for item in scan(path, limits, label=name):             # a bad member is an ArchiveError *yielded*
        ...                                                  # (report it and go on), the others are Members

Refused members: absolute, ``..`` or otherwise unsafe names, links (with ``links=True`` only those pointing
outside the archive; the others come as members with ``link`` set), devices and other special files,
encrypted zip entries, duplicate names, members over ``max_member_bytes``, and zip entries over 1 MiB whose
compression ratio passes ``max_ratio``. The whole archive is refused (raised whatever the policy) when it is
neither a zip nor a tar, is corrupt, has more than ``max_members`` members or ``max_total_bytes`` uncompressed,
or (tar, one compressed stream) expands past ``max_ratio`` times its size. A member's stream reads at most
its declared size and is readable until the iteration moves on; nested archives are not opened. A member
whose bytes turn out corrupt while they are read raises an :class:`ArchiveError` naming ``<label>!<member>``.

:func:`open_decompressed` is the one gzip sniffing: a file is gunzipped when it starts with the gzip magic,
whatever its name says, and a corrupt gzip stream reads as an :class:`ArchiveError` too. :func:`sniff` names what
a file's first bytes are (gzip, zip, tar, bzip2, xz) and :func:`kind_of` what a file is to a reader (an archive
to :func:`scan`, a gzip stream to :func:`gunzipped`, or plain bytes), by content, never by name.
"""

from __future__ import annotations

import io
import posixpath
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ingest_assets.core.errors import ArchiveError

RATIO_CHECK_FROM = 1024 * 1024  # smaller members may compress as well as they like
MAX_LINK_BYTES = 4096
GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")  # a local file header; an empty zip's end of central directory
TAR_MAGIC, TAR_MAGIC_AT = b"ustar", 257  # POSIX and GNU tar headers
COMPRESSED_MAGICS = {GZIP_MAGIC: "gzip", b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz"}
SNIFF_BYTES = 512  # one tar header block
GZIP_WBITS, GUNZIP_READ = 16 + zlib.MAX_WBITS, 256 * 1024  # zlib's gzip format; compressed bytes read at once
# what reading a corrupt member or compressed stream raises (CRC, truncation, bad blocks, unsupported methods)
READ_ERRORS = (zipfile.BadZipFile, tarfile.TarError, NotImplementedError, RuntimeError, zlib.error, EOFError, OSError)


@dataclass(frozen=True)
class Limits:
    max_members: int = 10_000
    max_member_bytes: int | None = None  # None: only the total bounds a member
    max_total_bytes: int = 64 * 1024**3
    max_ratio: int = 200  # uncompressed / compressed: per zip entry, over the whole stream for a tar


@dataclass(frozen=True)
class Member:
    name: str  # normalised relative path
    size: int  # uncompressed bytes (0 for a link)
    stream: BinaryIO | None  # None for a link
    link: str | None = None  # an in-archive link's target (``links=True``)


def sniff(head: bytes) -> str | None:
    """What ``head`` (a file's first bytes, :data:`SNIFF_BYTES` of them for a tar) is: ``gzip``, ``bzip2``, ``xz``,
    ``zip``, ``tar`` (uncompressed), or None (none of these: text, or something else)."""
    for magic, kind in COMPRESSED_MAGICS.items():
        if head.startswith(magic):
            return kind
    if head.startswith(ZIP_MAGICS):
        return "zip"
    if head[TAR_MAGIC_AT:TAR_MAGIC_AT + len(TAR_MAGIC)] == TAR_MAGIC:
        return "tar"
    return None


def kind_of(path: Path) -> str:
    """What ``path`` is to a reader, by content: ``archive`` (a zip, or a tar however compressed: :func:`scan`),
    ``gzip`` (a gzip stream of something else: :func:`gunzipped`), ``plain`` (anything else, read as it is).
    A bzip2 or xz file that holds no tar is ``archive`` too: :func:`scan` refuses it, naming it."""
    with path.open("rb") as raw:
        kind = sniff(raw.read(SNIFF_BYTES))
        if kind == "gzip":
            raw.seek(0)
            try:
                kind = "archive" if sniff(io.BufferedReader(_Gunzip(raw)).read(SNIFF_BYTES)) == "tar" else "gzip"
            except READ_ERRORS:  # corrupt from the start: gunzipping it says so, naming it
                kind = "gzip"
    if kind == "gzip":
        return "gzip"
    return "plain" if kind is None else "archive"


def gunzipped(raw: BinaryIO, *, label: str, provider: str | None = None, max_bytes: int | None = None,
              buffer_size: int = io.DEFAULT_BUFFER_SIZE) -> BinaryIO:
    """``raw``'s gzip stream (every member of it), decompressed as it is read. A corrupt or truncated stream, or
    more than ``max_bytes`` decompressed (a gzip bomb), raises an :class:`ArchiveError` naming ``label``."""
    def error(exc: Exception) -> ArchiveError:
        return ArchiveError(f"corrupt gzip stream: {exc}", provider=provider, file=label)

    def too_large(limit: int) -> ArchiveError:
        return ArchiveError(f"more than {limit} bytes once gunzipped", provider=provider, file=label)

    return io.BufferedReader(_Translated(_Gunzip(raw), error, max_bytes, too_large), buffer_size)


@contextmanager
def open_decompressed(path: Path, *, label: str | None = None, provider: str | None = None
                      ) -> Iterator[tuple[BinaryIO, bool]]:
    """``path``'s bytes, gunzipped when they start with the gzip magic, and whether they were compressed; a
    corrupt or truncated gzip stream raises an :class:`ArchiveError` naming ``label`` (default: the file name)."""
    with path.open("rb") as raw:
        compressed = raw.read(2) == GZIP_MAGIC
        raw.seek(0)
        if not compressed:
            yield raw, False
            return
        with gunzipped(raw, label=label or path.name, provider=provider) as inner:
            yield inner, True


class _Gunzip(io.RawIOBase):
    """The members of a gzip stream one after another, inflated by zlib (whose gzip mode checks each member's CRC
    and length) from reads of :data:`GUNZIP_READ` bytes; zero bytes after a member are padding, as gzip reads them.
    A stream that ends inside a member raises EOFError, a corrupt one ``zlib.error``. ``raw`` stays open."""

    def __init__(self, raw: BinaryIO):
        self.raw = raw
        self.member = None  # the member being inflated (None: before the first, or between two)
        self.members = 0
        self.pending = b""  # read and not yet inflated

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        while len(buffer):
            if not self.pending:
                self.pending = self.raw.read(GUNZIP_READ)
                if not self.pending:
                    if self.member is not None:
                        raise EOFError("the gzip stream ends inside a member (truncated)")
                    return 0
            if self.member is None:
                if self.members:  # after a member: padding, or the next member's header
                    self.pending = self.pending.lstrip(b"\0")
                    if not self.pending:
                        continue
                self.member, self.members = zlib.decompressobj(GZIP_WBITS), self.members + 1
            data = self.member.decompress(self.pending, len(buffer))
            if self.member.eof:
                self.pending, self.member = self.member.unused_data, None
            else:
                self.pending = self.member.unconsumed_tail
            if data:
                buffer[:len(data)] = data
                return len(data)
        return 0


class _Translated(io.RawIOBase):
    """A reader whose read errors come out as the :class:`ArchiveError` that ``error`` makes of them; past
    ``limit`` bytes read, the one ``too_large(limit)`` makes."""

    def __init__(self, inner: BinaryIO, error: Callable[[Exception], ArchiveError], limit: int | None = None,
                 too_large: Callable[[int], ArchiveError] | None = None):
        self.inner, self.error, self.limit, self.too_large, self.count = inner, error, limit, too_large, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        try:
            count = self.inner.readinto(buffer)
        except READ_ERRORS as exc:
            raise self.error(exc) from exc
        self.count += count
        if self.limit is not None and self.count > self.limit:
            raise self.too_large(self.limit)
        return count

    def close(self) -> None:
        if not self.closed:
            self.inner.close()
        super().close()


def _guarded(inner: BinaryIO, error: Callable[[Exception], ArchiveError]) -> BinaryIO:
    return io.BufferedReader(_Translated(inner, error))


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


def members(path: Path, limits: Limits, *, label: str | None = None, provider: str | None = None,
            links: bool = False) -> Iterator[Member]:
    """The archive's members; the first bad one raises its :class:`ArchiveError`."""
    for item in scan(path, limits, label=label, provider=provider, links=links):
        if isinstance(item, ArchiveError):
            raise item
        yield item


def scan(path: Path, limits: Limits, *, label: str | None = None, provider: str | None = None,
         links: bool = False) -> Iterator[Member | ArchiveError]:
    """The archive's members in order, a bad member as its (yielded) :class:`ArchiveError` naming
    ``<label>!<member>``; a problem of the whole archive is raised. ``label`` defaults to the file name."""
    reader = _Reader(path, limits, label or path.name, provider, links)
    seen: set[str] = set()
    for item in reader.items():
        if isinstance(item, Member):
            if item.name in seen:
                item = reader.problem(item.name, f"duplicate entry {item.name!r}")
            else:
                seen.add(item.name)
        yield item


class _Reader:
    def __init__(self, path: Path, limits: Limits, label: str, provider: str | None, links: bool):
        self.path, self.limits, self.label, self.provider, self.links = path, limits, label, provider, links

    def problem(self, name: str, reason: str) -> ArchiveError:
        return ArchiveError(reason, provider=self.provider, file=f"{self.label}!{name}")

    def member(self, name: str, size: int, stream: BinaryIO) -> Member:
        """The member with a stream whose read errors name it."""
        return Member(name, size, _guarded(stream, lambda exc: self.problem(name, f"unreadable member: {exc}")))

    def refuse(self, reason: str) -> ArchiveError:
        return ArchiveError(reason, provider=self.provider, file=self.label)

    def items(self) -> Iterator[Member | ArchiveError]:
        if zipfile.is_zipfile(self.path):
            return self.zip_items()
        try:
            is_tar = tarfile.is_tarfile(self.path)
        except (OSError, tarfile.TarError, EOFError, zlib.error):
            is_tar = False
        if not is_tar:
            raise self.refuse("is neither a zip nor a tar file")
        return self.tar_items()

    def check(self, raw: str, kind: str, size: int) -> str | ArchiveError:
        """The member's safe name, or why it is refused (links are checked by the caller)."""
        name = safe_member_path(raw)
        if name is None:
            return self.problem(raw, f"unsafe entry name {raw!r} (the path leaves the archive)")
        if kind == "special":
            return self.problem(name, f"{name} is not a regular file (a device, fifo or other special file)")
        if kind.endswith("link") and not self.links:
            return self.problem(name, f"{name} is a {'symbolic' if kind == 'symlink' else 'hard'} link (not followed)")
        limit = self.limits.max_member_bytes
        if limit is not None and size > limit:
            return self.problem(name, f"{name}: {size} bytes uncompressed (limit {limit})")
        return name

    def link(self, name: str, target: str, inside: bool) -> Member | ArchiveError:
        if not inside:
            return self.problem(name, f"link {name} -> {target!r} points outside the archive")
        return Member(name, 0, None, target)

    def zip_items(self) -> Iterator[Member | ArchiveError]:
        limits = self.limits
        try:
            with zipfile.ZipFile(self.path) as archive:
                infos = archive.infolist()
                if len(infos) > limits.max_members:
                    raise self.refuse(f"zip has {len(infos)} members (limit {limits.max_members})")
                if sum(i.file_size for i in infos) > limits.max_total_bytes:
                    raise self.refuse(f"declares more than {limits.max_total_bytes} uncompressed bytes")
                for info in infos:
                    kind = _zip_kind(info.external_attr >> 16)
                    name = self.check(info.filename, kind, info.file_size)
                    if isinstance(name, ArchiveError):
                        yield name
                    elif info.is_dir():
                        continue
                    elif info.flag_bits & 0x1:
                        yield self.problem(name, f"{name} is encrypted")
                    elif kind == "symlink":
                        with archive.open(info) as handle:
                            target = handle.read(MAX_LINK_BYTES).decode("utf-8", "replace")
                        yield self.link(name, target, _inside(name, target))
                    elif info.file_size > RATIO_CHECK_FROM and info.file_size > limits.max_ratio * max(info.compress_size, 1):
                        yield self.problem(name, f"{name}: compression ratio beyond {limits.max_ratio} (zip bomb?)")
                    else:
                        with archive.open(info) as stream:
                            yield self.member(name, info.file_size, stream)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError, zlib.error) as exc:
            raise self.refuse(f"corrupt zip: {exc}") from exc

    def tar_items(self) -> Iterator[Member | ArchiveError]:
        limits = self.limits
        compressed = max(self.path.stat().st_size, 1)  # a .tar.gz/.bz2/.xz is one stream: its ratio is the whole's
        expandable = max(limits.max_ratio * compressed, RATIO_CHECK_FROM)
        total = count = 0
        try:
            with tarfile.open(self.path, "r|*") as archive:  # streamed: each member is read where it lies
                for info in archive:
                    count += 1
                    if count > limits.max_members:
                        raise self.refuse(f"tar has more than {limits.max_members} members")
                    name = self.check(info.name, _tar_kind(info), info.size)
                    if isinstance(name, ArchiveError):
                        yield name
                    elif info.isdir():
                        continue
                    elif info.issym() or info.islnk():
                        # a symlink's target is relative to the member's folder, a hard link's to the archive root
                        inside = _inside(name, info.linkname) if info.issym() else safe_member_path(info.linkname) is not None
                        yield self.link(name, info.linkname, inside)
                    else:
                        total += info.size
                        if total > limits.max_total_bytes:
                            raise self.refuse(f"more than {limits.max_total_bytes} uncompressed bytes")
                        if total > expandable:
                            raise self.refuse(f"{name} takes it beyond {limits.max_ratio} times its {compressed} "
                                              "compressed bytes (compression ratio: a tar bomb?)")
                        yield self.member(name, info.size, archive.extractfile(info))
        except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
            raise self.refuse(f"corrupt tar: {exc}") from exc


def _zip_kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "symlink"
    return "file" if stat.S_IFMT(mode) in (0, stat.S_IFREG, stat.S_IFDIR) else "special"  # 0: no Unix type recorded


def _tar_kind(info: tarfile.TarInfo) -> str:
    if info.issym():
        return "symlink"
    if info.islnk():
        return "hardlink"
    return "file" if info.isfile() or info.isdir() else "special"
