"""The one hostile-archive reader: the same checks for zip and tar, under both policies (raise, or report and go on)."""

from __future__ import annotations

import gzip
import hashlib
import os
import stat
import tarfile

import pytest

from ingest_assets.core.archives import Limits, gunzipped, kind_of, members, open_decompressed, scan, sniff
from ingest_assets.core.errors import ArchiveError, ParseError
from ingest_assets_tests.support import tar_bytes, zip_bytes

MiB = 1024 * 1024
REG, LNK = stat.S_IFREG | 0o644, stat.S_IFLNK | 0o777
GOOD = b"<record id='1'/>\n"


def zip_file(tmp_path, entries, name="a.zip"):
    path = tmp_path / name
    path.write_bytes(zip_bytes(entries))
    return path


def tar_file(tmp_path, entries, name="a.tar.gz", mode="w:gz"):
    path = tmp_path / name
    path.write_bytes(tar_bytes(entries, mode))
    return path


def report(path, limits=Limits(), **options):
    """``scan`` as a file harvest uses it: (name, content) of good members, (file, message) of the refused."""
    good, bad = [], []
    for item in scan(path, limits, label="dump", provider="prov", **options):
        if isinstance(item, ArchiveError):
            bad.append((item.file, item.message))
        else:
            good.append((item.name, item.stream.read() if item.stream else item.link))
    return good, bad


HOSTILE = [
    ("zip", "../../etc/cron.d/x", "dump!../../etc/cron.d/x", "unsafe entry name '../../etc/cron.d/x'"),
    ("zip", "/etc/passwd", "dump!/etc/passwd", "unsafe entry name '/etc/passwd' (the path leaves the archive)"),
    ("zip", "link", "dump!pages/link.xml", "pages/link.xml is a symbolic link (not followed)"),
    ("zip", "bomb", "dump!pages/bomb.xml", "pages/bomb.xml: compression ratio beyond 200 (zip bomb?)"),
    ("tar", "../x.xml", "dump!../x.xml", "unsafe entry name '../x.xml'"),
    ("tar", "link", "dump!pages/link.xml", "pages/link.xml is a symbolic link (not followed)"),
    ("tar", "hardlink", "dump!pages/hard.xml", "pages/hard.xml is a hard link (not followed)"),
    ("tar", "device", "dump!pages/dev", "pages/dev is not a regular file (a device, fifo or other special file)"),
]


def hostile_archive(tmp_path, kind, what):
    if kind == "zip":
        bad = {
            "link": ("pages/link.xml", "/etc/passwd", LNK),
            "bomb": ("pages/bomb.xml", b"<a>" + bytes(8 * MiB) + b"</a>", REG),
        }.get(what, (what, b"evil", REG))
        return zip_file(tmp_path, [("pages/1.xml", GOOD, REG), bad, ("pages/2.xml", GOOD, REG)])
    bad = {
        "link": ("pages/link.xml", tarfile.SYMTYPE, b"../../etc/passwd"),
        "hardlink": ("pages/hard.xml", tarfile.LNKTYPE, b"pages/1.xml"),
        "device": ("pages/dev", tarfile.CHRTYPE, b""),
    }.get(what, (what, tarfile.REGTYPE, b"evil"))
    return tar_file(tmp_path, [("pages/1.xml", tarfile.REGTYPE, GOOD), bad, ("pages/2.xml", tarfile.REGTYPE, GOOD)])


@pytest.mark.parametrize(("kind", "what", "file", "message"), HOSTILE)
def test_a_bad_member_is_reported_and_the_others_are_read(tmp_path, kind, what, file, message):
    good, bad = report(hostile_archive(tmp_path, kind, what))
    assert good == [("pages/1.xml", GOOD), ("pages/2.xml", GOOD)]
    assert len(bad) == 1 and bad[0][0] == file and message in bad[0][1]


@pytest.mark.parametrize(("kind", "what", "file", "message"), HOSTILE)
def test_the_raising_policy_stops_at_the_first_bad_member(tmp_path, kind, what, file, message):
    read = []
    with pytest.raises(ArchiveError) as caught:
        for member in members(hostile_archive(tmp_path, kind, what), Limits(), label="dump", provider="prov"):
            read.append(member.name)
    assert read == ["pages/1.xml"] and caught.value.file == file and message in caught.value.message
    assert caught.value.provider == "prov" and isinstance(caught.value, ParseError)


def test_links_inside_the_archive_may_be_listed_but_never_those_leaving_it(tmp_path):
    path = tar_file(tmp_path, [
        ("d/a.txt", tarfile.REGTYPE, b"a"), ("d/b.txt", tarfile.SYMTYPE, b"a.txt"), ("d/c.txt", tarfile.LNKTYPE, b"d/a.txt"),
        ("d/out", tarfile.SYMTYPE, b"../../etc/shadow"), ("d/hard", tarfile.LNKTYPE, b"../etc/shadow"),
    ])
    good, bad = report(path, links=True)
    assert good == [("d/a.txt", b"a"), ("d/b.txt", "a.txt"), ("d/c.txt", "d/a.txt")]
    assert [message for _, message in bad] == [
        "link d/out -> '../../etc/shadow' points outside the archive", "link d/hard -> '../etc/shadow' points outside the archive",
    ]


