"""The one streaming hasher and the one verifier of declared sizes and digests."""

import hashlib
import io

import pytest

from ingest_assets.core.digests import FIRST_CHUNK, Mismatch, first_mismatch, hash_stream

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


class Recording(io.BytesIO):
    """A stream that notes the size of each buffer it is asked to fill."""

    def __init__(self, data: bytes):
        super().__init__(data)
        self.asked: list[int] = []

    def readinto(self, buffer) -> int:
        self.asked.append(len(buffer))
        return super().readinto(buffer)


def test_hash_stream_reads_a_small_stream_in_a_small_buffer_and_a_large_one_in_whole_chunks():
    small = Recording(b"entry 1\n")  # one of a bundle's many tiny entries: no chunk-size buffer for it
    assert hash_stream(small, ("md5",)).hexdigests()["md5"] == hashlib.md5(b"entry 1\n").hexdigest()
    assert small.asked == [FIRST_CHUNK, FIRST_CHUNK]
    large = Recording(DATA)
    hasher = hash_stream(large, ("sha256",), chunk_size=256 * 1024)
    assert hasher.size == len(DATA) and hasher.hexdigests()["sha256"] == hashlib.sha256(DATA).hexdigest()
    assert large.asked == [FIRST_CHUNK] + [256 * 1024] * 6  # 64 KiB, then the other 1,214,464 bytes in 5 reads, then the end


def test_first_mismatch_checks_the_size_then_the_declared_digests_in_order():
    digests = {"md5": hashlib.md5(b"abc").hexdigest(), "sha256": hashlib.sha256(b"abc").hexdigest()}
    assert first_mismatch(3, {"md5": digests["md5"].upper(), "sha256": None}, 3, digests) is None
    assert first_mismatch(4, {"md5": "0" * 32}, 3, digests) == Mismatch("size", "4", "3")
    assert first_mismatch(None, {"sha256": "f" * 64, "md5": "0" * 32}, 3, digests) == Mismatch(
        "sha256", "f" * 64, digests["sha256"])
