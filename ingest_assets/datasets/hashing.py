"""md5 + sha1 + sha256 of a byte stream in one read pass, and verification against declared values."""

from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO

from ingest_assets.core.digests import CHUNK_SIZE, first_mismatch, hash_stream

ALGORITHMS = ("md5", "sha1", "sha256")  # md5, the slowest, first: MultiHasher runs it beside the others
HEX_LENGTHS = {"md5": 32, "sha1": 40, "sha256": 64}


@dataclass(frozen=True)
class Digests:
    size: int
    md5: str
    sha1: str
    sha256: str


def hash_file(handle: BinaryIO, *, limit: int | None = None, chunk_size: int = CHUNK_SIZE) -> Digests:
    """Hash an open binary stream in one pass; ``OverflowError`` as soon as more than ``limit`` bytes were read."""
    hasher = hash_stream(handle, ALGORITHMS, limit=limit, chunk_size=chunk_size)
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
    found = first_mismatch(declared_size, {a: declared.get(a) for a in ALGORITHMS}, actual.size,
                           {a: getattr(actual, a) for a in ALGORITHMS})
    return f"mismatch-{found.what}" if found else None
