"""Pure rules: URL patterns, landing-page hints, one-pass hashing, strategies, hostile bundles."""

from __future__ import annotations

import hashlib
import os
import stat
import tarfile

import pytest

from ingest_assets.core.archives import Limits, safe_member_path
from ingest_assets.datasets.bundle import list_bundle
from ingest_assets.datasets.detect import match_url, normalize_doi, parse_landing
from ingest_assets.datasets.hashing import ALGORITHMS, Digests, hash_file, mismatch, normalize_hex
from ingest_assets.datasets.model import ManifestFile, PlatformManifest
from ingest_assets.datasets.platforms import parse_checksum
from ingest_assets.datasets.status import DatasetIngestFailure
from ingest_assets.datasets.strategy import Thresholds, choose_strategy
from ingest_assets.core.digests import MultiHasher
from ingest_assets_tests.support import tar_bytes, zip_bytes

MiB = 1024 * 1024


@pytest.mark.parametrize(
    "url, expected",
    [
        ("https://zenodo.org/record/7752775", ("zenodo", "7752775", None)),
        ("https://zenodo.org/records/4927605", ("zenodo", "4927605", None)),
        ("https://zenodo.org/records/4927605/files/x.pdf?download=1", ("zenodo", "4927605", None)),
        ("https://figshare.com/articles/Testing_the_Connectivity_of_Networks/1282478", ("figshare", "1282478", None)),
        ("https://figshare.com/articles/dataset/Dataset01_txt/8263811/3", ("figshare", "8263811", "3")),
        ("https://figshare.com/articles/_/8269766", ("figshare", "8269766", None)),
        ("https://monash.figshare.com/articles/dataset/2019/12345678", ("figshare", "12345678", None)),
        (
            "https://dataverse.harvard.edu/dataset.xhtml?persistentId=doi:10.7910/DVN/CLSFKX",
            ("dataverse", "doi:10.7910/DVN/CLSFKX", None),
        ),
        (
            "https://dataverse.nl/dataset.xhtml?persistentId=hdl:10411/ABCDEF&version=1.0",
            ("dataverse", "hdl:10411/ABCDEF", None),
        ),
        ("https://archive.org/details/cat_dataset", ("archiveorg", "cat_dataset", None)),
        ("https://archive.org/download/cat_dataset/cat.zip", ("archiveorg", "cat_dataset", None)),
        ("https://example.org/records/123", None),
        ("https://figshare.com/authors/Someone/123", None),
        ("https://dataverse.harvard.edu/dataverse/harvard", None),
    ],
)  # fmt: skip
def test_url_patterns(url, expected):
    match = match_url(url)
    assert (None if match is None else (match.platform, match.platform_id, match.version)) == expected


def test_extra_hosts_extend_the_defaults():
    assert match_url("https://data.example.org/records/5", {"zenodo": ("data.example.org",)}).platform == "zenodo"
    assert match_url("https://zenodo.org/records/5", {"zenodo": ("data.example.org",)}).platform == "zenodo"


def test_landing_hints_from_signposting_header_links_and_meta_tags():
    body = b"""<html><head>
      <link rel="item" href="/files/a.csv" type="text/csv">
      <meta name="citation_doi" content="doi:10.6084/m9.figshare.1282478.v1">
      <meta name="citation_title" content="x">
    </head><body></body></html>"""
    header = '<https://doi.org/10.5281/zenodo.4927605>; rel="cite-as", <https://x.org/meta.json>; rel="describedby"'
    hints = parse_landing(body, "https://repo.example/landing/1", header)
    assert hints.dois == ["10.5281/zenodo.4927605", "10.6084/m9.figshare.1282478.v1"]
    assert hints.items == [("https://repo.example/files/a.csv", "text/csv")]
    assert parse_landing(b"\x00\xff<<<", "https://x/", None).dois == []


def test_doi_forms():
    assert normalize_doi("doi:10.5281/zenodo.4927605") == "10.5281/zenodo.4927605"
    assert normalize_doi("https://doi.org/10.7910/DVN/CLSFKX") == "10.7910/dvn/clsfkx"
    assert normalize_doi("10.17026/AR/0IZ6LW") == "10.17026/ar/0iz6lw"
    assert normalize_doi("https://example.org/10.1234/x") is None