@pytest.mark.parametrize("kind", ["zip", "tar"])
def test_the_member_count_refuses_the_whole_archive_under_either_policy(tmp_path, kind):
    if kind == "zip":
        path = zip_file(tmp_path, [(f"f{i}", b"x", REG) for i in range(6)])
    else:
        path = tar_file(tmp_path, [(f"f{i}", tarfile.REGTYPE, b"x") for i in range(6)])
    for read in (scan, members):
        with pytest.raises(ArchiveError, match=f"{kind} has (6|more than 5) members") as caught:
            list(read(path, Limits(max_members=5), label="dump"))
        assert caught.value.file == "dump"
    assert len(list(members(path, Limits(max_members=6)))) == 6


def test_sizes_are_bounded_per_member_and_in_all(tmp_path):
    path = tar_file(tmp_path, [("a", tarfile.REGTYPE, os.urandom(3000)), ("b", tarfile.REGTYPE, os.urandom(3000))])
    good, bad = report(path, Limits(max_member_bytes=2000, max_total_bytes=10_000))
    assert good == [] and [m for _, m in bad] == ["a: 3000 bytes uncompressed (limit 2000)", "b: 3000 bytes uncompressed (limit 2000)"]
    with pytest.raises(ArchiveError, match="more than 5000 uncompressed bytes"):
        report(path, Limits(max_total_bytes=5000))


def test_a_tar_gz_bomb_is_refused_by_the_ratio_of_the_whole_stream(tmp_path):
    path = tar_file(tmp_path, [("ok.txt", tarfile.REGTYPE, GOOD), ("zeros.bin", tarfile.REGTYPE, bytes(50 * MiB))])
    assert path.stat().st_size < 100_000
    with pytest.raises(ArchiveError, match="zeros.bin takes it beyond 200 times its .* compressed bytes"):
        report(path)


@pytest.mark.parametrize("mode", ["w:gz", "w:bz2", "w:xz", "w"])
def test_tar_members_are_streamed_in_order(tmp_path, mode):
    """Each member is read where it lies in the (compressed) stream: once the iteration moves on, the stream
    behind is gone, so nothing keeps or re-reads the archive."""
    big = os.urandom(3 * MiB)
    path = tar_file(tmp_path, [("data/big.bin", tarfile.REGTYPE, big), ("data/small.txt", tarfile.REGTYPE, GOOD)],
                    name=f"a.tar{mode[2:] and '.' + mode[2:]}", mode=mode)
    first, second = [], []
    for member, seen in zip(members(path, Limits()), (first, second)):
        digest = hashlib.sha256()
        while chunk := member.stream.read(64 * 1024):
            digest.update(chunk)
        seen.extend([member.name, member.size, digest.hexdigest()])
    assert first == ["data/big.bin", len(big), hashlib.sha256(big).hexdigest()]
    assert second == ["data/small.txt", len(GOOD), hashlib.sha256(GOOD).hexdigest()]
    iterator = members(path, Limits())
    big_member = next(iterator)
    assert len(big_member.stream.read(1000)) == 1000
    next(iterator)
    with pytest.raises(ArchiveError, match=r"unreadable member: seeking backwards is not allowed .*!data/big.bin"):
        big_member.stream.read()  # tar's StreamError, translated naming the member


