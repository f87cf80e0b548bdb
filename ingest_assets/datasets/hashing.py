"""md5 + sha1 + sha256 of a byte stream in one read pass, and verification against declared values."""

from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO

from ingest_assets.core.digests import MultiHasher

CHUNK_SIZE = 4 * 1024 * 1024
ALGORITHMS = ("md5", "sha1", "sha256")  # md5, the slowest, first: MultiHasher runs it beside the others
HEX_LENGTHS = {"md5": 32, "sha1": 40, "sha256": 64}


@dataclass(frozen=True)
class Digests:
    size: int
    md5: str
    sha1: str
    sha256: str


def hash_file(handle: BinaryIO, *, limit: int | None = None, chunk_size: int = CHUNK_SIZE) -> Digests:
    """Hash an open binary stream, reading into one reused buffer (no per-chunk allocation).

    Raises ``OverflowError`` as soon as more than ``limit`` bytes have been read.
    """
    hasher = MultiHasher(ALGORITHMS)
    buffer = bytearray(chunk_size)
    view = memoryview(buffer)
    while read := handle.readinto(buffer):
        hasher.update(view[:read])
        if limit is not None and hasher.size > limit:
            raise OverflowError(f"more than {limit} bytes")
    return Digests(hasher.size, **hasher.hexdigests())


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