def test_one_pass_hashes_equal_hashlib(tmp_path):
    data = os.urandom(3 * MiB + 17)
    expected = {a: hashlib.new(a, data).hexdigest() for a in ("md5", "sha1", "sha256")}
    path = tmp_path / "blob"
    path.write_bytes(data)
    with open(path, "rb") as handle:
        from_file = hash_file(handle, chunk_size=MiB)
    hasher = MultiHasher(ALGORITHMS)  # mixed chunk sizes: below and above the parallel threshold
    for start, size in ((0, 1000), (1000, 300_000), (301_000, len(data))):
        hasher.update(memoryview(data)[start : start + size])
    for digests in (from_file, Digests(hasher.size, **hasher.hexdigests())):
        assert (digests.size, digests.md5, digests.sha1, digests.sha256) == (len(data), *expected.values())
    with open(path, "rb") as handle, pytest.raises(OverflowError):
        hash_file(handle, limit=MiB)


def test_mismatch_reports_first_failing_check():
    hasher = MultiHasher(ALGORITHMS)
    hasher.update(b"abc")
    digests = Digests(hasher.size, **hasher.hexdigests())
    good = {"md5": digests.md5, "sha1": digests.sha1, "sha256": digests.sha256}
    assert mismatch(3, good, digests) is None
    assert mismatch(4, good, digests) == "mismatch-size"
    assert mismatch(3, {**good, "sha1": "0" * 40}, digests) == "mismatch-sha1"
    assert mismatch(None, {"sha256": "f" * 64}, digests) == "mismatch-sha256"
    assert mismatch(None, {"md5": digests.md5.upper()}, digests) is None


def test_checksum_parsing():
    # Zenodo declares "md5:<hex>"; the md5 must never be taken for a sha1
    assert parse_checksum("md5:673ab5bbfb15af035c7f5aa6b49c42ef") == {"md5": "673ab5bbfb15af035c7f5aa6b49c42ef"}
    assert parse_checksum("SHA-256:" + "A" * 64) == {"sha256": "a" * 64}
    assert parse_checksum("crc32:1234") == {} and parse_checksum(None) == {}
    assert normalize_hex("sha1", "673ab5bbfb15af035c7f5aa6b49c42ef") is None  # an md5 is not a sha1


def manifest(sizes, bundle=False):
    files = [ManifestFile(path=f"f{i}", platform_url=f"https://x/{i}", size=s) for i, s in enumerate(sizes)]
    return PlatformManifest("zenodo", "zenodo.org", "1", files, bundle_url="https://x/all.zip" if bundle else None)


@pytest.mark.parametrize(
    "sizes, bundle, thresholds, expected",
    [
        ([10], False, Thresholds(), "web-file"),
        ([64 * MiB], False, Thresholds(), "archiveorg-file"),
        ([10, 20], False, Thresholds(), "web-fileset"),
        ([10, 64 * MiB], False, Thresholds(), "archiveorg-fileset"),
        ([1] * 25, True, Thresholds(), "web-fileset-bundled"),
        ([4 * MiB] * 25, True, Thresholds(), "archiveorg-fileset-bundled"),
        ([1] * 10, True, Thresholds(), "web-fileset"),  # too few files to prefer the bundle
        ([1] * 300, True, Thresholds(), "web-fileset-bundled"),  # the bundle rescues "too many files"
        ([1] * 201, False, Thresholds(), "too-many-files"),
        ([65 * 1024 * MiB], False, Thresholds(), "too-large-size"),
        ([], False, Thresholds(), "empty-manifest"),
        ([10, 20, 30], False, Thresholds(web_max_file_size=25), "archiveorg-fileset"),
    ],
)
def test_strategy_choice(sizes, bundle, thresholds, expected):
    try:
        chosen = choose_strategy(manifest(sizes, bundle), thresholds)
    except DatasetIngestFailure as failure:
        chosen = failure.status
    assert chosen == expected


REG = stat.S_IFREG | 0o644
LNK = stat.S_IFLNK | 0o777


def refused(tmp_path, data: bytes, limits=Limits(), suffix=".zip") -> str:
    path = tmp_path / f"b{suffix}"
    path.write_bytes(data)
    with pytest.raises(DatasetIngestFailure) as caught:
        list_bundle(path, limits)
    assert caught.value.status == "bundle-unsafe"
    return caught.value.message


def test_zip_listing_hashes_entries_and_keeps_inner_links(tmp_path):
    data = zip_bytes([("data/a.csv", b"a,b\n", REG), ("data/latest.csv", "a.csv", LNK), ("data/", b"", stat.S_IFDIR)])
    path = tmp_path / "ok.zip"
    path.write_bytes(data)
    entries = list_bundle(path, Limits())
    assert [(e.path, e.link_target) for e in entries] == [("data/a.csv", None), ("data/latest.csv", "a.csv")]
    assert entries[0].digests.sha256 == hashlib.sha256(b"a,b\n").hexdigest()