def test_not_an_archive_and_a_corrupt_one(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("just text")
    with pytest.raises(ArchiveError, match="is neither a zip nor a tar file"):
        list(scan(text, Limits()))
    broken = tmp_path / "broken.tar.gz"
    broken.write_bytes(tar_file(tmp_path, [("a", tarfile.REGTYPE, os.urandom(50_000))]).read_bytes()[:20_000])
    with pytest.raises(ArchiveError, match="corrupt tar"):
        [member.name for member in members(broken, Limits())]


def test_duplicate_names_are_refused(tmp_path):
    path = tar_file(tmp_path, [("a.xml", tarfile.REGTYPE, GOOD), ("./a.xml", tarfile.REGTYPE, b"other")])
    good, bad = report(path)
    assert good == [("a.xml", GOOD)] and bad == [("dump!a.xml", "duplicate entry 'a.xml'")]


def test_a_member_corrupt_inside_is_an_archive_error_naming_it(tmp_path):
    data = os.urandom(64 * 1024)
    path = zip_file(tmp_path, [("records/a.xml", data, REG)])
    raw = bytearray(path.read_bytes())
    at = raw.index(data[:32])  # random bytes deflate to stored blocks: flip a byte of the content, the CRC no longer matches
    raw[at + 100] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(ArchiveError, match="unreadable member: Bad CRC-32") as raised:
        for member in members(path, Limits(), label="dump.zip", provider="prov"):
            member.stream.read()
    assert (raised.value.provider, raised.value.file) == ("prov", "dump.zip!records/a.xml")


def test_gzip_is_sniffed_by_its_magic_and_a_truncated_stream_is_an_archive_error(tmp_path):
    plain, packed = tmp_path / "plain.nt", tmp_path / "packed.nt"  # no .gz in either name
    plain.write_bytes(GOOD)
    packed.write_bytes(gzip.compress(GOOD * 1000))
    with open_decompressed(plain) as (stream, compressed):
        assert (stream.read(), compressed) == (GOOD, False)
    with open_decompressed(packed) as (stream, compressed):
        assert (stream.read(), compressed) == (GOOD * 1000, True)
    packed.write_bytes(packed.read_bytes()[:-20])
    with open_decompressed(packed, label="https://p.example/dump", provider="prov") as (stream, _):
        with pytest.raises(ArchiveError, match="corrupt gzip stream") as raised:
            stream.read()
    assert raised.value.file == "https://p.example/dump"


@pytest.mark.parametrize(("build", "kind"), [
    (lambda tmp: zip_file(tmp, [("a.xml", GOOD, REG)], name="no-extension"), "archive"),
    (lambda tmp: tar_file(tmp, [("a.xml", tarfile.REGTYPE, GOOD)], name="data.xml"), "archive"),  # a .tar.gz named .xml
    (lambda tmp: tar_file(tmp, [("a.xml", tarfile.REGTYPE, GOOD)], name="plain-tar", mode="w"), "archive"),
    (lambda tmp: tar_file(tmp, [("a.xml", tarfile.REGTYPE, GOOD)], name="x.tbz2", mode="w:bz2"), "archive"),
    (lambda tmp: _written(tmp / "records.zip", gzip.compress(GOOD)), "gzip"),  # gzip named .zip
    (lambda tmp: _written(tmp / "records.gz", GOOD), "plain"),  # a .gz that is not gzip
    (lambda tmp: _written(tmp / "broken.gz", gzip.compress(GOOD)[:12]), "gzip"),  # corrupt: gunzipping says so
])
def test_what_a_file_is_comes_from_its_content_not_its_name(tmp_path, build, kind):
    assert kind_of(build(tmp_path)) == kind


def test_sniffing_the_first_bytes():
    assert [sniff(head) for head in (b"\x1f\x8b\x08", b"PK\x03\x04", b"PK\x05\x06", b"BZh91", b"\xfd7zXZ\x00", b"<?xml")] == [
        "gzip", "zip", "zip", "bzip2", "xz", None]
    assert sniff(b"\0" * 257 + b"ustar\x0000") == "tar" and sniff(b"") is None


def test_a_gunzipped_stream_is_bounded_and_names_its_label(tmp_path):
    bomb = _written(tmp_path / "bomb.xml.gz", gzip.compress(b" " * (4 * 1024 * 1024)))
    with bomb.open("rb") as raw, pytest.raises(ArchiveError, match="more than 1048576 bytes once gunzipped") as raised:
        gunzipped(raw, label="s3://hub/bomb.xml.gz", provider="prov", max_bytes=1024 * 1024).read()
    assert (raised.value.provider, raised.value.file) == ("prov", "s3://hub/bomb.xml.gz")
    with bomb.open("rb") as raw:
        assert len(gunzipped(raw, label="bomb", max_bytes=4 * 1024 * 1024).read()) == 4 * 1024 * 1024


def test_gunzipping_reads_every_member_as_gzip_does_and_refuses_what_it_refuses(tmp_path):
    noise = os.urandom(700 * 1024)  # incompressible: its member spans several reads of the compressed file
    stream = gzip.compress(GOOD * 3000) + gzip.compress(noise, compresslevel=1) + b"\0" * 7 + gzip.compress(b"")
    good = _written(tmp_path / "members.gz", stream)
    with good.open("rb") as raw:
        reader = gunzipped(raw, label="members.gz", buffer_size=4096)
        assert b"".join(iter(lambda: reader.read(1000), b"")) == gzip.decompress(stream) == GOOD * 3000 + noise
    member = bytearray(gzip.compress(GOOD * 10))
    member[-8] ^= 0xFF  # the CRC-32 in the trailer
    for name, data in (("crc", bytes(member)), ("trailing", gzip.compress(GOOD) + b"not gzip"),
                       ("truncated", gzip.compress(noise)[:-4])):
        with _written(tmp_path / name, data).open("rb") as raw, pytest.raises(ArchiveError, match="corrupt gzip stream"):
            gunzipped(raw, label=name).read()
    with _written(tmp_path / "empty", b"").open("rb") as raw:
        assert gunzipped(raw, label="empty").read() == b""


def _written(path, data: bytes):
    path.write_bytes(data)
    return path
