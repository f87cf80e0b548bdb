"""Digests of byte streams: several hashlib algorithms fed in one pass (:func:`hash_stream`), and the one check
of declared sizes and digests against those computed (:func:`first_mismatch`)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import BinaryIO, Protocol

CHUNK_SIZE = 4 * 1024 * 1024
FIRST_CHUNK = 64 * 1024  # a stream's first read: most members of a bundle end within it
PARALLEL_MIN = 64 * 1024  # below this a thread hand-off costs more than it saves
_pool: tuple[int, ThreadPoolExecutor] | None = None


def _side_pool() -> ThreadPoolExecutor:
    """One small pool per process (a forked child must not inherit the parent's dead threads)."""
    global _pool
    if _pool is None or _pool[0] != os.getpid():
        _pool = (os.getpid(), ThreadPoolExecutor(max_workers=2, thread_name_prefix="digest"))
    return _pool[1]


class MultiHasher:
    """Feeds every chunk once to each of the hashlib ``algorithms`` and counts its bytes.

    hashlib releases the GIL on large updates, so with several algorithms the first (name the slowest first:
    md5) runs on a pool thread while the caller's thread does the others on the same chunk; ``update`` returns
    when all are done, so the caller may reuse the chunk's buffer at once.
    """

    def __init__(self, algorithms: Iterable[str]):
        self._hashes = {name: hashlib.new(name, usedforsecurity=False) for name in algorithms}  # integrity only
        self._order = list(self._hashes.values())
        self.size = 0

    def update(self, chunk: bytes | memoryview) -> None:
        first, *others = self._order or (None,)
        if others and len(chunk) >= PARALLEL_MIN:
            pending = _side_pool().submit(first.update, chunk)
            for digest in others:
                digest.update(chunk)
            pending.result()
        else:
            for digest in self._order:
                digest.update(chunk)
        self.size += len(chunk)

    def hexdigests(self) -> dict[str, str]:
        return {name: digest.hexdigest() for name, digest in self._hashes.items()}

    @classmethod
    def of(cls, data: bytes, algorithms: Iterable[str]) -> "MultiHasher":
        """The digests of bytes already in memory."""
        hasher = cls(algorithms)
        hasher.update(data)
        return hasher


class _Sink(Protocol):
    def write(self, data: memoryview, /) -> object: ...


def hash_stream(stream: BinaryIO, algorithms: Iterable[str], *, limit: int | None = None, sink: _Sink | None = None,
                chunk_size: int = CHUNK_SIZE) -> MultiHasher:
    """Read ``stream`` to its end into a reused buffer (no per-chunk allocation), feeding each chunk to the
    hashers and, when given, to ``sink`` (a copy written on the way). ``OverflowError`` as soon as more than
    ``limit`` bytes have been read. The first read takes :data:`FIRST_CHUNK` bytes, so a small stream (a bundle's
    entry, one of thousands) costs no buffer of ``chunk_size``; a stream that fills it goes on in one of that size."""
    hasher = MultiHasher(algorithms)
    buffer = bytearray(min(FIRST_CHUNK, chunk_size))
    while read := _read_into(stream, buffer):
        chunk = memoryview(buffer)[:read]
        hasher.update(chunk)
        if limit is not None and hasher.size > limit:
            raise OverflowError(f"more than {limit} bytes")
        if sink is not None:
            sink.write(chunk)
        if read == len(buffer) < chunk_size:
            buffer = bytearray(chunk_size)
    return hasher


def _read_into(stream: BinaryIO, buffer: bytearray) -> int:
    if hasattr(stream, "readinto"):
        return stream.readinto(buffer) or 0
    data = stream.read(len(buffer))  # a stream without readinto (a plain reader of an HTTP body, say)
    buffer[: len(data)] = data
    return len(data)


@dataclass(frozen=True)
class Mismatch:
    """What differs (``size`` or an algorithm's name), as declared and as computed."""

    what: str
    declared: str
    actual: str


def first_mismatch(declared_size: int | None, declared: Mapping[str, str | None], size: int,
                   digests: Mapping[str, str]) -> Mismatch | None:
    """The first declared value (the size, then the digests in ``declared``'s order; hex compared without case)
    that differs from what was computed; None when all agree. Absent declarations are not checked."""
    if declared_size is not None and int(declared_size) != size:
        return Mismatch("size", str(declared_size), str(size))
    for algorithm, expected in declared.items():
        if expected and expected.lower() != digests[algorithm]:
            return Mismatch(algorithm, expected, digests[algorithm])
    return None