@pytest.mark.parametrize(
    "entries, message",
    [
        ([("../../etc/cron.d/x", b"evil", REG)], "unsafe entry name '../../etc/cron.d/x'"),
        ([("/etc/passwd", b"evil", REG)], "unsafe entry name '/etc/passwd'"),
        ([("C:\\windows\\x", b"evil", REG)], "unsafe entry name"),
        ([("a/../../x", b"evil", REG)], "unsafe entry name"),
        ([("link", "/etc/passwd", LNK)], "points outside the archive"),
        ([("dir/link", "../../secret", LNK)], "points outside the archive"),
        ([("fifo", b"", stat.S_IFIFO | 0o644)], "is not a regular file"),
        ([("a", b"1", REG), ("a", b"2", REG)], "duplicate entry 'a'"),
        ([("zeros", bytes(8 * MiB), REG)], "compression ratio"),
    ],
)
@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_hostile_zips_are_refused(tmp_path, entries, message):
    assert message in refused(tmp_path, zip_bytes(entries))


def test_entry_count_and_size_limits(tmp_path):
    many = zip_bytes([(f"f{i}", b"x", REG) for i in range(6)])
    assert "zip has 6 members (limit 5)" in refused(tmp_path, many, Limits(max_members=5))
    big = zip_bytes([("a", os.urandom(5000), REG)])
    assert "uncompressed bytes" in refused(tmp_path, big, Limits(max_total_bytes=4000))
    assert "neither a zip nor a tar" in refused(tmp_path, b"just text", suffix=".bin")


def test_tar_bundles(tmp_path):
    path = tmp_path / "ok.tar.gz"
    path.write_bytes(tar_bytes([("d/a.txt", tarfile.REGTYPE, b"hello"), ("d/b.txt", tarfile.SYMTYPE, b"a.txt")]))
    entries = list_bundle(path, Limits())
    assert [(e.path, e.digests.md5 if e.digests else e.link_target) for e in entries] == [
        ("d/a.txt", hashlib.md5(b"hello").hexdigest()),
        ("d/b.txt", "a.txt"),
    ]
    for members, message in [
        ([("../x", tarfile.REGTYPE, b"x")], "unsafe entry name"),
        ([("l", tarfile.SYMTYPE, b"/etc/shadow")], "points outside"),
        ([("h", tarfile.LNKTYPE, b"../../etc/shadow")], "points outside"),
        ([("dev", tarfile.CHRTYPE, b"")], "special file"),
    ]:
        assert message in refused(tmp_path, tar_bytes(members), suffix=".tgz")


def test_safe_member_path():
    assert safe_member_path("./a//b/./c.txt") == "a/b/c.txt"
    assert safe_member_path("a\x00b") is None and safe_member_path("") is None and safe_member_path("..") is None


def test_urls_registered_for_datacite_dois_are_recognised(shared_fixtures):
    """The landing URLs DataCite holds for a Figshare dataset DOI and a Harvard Dataverse file DOI."""
    import json

    folder = shared_fixtures / "datasets"
    figshare = json.loads((folder / "datacite-api-figshare-dataset-1282478.json").read_text())["attributes"]
    dataverse = json.loads((folder / "datacite-api-harvard-dataverse-file-TSQFWC-YYTJ22.json").read_text())["attributes"]
    found = match_url(figshare["url"])  # http://, no type segment, no version
    assert (found.platform, found.platform_id, found.version) == ("figshare", "1282478", None)
    found = match_url(dataverse["url"])
    assert (found.platform, found.platform_id, found.scope) == ("dataverse", "doi:10.7910/DVN/TSQFWC/YYTJ22", "file")


def test_a_tar_gz_bomb_is_refused_by_its_compression_ratio(tmp_path):
    """zip entries had a ratio limit and tar bundles none: 50 MiB of zeros in a ~50 KiB .tar.gz."""
    zeros = tar_bytes([("data/zeros.bin", tarfile.REGTYPE, bytes(50 * 1024 * 1024))])
    assert len(zeros) < 100_000
    assert "compression ratio" in refused(tmp_path, zeros, Limits(max_ratio=200), suffix=".tar.gz")
    fine = tar_bytes([("data/random.bin", tarfile.REGTYPE, os.urandom(2 * 1024 * 1024))])  # ~1:1
    path = tmp_path / "fine.tar.gz"
    path.write_bytes(fine)
    assert [e.path for e in list_bundle(path, Limits())] == ["data/random.bin"]
