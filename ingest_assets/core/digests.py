"""Several hashlib digests of one byte stream, fed in one pass."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

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
        self._hashes = {name: hashlib.new(name) for name in algorithms}
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
