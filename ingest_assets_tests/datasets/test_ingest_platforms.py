"""End to end against a local HTTP "platform" serving the shared Zenodo/Figshare/Dataverse fixtures."""

from __future__ import annotations

import io
import json
import os
import random
import zipfile

from warcio.archiveiterator import ArchiveIterator

from ingest_assets.datasets.deposit import item_name
from ingest_assets.datasets.ingest import ingest_request
from ingest_assets.datasets.model import IngestRequest
from ingest_assets.datasets.status import is_retryable
from ingest_assets.datasets.strategy import Thresholds

ZENODO = "zenodo-records-api-poster-4927605.json"
ZENODO_FILE = "21 0608 SPACE rubric_Final.pdf"
FIGSHARE = "figshare-v2-account-article-dataset-wb-fixture.json"
DANS = "dans-datastation-archaeology-dataset-AR-0IZ6LW.json"


def payload(size: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(size)


def serve_zenodo(platform, datasets_dir, content: bytes, *, adapt_checksum: bool):
    """The poster record. With ``adapt_checksum`` the fixture's md5 is replaced by the md5 of the bytes we
    serve (the real PDF is not in the fixtures), so verification can succeed; otherwise served verbatim."""
    doc = platform.fixture_json(datasets_dir / ZENODO)
    if adapt_checksum:
        import hashlib

        doc["files"][0]["checksum"] = "md5:" + hashlib.md5(content).hexdigest()
    platform.route("/records/4927605", "<html><head><title>SPACE</title></head></html>", content_type="text/html")
    platform.route("/api/records/4927605", doc)
    platform.route(f"/api/records/4927605/files/{ZENODO_FILE}/content", content, content_type="application/pdf")
    return doc


def read_warc(storage, prefix="_datasets-web"):
    keys = list(storage.list_keys(prefix))
    assert len(keys) == 1, keys
    with storage.open_read(keys[0]) as handle:
        return keys[0], [
            (r.rec_headers.get_header("WARC-Target-URI"), r.content_stream().read(), r.rec_headers)
            for r in ArchiveIterator(handle)
            if r.rec_type == "response"
        ]


def test_zenodo_records_url_single_file_is_web_file_with_warc(platform, datasets_dir, make_ctx, hashes, tmp_storage):
    content = payload(231392, 1)  # the size the record declares
    serve_zenodo(platform, datasets_dir, content, adapt_checksum=True)
    ctx = make_ctx()
    result = ingest_request(IngestRequest(base_url=f"{platform.base}/records/4927605"), ctx)

    assert (result.status, result.ingest_strategy, result.platform, result.platform_id) == (
        "success-file", "web-file", "zenodo", "4927605")  # fmt: skip
    assert result.hit and result.file_count == 1 and result.total_size == 231392
    entry = result.manifest[0]
    assert entry["path"] == ZENODO_FILE and entry["status"] == "success"
    assert {k: entry[k] for k in ("md5", "sha1", "sha256")} == hashes(content)
    assert len(result.terminal_dt) == 14 and len(result.terminal_sha1hex) == 40
    key, records = read_warc(tmp_storage)
    assert entry["extra"]["warc"] == key and entry["extra"]["offset"] > 0
    assert [(uri, body) for uri, body, _ in records] == [(entry["platform_url"], content)]
    # the stored result round-trips through the table
    assert ctx.store.get("dataset", result.base_url).manifest == result.manifest


def test_zenodo_declared_md5_that_does_not_match_is_mismatch_md5(platform, datasets_dir, make_ctx, tmp_storage):
    serve_zenodo(platform, datasets_dir, payload(231392, 2), adapt_checksum=False)  # verbatim fixture md5
    result = ingest_request(IngestRequest(base_url=f"{platform.base}/records/4927605"), make_ctx())
    assert result.status == "mismatch-md5" and not result.hit and not is_retryable(result.status)
    assert result.manifest[0]["status"] == "mismatch-md5"
    assert result.manifest[0]["md5"] == "673ab5bbfb15af035c7f5aa6b49c42ef"  # the declared value is kept
    assert list(tmp_storage.list_keys("_datasets-web")) == []  # nothing half-archived


def test_zenodo_short_download_is_mismatch_size(platform, datasets_dir, make_ctx):
    serve_zenodo(platform, datasets_dir, payload(1000, 3), adapt_checksum=False)
    platform.route("/record/4927605", "<html></html>", content_type="text/html")
    result = ingest_request(IngestRequest(base_url=f"{platform.base}/record/4927605"), make_ctx())  # legacy /record/
    assert result.platform_id == "4927605" and result.status == "mismatch-size"


def test_doi_is_resolved_then_matched(platform, datasets_dir, make_ctx):
    serve_zenodo(platform, datasets_dir, payload(231392, 1), adapt_checksum=True)
    platform.redirect("/doi/10.5281/zenodo.4927605", f"{platform.base}/records/4927605")
    result = ingest_request(IngestRequest(base_url="doi:10.5281/zenodo.4927605"), make_ctx())
    assert result.status == "success-file" and result.platform == "zenodo"
    assert result.hops == [f"{platform.base}/doi/10.5281/zenodo.4927605", f"{platform.base}/records/4927605"]


def test_signposting_cite_as_and_citation_doi_lead_to_the_platform(platform, datasets_dir, make_ctx):
    serve_zenodo(platform, datasets_dir, payload(231392, 1), adapt_checksum=True)
    platform.redirect("/doi/10.5281/zenodo.4927605", f"{platform.base}/records/4927605")
    platform.route(
        "/landing/poster",
        "<html><head></head><body>poster</body></html>",
        content_type="text/html",
        headers=[("Link", '<https://doi.org/10.5281/zenodo.4927605>; rel="cite-as"')],
    )
    platform.route(
        "/landing/meta",
        '<html><head><meta name="citation_doi" content="10.5281/zenodo.4927605"></head></html>',
        content_type="text/html",
    )
    ctx = make_ctx()
    for path in ("/landing/poster", "/landing/meta"):
        result = ingest_request(IngestRequest(base_url=f"{platform.base}{path}"), ctx)
        assert (result.status, result.platform, result.platform_id) == ("success-file", "zenodo", "4927605"), path


def test_landing_page_without_platform_is_no_platform_match(platform, make_ctx):
    platform.route("/about", "<html><body>nothing here</body></html>", content_type="text/html")
    result = ingest_request(IngestRequest(base_url=f"{platform.base}/about"), make_ctx())
    assert result.status == "no-platform-match" and is_retryable(result.status)  # other hosts configured may match


def test_direct_file_is_web_file(platform, make_ctx, hashes):
    data = b"id,value\n1,2\n"
    platform.route("/files/data.csv", data, content_type="text/csv")
    result = ingest_request(IngestRequest(base_url=f"{platform.base}/files/data.csv"), make_ctx())
    assert (result.status, result.platform, result.ingest_strategy) == ("success-file", "direct", "web-file")
    assert result.terminal_sha1hex == hashes(data)["sha1"] and result.manifest[0]["mimetype"] == "text/csv"


def serve_figshare(platform, datasets_dir, contents: dict[str, bytes] | None):
    """The public article 8263811 (v3, four files). The fixture wraps account-API answers as
    ``{"private": ..., "public": ...}``; the public ``/v2/articles/{id}`` answer is the ``public`` object.
    With ``contents`` the declared md5s are replaced by those of the bytes we serve (file bytes are not in
    the fixture); without, files of the declared size with other bytes are served."""
    import hashlib

    article = platform.fixture_json(datasets_dir / FIGSHARE)["public"]
    served = {}
    for entry in article["files"]:
        data = (contents or {}).get(entry["name"]) or payload(entry["size"], entry["id"])
        if contents:
            entry["computed_md5"] = entry["supplied_md5"] = hashlib.md5(data).hexdigest()
            entry["size"] = len(data)
        served[entry["name"]] = data
        platform.route("/files/" + entry["download_url"].rsplit("/", 1)[1], data, content_type="text/plain")
    platform.route("/articles/Dataset01_txt/8263811", "<html></html>", content_type="text/html")
    platform.route("/v2/articles/8263811", article)
    return article, served


def test_figshare_url_without_version_is_latest_web_fileset(platform, datasets_dir, make_ctx, tmp_storage):
    names = ["Dataset02.txt", "Dataset01.txt", "Dataset04.txt", "Dataset03.txt"]
    article, served = serve_figshare(platform, datasets_dir, {n: f"row {n}\n".encode() * 3 for n in names})
    result = ingest_request(IngestRequest(base_url=f"{platform.base}/articles/Dataset01_txt/8263811"), make_ctx())
    assert (result.status, result.ingest_strategy, result.platform_id) == ("success", "web-fileset", "8263811.v3")
    assert [m["path"] for m in result.manifest] == names
    _key, records = read_warc(tmp_storage)
    assert sorted(body for _uri, body, _h in records) == sorted(served.values())
    assert all(h.get_header("WARC-Payload-Digest").startswith("sha1:") for _u, _b, h in records)


def test_figshare_verbatim_md5s_do_not_match_other_bytes(platform, datasets_dir, make_ctx):
    serve_figshare(platform, datasets_dir, None)
    result = ingest_request(IngestRequest(base_url=f"{platform.base}/articles/Dataset01_txt/8263811"), make_ctx())
    assert result.status == "mismatch-md5"
    assert [m.get("status") for m in result.manifest][:1] == ["mismatch-md5"]


def test_figshare_download_all_zip_is_bundled_and_listed(platform, datasets_dir, make_ctx, zip_of, hashes, tmp_storage):
    names = ["Dataset02.txt", "Dataset01.txt", "Dataset04.txt", "Dataset03.txt"]
    contents = {n: f"{n} " .encode() * 40 for n in names}
    serve_figshare(platform, datasets_dir, contents)
    bundle = zip_of({**contents, "README.txt": b"bundle extra"})
    platform.route("/articles/8263811/versions/3", bundle, content_type="application/zip")
    ctx = make_ctx(thresholds=Thresholds(bundle_min_files=2))
    result = ingest_request(IngestRequest(base_url=f"{platform.base}/articles/Dataset01_txt/8263811"), ctx)
    assert (result.status, result.ingest_strategy) == ("success", "web-fileset-bundled")
    by_path = {m["path"]: m for m in result.manifest}
    assert set(by_path) == {*names, "README.txt"} and by_path["README.txt"]["extra"]["bundle_only"]
    assert by_path["Dataset03.txt"]["sha256"] == hashes(contents["Dataset03.txt"])["sha256"]
    assert result.item_bundle_path == "figshare-127.0.0.1-8263811.v3.zip"  # the URL names no file
    _key, records = read_warc(tmp_storage)
    assert [uri for uri, _b, _h in records] == [f"{platform.base}/articles/8263811/versions/3"]


def test_hostile_bundle_with_dotdot_entry_is_refused(platform, datasets_dir, make_ctx, tmp_storage):
    names = ["Dataset02.txt", "Dataset01.txt", "Dataset04.txt", "Dataset03.txt"]
    contents = {n: n.encode() for n in names}
    serve_figshare(platform, datasets_dir, contents)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in contents.items():
            archive.writestr(name, data)
        archive.writestr("../../etc/cron.d/evil", b"* * * * * root true")
    platform.route("/articles/8263811/versions/3", buffer.getvalue(), content_type="application/zip")
    ctx = make_ctx(thresholds=Thresholds(bundle_min_files=2))
    result = ingest_request(IngestRequest(base_url=f"{platform.base}/articles/Dataset01_txt/8263811"), ctx)
    assert result.status == "bundle-unsafe" and "../../etc/cron.d/evil" in result.error_message
    assert list(tmp_storage.list_keys("_datasets-web")) == []


def test_oversize_fileset_and_too_many_files(platform, datasets_dir, make_ctx):
    serve_figshare(platform, datasets_dir, None)
    url = f"{platform.base}/articles/Dataset01_txt/8263811"
    big = ingest_request(IngestRequest(base_url=url), make_ctx(thresholds=Thresholds(max_total_size=79)))
    assert big.status == "too-large-size" and big.total_size == 80 and big.file_count == 4
    many = ingest_request(IngestRequest(base_url=url, force_recrawl=True), make_ctx(thresholds=Thresholds(max_files=3)))
    assert many.status == "too-many-files" and not is_retryable(many.status)
    assert platform.hits["/files/15460985"] == 0  # refused before any download


def dans_envelope(datasets_dir, *, open_all: bool, sha1s: dict[str, str] | None = None):
    """The DANS fixture holds the version object under ``data``; the real ``/api/datasets/:persistentId``
    envelope is ``{"status": "OK", "data": {<dataset fields>, "latestVersion": <version>}}``, rebuilt here.
    ``open_all``/``sha1s`` lift the restriction and declare the served bytes' SHA-1 for the success case."""
    raw = json.loads((datasets_dir / DANS).read_text(encoding="utf-8"))
    version = raw.pop("data")
    for entry in version["files"]:
        if open_all:
            entry["restricted"] = False
        if sha1s is not None:
            entry["dataFile"]["checksum"]["value"] = sha1s[entry["dataFile"]["filename"]]
    return {"status": "OK", "data": {**raw, "latestVersion": version}}, version


def test_dataverse_restricted_files_are_platform_restricted(platform, datasets_dir, make_ctx):
    doc, _ = dans_envelope(datasets_dir, open_all=False)
    pid = "doi:10.17026/AR/0IZ6LW"
    platform.route(f"/dataset.xhtml?persistentId={pid}", "<html></html>", content_type="text/html")
    platform.route(f"/api/datasets/:persistentId/?persistentId={pid}", doc)
    result = ingest_request(IngestRequest(base_url=f"{platform.base}/dataset.xhtml?persistentId={pid}"), make_ctx())
    assert (result.status, result.platform, result.platform_id) == ("platform-restricted", "dataverse", pid)
    assert "2 of 9 files are restricted" in result.error_message


def test_dataverse_sha1_checksums_directory_labels_and_archiveorg_item(
    platform, datasets_dir, make_ctx, tmp_storage, hashes
):
    pid = "doi:10.17026/AR/0IZ6LW"
    _, version = dans_envelope(datasets_dir, open_all=True)
    contents = {f["dataFile"]["filename"]: payload(f["dataFile"]["filesize"], f["dataFile"]["id"]) for f in version["files"]}
    doc, version = dans_envelope(datasets_dir, open_all=True, sha1s={n: hashes(d)["sha1"] for n, d in contents.items()})
    for entry in version["files"]:
        platform.route(f"/api/access/datafile/{entry['dataFile']['id']}", contents[entry["dataFile"]["filename"]])
    platform.route(f"/dataset.xhtml?persistentId={pid}", "<html></html>", content_type="text/html")
    platform.route(f"/api/datasets/:persistentId/?persistentId={pid}", doc)
    ctx = make_ctx(thresholds=Thresholds(web_max_file_size=900_000))  # the largest image is 915177 bytes
    result = ingest_request(IngestRequest(base_url=f"{platform.base}/dataset.xhtml?persistentId={pid}"), ctx)
    assert (result.status, result.ingest_strategy) == ("success", "archiveorg-fileset")
    assert "images/PAN-00131054-001.jpg" in [m["path"] for m in result.manifest]
    folder = next(k for k in tmp_storage.list_children("_datasets-items"))
    keys = list(tmp_storage.list_keys(f"_datasets-items/{folder}"))
    item = result.item_name
    assert item.startswith("dataverse-127.0.0.1-doi_10.17026_AR_0IZ6LW")
    assert any(k.endswith(f"{item}_meta.xml") for k in keys)
    assert any(k.endswith("images/PAN-00131054-006.jpg") for k in keys)
    meta = tmp_storage.read_bytes(next(k for k in keys if k.endswith("_meta.xml"))).decode()
    assert "<mediatype>data</mediatype>" in meta and "<identifier>" + item in meta

    # the verbatim SHA-1s (other bytes served) fail as mismatch-sha1
    doc, _ = dans_envelope(datasets_dir, open_all=True)
    platform.route(f"/api/datasets/:persistentId/?persistentId={pid}", doc)
    url = f"{platform.base}/dataset.xhtml?persistentId={pid}"
    again = ingest_request(IngestRequest(base_url=url, force_recrawl=True), ctx)
    assert again.status == "mismatch-sha1"


def test_dataverse_file_level_pid_is_platform_scope(platform, make_ctx):
    pid = "doi:10.7910/DVN/TSQFWC/YYTJ22"  # the file DOI of the DataCite fixture
    platform.route(f"/file.xhtml?persistentId={pid}", "<html></html>", content_type="text/html")
    result = ingest_request(IngestRequest(base_url=f"{platform.base}/file.xhtml?persistentId={pid}"), make_ctx())
    assert result.status == "platform-scope"


def test_404s(platform, make_ctx):
    platform.route("/records/999", "<html></html>", content_type="text/html")  # the API answers 404
    gone = ingest_request(IngestRequest(base_url=f"{platform.base}/records/999"), make_ctx())
    assert gone.status == "platform-404" and not is_retryable(gone.status)
    missing = ingest_request(IngestRequest(base_url=f"{platform.base}/nothing"), make_ctx())
    assert (missing.status, missing.terminal_status_code) == ("terminal-bad-status", 404)


def test_resubmission_and_retryable_versus_final(platform, datasets_dir, make_ctx):
    ctx = make_ctx()
    # a retryable failure (the API is down) is processed again on the next run...
    platform.route("/records/4927605", "<html></html>", content_type="text/html")
    platform.route("/api/records/4927605", "down", status=503, content_type="text/plain")
    url = f"{platform.base}/records/4927605"
    first = ingest_request(IngestRequest(base_url=url), ctx)
    assert first.status == "platform-error" and is_retryable(first.status)
    serve_zenodo(platform, datasets_dir, payload(231392, 1), adapt_checksum=True)
    second = ingest_request(IngestRequest(base_url=url), ctx)
    assert second.status == "success-file"
    # ... a success is never fetched again unless forced
    hits = sum(platform.hits.values())
    third = ingest_request(IngestRequest(base_url=url), ctx)
    assert third.status == "success-existing" and third.manifest == second.manifest
    assert sum(platform.hits.values()) == hits
    assert ctx.store.get("dataset", url).status == "success-file"
    forced = ingest_request(IngestRequest(base_url=url, force_recrawl=True), ctx)
    assert forced.status == "success-file" and sum(platform.hits.values()) > hits
    # a final failure is not retried either
    platform.route("/records/998", "<html></html>", content_type="text/html")
    final = ingest_request(IngestRequest(base_url=f"{platform.base}/records/998"), ctx)
    hits = sum(platform.hits.values())
    repeat = ingest_request(IngestRequest(base_url=f"{platform.base}/records/998"), ctx)
    assert repeat.status == final.status == "platform-404"
    assert sum(platform.hits.values()) == hits


def test_archiveorg_item_url_builds_manifest_from_metadata_api(platform, make_ctx, hashes):
    """No archive.org fixture exists in ../shared; this metadata answer is hand-made in the API's shape
    (``files[]`` with string sizes, md5/sha1, ``source`` original/derivative/metadata)."""
    data = os.urandom(3000)
    h = hashes(data)
    platform.route("/details/example-dataset", "<html></html>", content_type="text/html")
    platform.route("/metadata/example-dataset", {
        "metadata": {"identifier": "example-dataset", "mediatype": "data", "title": "Example"},
        "files": [
            {"name": "table.csv", "source": "original", "size": "3000", "md5": h["md5"], "sha1": h["sha1"]},
            {"name": "table.csv_thumb.jpg", "source": "derivative", "size": "10"},
            {"name": "example-dataset_meta.xml", "source": "original", "size": "400"},
        ],
    })  # fmt: skip
    platform.route("/download/example-dataset/table.csv", data, content_type="text/csv")
    result = ingest_request(IngestRequest(base_url=f"{platform.base}/details/example-dataset"), make_ctx())
    assert (result.status, result.platform, result.file_count) == ("success-file", "archiveorg", 1)
    assert result.manifest[0]["sha256"] == h["sha256"]


def test_signposting_items_of_an_unknown_repository_are_the_fileset(platform, make_ctx, tmp_storage):
    platform.route("/files/a.csv", b"a\n1\n", content_type="text/csv")
    platform.route("/files/b.csv", b"b\n2\n", content_type="text/csv")
    links = ", ".join(f'<{platform.base}/files/{n}>; rel="item"; type="text/csv"' for n in ("a.csv", "b.csv"))
    page = "<html><body>dataset</body></html>"
    platform.route("/repo/dataset/7", page, content_type="text/html", headers=[("Link", links)])
    result = ingest_request(IngestRequest(base_url=f"{platform.base}/repo/dataset/7"), make_ctx())
    assert (result.status, result.platform, result.ingest_strategy) == ("success", "signposting", "web-fileset")
    assert [(m["path"], m["mimetype"], m["size"]) for m in result.manifest] == [
        ("a.csv", "text/csv", 4),
        ("b.csv", "text/csv", 4),
    ]
    _key, records = read_warc(tmp_storage)
    assert [body for _u, body, _h in records] == [b"a\n1\n", b"b\n2\n"]


def test_large_bundle_goes_to_an_archiveorg_item(platform, datasets_dir, make_ctx, zip_of, tmp_storage):
    names = ["Dataset02.txt", "Dataset01.txt", "Dataset04.txt", "Dataset03.txt"]
    contents = {n: os.urandom(300) for n in names}
    serve_figshare(platform, datasets_dir, contents)
    bundle = zip_of(contents)
    platform.route("/articles/8263811/versions/3", bundle, content_type="application/zip")
    ctx = make_ctx(thresholds=Thresholds(bundle_min_files=2, web_max_file_size=1000))
    result = ingest_request(IngestRequest(base_url=f"{platform.base}/articles/Dataset01_txt/8263811"), ctx)
    assert (result.status, result.ingest_strategy) == ("success", "archiveorg-fileset-bundled")
    assert result.item_name == "figshare-127.0.0.1-8263811.v3"
    keys = list(tmp_storage.list_keys("_datasets-items"))
    stored = next(k for k in keys if k.endswith("/" + result.item_bundle_path))
    assert tmp_storage.read_bytes(stored) == bundle
    assert all(m["extra"]["bundle"] == result.item_bundle_path for m in result.manifest)


def test_legacy_zenodo_record_with_bucket_file_links(platform, datasets_dir, make_ctx, hashes):
    """The pre-2023 API shape: ``files[].links.self`` under ``/api/files/<bucket>/``, a key with a '/'.
    The declared md5 is replaced by that of the bytes served (the zip itself is not in the fixtures)."""
    doc = platform.fixture_json(datasets_dir / "zenodo-legacy-records-api-software-7752775.json")
    entry = doc["files"][0]
    content = payload(entry["size"], 7)
    entry["checksum"] = "md5:" + hashes(content)["md5"]
    platform.route("/record/7752775", "<html></html>", content_type="text/html")
    platform.route("/api/records/7752775", doc)
    platform.route(entry["links"]["self"].removeprefix(platform.base), content, content_type="application/zip")
    result = ingest_request(IngestRequest(base_url=f"{platform.base}/record/7752775"), make_ctx())
    assert (result.status, result.ingest_strategy) == ("success-file", "web-file")
    assert result.manifest[0]["path"] == "front-matter/commonmeta-ruby-v3.0.1.zip"
    assert result.manifest[0]["sha1"] == hashes(content)["sha1"]  # computed, never taken from the md5


def test_control_characters_in_zenodo_metadata_are_dropped_from_the_item_meta_xml(
    platform, datasets_dir, make_ctx, tmp_storage
):
    """Zenodo titles/descriptions pasted from word processors carry C0 controls (and truncation leaves lone
    surrogates); the fixture's title and description get some, which XML 1.0 cannot hold."""
    doc = serve_zenodo(platform, datasets_dir, payload(231392, 3), adapt_checksum=True)
    metadata = doc["metadata"]
    metadata["title"] = metadata["title"].replace(": ", ":\x0c ", 1) + "\x00"
    metadata["description"] = metadata["description"].replace("</p>", "\x0b\ud83d\ufffe</p>")
    platform.route("/api/records/4927605", doc)
    ctx = make_ctx(thresholds=Thresholds(web_max_file_size=1000))
    result = ingest_request(IngestRequest(base_url=f"{platform.base}/records/4927605"), ctx)
    assert (result.status, result.ingest_strategy) == ("success-file", "archiveorg-file"), result.error_message
    meta_key = next(k for k in tmp_storage.list_keys("_datasets-items") if k.endswith(f"{result.item_name}_meta.xml"))
    meta = tmp_storage.read_bytes(meta_key).decode()
    assert "<title>SPACE to evolve academic assessment: A rubric for analyzing institutional" in meta
    assert "progress indicators</title>" in meta
    assert "assessment reform.&lt;/p&gt;</description>" in meta


def test_signposting_files_sharing_a_name_or_the_items_own_names_get_suffixes(platform, make_ctx, tmp_storage):
    landing = f"{platform.base}/repo/dataset/8"
    item = item_name("signposting", "127.0.0.1", landing)
    files = {"/v1/data.csv": b"v1\n", "/v2/data.csv": b"v2\n", "/files/_MANIFEST": b"mine\n",
             f"/files/{item}_meta.xml": b"<not-the-item-metadata/>"}  # fmt: skip
    for path, body in files.items():
        platform.route(path, body, content_type="text/plain")
    links = ", ".join(f'<{platform.base}{path}>; rel="item"' for path in files)
    platform.route("/repo/dataset/8", "<html><body>dataset</body></html>", content_type="text/html",
                   headers=[("Link", links)])  # fmt: skip
    ctx = make_ctx(thresholds=Thresholds(web_max_file_size=0))  # sizes are undeclared: an archive.org item
    result = ingest_request(IngestRequest(base_url=landing), ctx)
    assert (result.status, result.ingest_strategy) == ("success", "archiveorg-fileset"), result.error_message
    names = ["data.csv", "data-2.csv", "_MANIFEST-2", f"{item}_meta-2.xml"]
    assert [(m["path"], m.get("extra", {}).get("item_path")) for m in result.manifest] == [
        ("data.csv", None), ("data.csv", names[1]), ("_MANIFEST", names[2]), (f"{item}_meta.xml", names[3]),
    ]  # fmt: skip
    folder = "_datasets-items/" + next(iter(tmp_storage.list_children("_datasets-items")))
    stored = {k.rsplit("/", 1)[-1]: tmp_storage.read_bytes(k) for k in tmp_storage.list_keys(folder)}
    assert [stored[n] for n in names] == list(files.values())
    assert json.loads(stored["_MANIFEST"])["identifier"] == item
    assert [f["name"] for f in json.loads(stored["_MANIFEST"])["files"]] == names
    assert f"<identifier>{item}</identifier>" in stored[f"{item}_meta.xml"].decode()
    assert all(f'name="{n}"' in stored[f"{item}_files.xml"].decode() for n in names)


def test_batch_goes_on_after_a_platform_answer_nested_too_deeply(platform, datasets_dir, make_ctx):
    import io

    from ingest_assets.datasets.ingest import run_requests

    platform.route("/api/records/4927605", b"[" * 100_000 + b"]" * 100_000)
    platform.route("/records/4927605", "<html></html>", content_type="text/html")
    platform.route("/files/a.csv", b"x,y\n", content_type="text/csv")
    lines = [
        json.dumps({"base_url": f"{platform.base}/records/4927605"}),
        "[" * 100_000 + "]" * 100_000,  # a request line nested too deeply
        json.dumps({"base_url": f"{platform.base}/files/a.csv"}),
    ]
    out = io.StringIO()
    summary = run_requests(lines, make_ctx(), "batch.jsonl", out)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [row["status"] for row in rows] == ["platform-error", "invalid-request", "success-file"]
    assert "nested too deeply" in rows[0]["error_message"] and "line 2" in rows[1]["error_message"]
    assert summary.requests == 3 and summary.hits == 1


def test_unsafe_file_names_from_a_platform_are_final_and_named(platform, datasets_dir, make_ctx, tmp_storage):
    """A platform naming files '../x', '/abs', over-long, or a name that is also a folder: a final status naming
    the file (before: a retryable error, retried forever), and nothing downloaded."""
    content = payload(231392, 3)
    for hostile, why in [
        ("../../etc/passwd", "'..' segment"),
        ("/etc/passwd", "absolute"),
        ("x" * 300 + ".csv", "longer than 255 bytes"),
    ]:
        doc = serve_zenodo(platform, datasets_dir, content, adapt_checksum=True)
        doc["files"][0]["key"] = hostile
        platform.route("/api/records/4927605", doc)
        result = ingest_request(IngestRequest(base_url=f"{platform.base}/records/4927605", force_recrawl=True), make_ctx())
        assert result.status == "unsafe-file-name" and not is_retryable(result.status), result.error_message
        assert hostile[:40] in result.error_message and why in result.error_message and "4927605" in result.error_message
    doc = serve_zenodo(platform, datasets_dir, content, adapt_checksum=True)
    doc["files"] = [dict(doc["files"][0], key="data"), dict(doc["files"][0], key="data/inner.csv")]
    platform.route("/api/records/4927605", doc)
    result = ingest_request(IngestRequest(base_url=f"{platform.base}/records/4927605", force_recrawl=True), make_ctx())
    assert result.status == "unsafe-file-name" and "both a file and a folder" in result.error_message
    assert platform.hits[f"/api/records/4927605/files/{ZENODO_FILE}/content"] == 0
    assert list(tmp_storage.list_keys("_datasets-web")) == []


def test_a_mismatch_says_what_was_received(platform, datasets_dir, make_ctx):
    content = payload(231392, 2)
    serve_zenodo(platform, datasets_dir, content, adapt_checksum=False)
    result = ingest_request(IngestRequest(base_url=f"{platform.base}/records/4927605"), make_ctx())
    import hashlib

    assert result.status == "mismatch-md5"
    assert f"declared 673ab5bbfb15af035c7f5aa6b49c42ef, received {hashlib.md5(content).hexdigest()}" in result.error_message


def test_a_landing_page_cut_off_mid_body_is_a_fetch_error(make_ctx):
    """The connection breaks while the landing page is read: a network failure (retryable fetch-error), not the
    storage-error the bare requests exception (an OSError) used to become."""
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def serve():
        conn, _ = listener.accept()
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5000\r\n\r\n<html><body>")
        conn.close()
        listener.close()

    threading.Thread(target=serve, daemon=True).start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/landing"
    result = ingest_request(IngestRequest(base_url=url), make_ctx())
    assert result.status == "fetch-error" and is_retryable(result.status)
    assert "connection broke while reading the body" in result.error_message
