"""The one streaming hasher and the one verifier of declared sizes and digests."""

import hashlib
import io

import pytest

from ingest_assets.core.digests import Mismatch, first_mismatch, hash_stream

DATA = bytes(range(256)) * 5000  # 1.28 MB: several chunks of the small chunk size below


def test_hash_stream_digests_and_copies_in_one_pass():
    copy = io.BytesIO()
    hasher = hash_stream(io.BytesIO(DATA), ("md5", "sha256"), sink=copy, chunk_size=64 * 1024)
    assert hasher.size == len(DATA)
    assert hasher.hexdigests() == {"md5": hashlib.md5(DATA).hexdigest(), "sha256": hashlib.sha256(DATA).hexdigest()}
    assert copy.getvalue() == DATA


def test_hash_stream_reads_streams_without_readinto_and_stops_past_the_limit():
    class Plain:
        def __init__(self):
            self.inner = io.BytesIO(DATA)

        def read(self, size):
            return self.inner.read(size)

    assert hash_stream(Plain(), ("sha1",)).hexdigests()["sha1"] == hashlib.sha1(DATA).hexdigest()
    with pytest.raises(OverflowError, match="more than 1000 bytes"):
        hash_stream(io.BytesIO(DATA), ("md5",), limit=1000, chunk_size=4096)


def test_first_mismatch_checks_the_size_then_the_declared_digests_in_order():
    digests = {"md5": hashlib.md5(b"abc").hexdigest(), "sha256": hashlib.sha256(b"abc").hexdigest()}
    assert first_mismatch(3, {"md5": digests["md5"].upper(), "sha256": None}, 3, digests) is None
    assert first_mismatch(4, {"md5": "0" * 32}, 3, digests) == Mismatch("size", "4", "3")
    assert first_mismatch(None, {"sha256": "f" * 64, "md5": "0" * 32}, 3, digests) == Mismatch(
        "sha256", "f" * 64, digests["sha256"])
