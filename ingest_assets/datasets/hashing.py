"""md5 + sha1 + sha256 of a byte stream in one read pass, and verification against declared values."""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import BinaryIO

CHUNK_SIZE = 4 * 1024 * 1024
PARALLEL_MIN = 64 * 1024  # below this a thread hand-off costs more than it saves
ALGORITHMS = ("md5", "sha1", "sha256")
HEX_LENGTHS = {"md5": 32, "sha1": 40, "sha256": 64}
_pool: tuple[int, ThreadPoolExecutor] | None = None


def _md5_pool() -> ThreadPoolExecutor:
    """One small pool per process (a forked child must not inherit the parent's dead threads)."""
    global _pool
    if _pool is None or _pool[0] != os.getpid():
        _pool = (os.getpid(), ThreadPoolExecutor(max_workers=2, thread_name_prefix="md5"))
    return _pool[1]


@dataclass(frozen=True)
class Digests:
    size: int
    md5: str
    sha1: str
    sha256: str


class MultiHasher:
    """Feeds every chunk once to md5, sha1 and sha256.

    hashlib releases the GIL on large updates, so md5 (the slowest of the three) runs on a pool thread
    while the caller's thread does sha1 and sha256 on the same chunk; ``update`` returns when both are
    done, so the caller may reuse the chunk's buffer at once.
    """

    def __init__(self):
        self._md5, self._sha1, self._sha256 = hashlib.md5(), hashlib.sha1(), hashlib.sha256()
        self.size = 0

    def update(self, chunk: bytes | memoryview) -> None:
        if len(chunk) >= PARALLEL_MIN:
            pending = _md5_pool().submit(self._md5.update, chunk)
            self._sha1.update(chunk)
            self._sha256.update(chunk)
            pending.result()
        else:
            self._md5.update(chunk)
            self._sha1.update(chunk)
            self._sha256.update(chunk)
        self.size += len(chunk)

    def digests(self) -> Digests:
        return Digests(self.size, self._md5.hexdigest(), self._sha1.hexdigest(), self._sha256.hexdigest())


def hash_file(handle: BinaryIO, *, limit: int | None = None, chunk_size: int = CHUNK_SIZE) -> Digests:
    """Hash an open binary stream, reading into one reused buffer (no per-chunk allocation).

    Raises ``OverflowError`` as soon as more than ``limit`` bytes have been read.
    """
    hasher = MultiHasher()
    buffer = bytearray(chunk_size)
    view = memoryview(buffer)
    while read := handle.readinto(buffer):
        hasher.update(view[:read])
        if limit is not None and hasher.size > limit:
            raise OverflowError(f"more than {limit} bytes")
    return hasher.digests()


def normalize_hex(algorithm: str, value: str | None) -> str | None:
    """Lower-case hex of the right length for ``algorithm``, or None when absent/malformed."""
    if not value:
        return None
    value = value.strip().lower()
    if len(value) != HEX_LENGTHS[algorithm] or any(c not in "0123456789abcdef" for c in value):
        return None
    return value


def mismatch(declared_size: int | None, declared: dict[str, str | None], actual: Digests) -> str | None:
    """First failed check as a status (``mismatch-size|md5|sha1|sha256``), or None when all agree."""
    if declared_size is not None and declared_size != actual.size:
        return "mismatch-size"
    for algorithm in ALGORITHMS:
        expected = declared.get(algorithm)
        if expected and expected.lower() != getattr(actual, algorithm):
            return f"mismatch-{algorithm}"
    return None
