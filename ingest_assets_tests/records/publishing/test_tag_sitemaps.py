"""Tag sitemaps from the published index, as ingestion3's generate_tag_sitemap.py writes them, on real records
(Northwest Digital Heritage's DPLA documents and ingestion3 fixture, Florida's aviation record, Texas's, a Minnesota
record without tags), read back with ``resync``'s sitemap parser; and the index's tag scan on every backend."""

from __future__ import annotations

import gzip
import io
import json
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest
from resync.resource_list import ResourceList
from resync.sitemap import Sitemap

from ingest_assets.records.export.sitemaps import index_xml, shard_xml, write_tag_sitemaps
from ingest_assets.records.indexing.search_index import TAG_PAGE
from ingest_assets.storage import LocalStorage
from ingest_assets_tests.support.wikimedia import fixture_records, publish_day, published_document_record

ALIAS = "dpla-map4"
DAY = date(2026, 1, 15)
NOW = datetime(2026, 1, 16, 4, 0, tzinfo=timezone.utc)
TAGS = ["nwdh", "aviation", "texas", "blackwomensuffrage"]


def parsed(data: bytes) -> tuple[bool, list[str], set[str]]:
    """``(is an index, its locations in order, their lastmods)`` as resync reads a sitemap."""
    sitemap, resources = Sitemap(), ResourceList()
    sitemap.parse_xml(io.BytesIO(data), resources=resources)
    return sitemap.parsed_index, [r.uri for r in resources], {r.lastmod for r in resources}


@pytest.mark.parametrize("search_backend", ["embedded"])
def test_a_sitemap_per_tag_of_the_published_records(shared_fixtures, tmp_path, publisher):
    storage = LocalStorage(tmp_path / "storage")
    ingestion3 = shared_fixtures / "ingestion3"
    published = {
        "nwdh": [published_document_record("northwest-heritage-084fd481.json"),
                 published_document_record("northwest-heritage-6cec302e.json"),
                 *fixture_records("northwest-heritage", ingestion3 / "northwest-heritage.xml")],
        "fl": fixture_records("fl", ingestion3 / "fl.json"),
        "tx": fixture_records("tx", ingestion3 / "tx.xml"),
        "mdl": [published_document_record("mdl-43a2f678.json")],
    }
    for provider, records in published.items():
        assert publish_day(storage, publisher, provider, DAY, records)[1].promoted
    ids = {provider: sorted(r["id"] for r in records) for provider, records in published.items()}

    written = write_tag_sitemaps(storage, publisher.index.tagged(ALIAS, TAGS), TAGS, NOW, "https://dp.la/item",
                                 "https://sitemaps.dp.la", shard_size=2)

    root = Path(storage.uri("_sitemaps"))
    assert {tag: s.urls for tag, s in written.items()} == {"nwdh": 3, "aviation": 1, "texas": 1, "blackwomensuffrage": 0}
    is_index, shards, lastmods = parsed((root / "sitemap/nwdh/all_item_urls.xml").read_bytes())
    assert is_index and lastmods == {"2026-01-16T04:00:00Z"}
    assert shards == [f"https://sitemaps.dp.la/sitemap/nwdh/20260116-040000/all_item_urls_{n}.xml.gz" for n in (1, 2)]
    urls = []
    for shard in shards:
        is_index, locations, _ = parsed(gzip.decompress((root / shard.removeprefix("https://sitemaps.dp.la/")).read_bytes()))
        assert not is_index and len(locations) <= 2
        urls += locations
    assert urls == [f"https://dp.la/item/{i}" for i in ids["nwdh"]]  # by id, as DPLA's scan sorts them
    aviation = gzip.decompress((root / "sitemap/aviation/20260116-040000/all_item_urls_1.xml.gz").read_bytes())
    assert parsed(aviation)[1] == [f"https://dp.la/item/{ids['fl'][0]}"]
    assert not (root / "sitemap/blackwomensuffrage").exists()  # no record carries it: nothing written

    # the next generations: the index is replaced, the one it replaces is kept, older ones go
    for hours in (1, 2):
        again = write_tag_sitemaps(storage, publisher.index.tagged(ALIAS, TAGS), TAGS, NOW + timedelta(hours=hours),
                                   "https://dp.la/item", "https://sitemaps.dp.la")
    assert sorted(p.name for p in (root / "sitemap/nwdh").iterdir()) == ["20260116-050000", "20260116-060000",
                                                                        "all_item_urls.xml"]
    assert again["nwdh"].removed == ["20260116-040000"]
    assert parsed((root / "sitemap/nwdh/all_item_urls.xml").read_bytes())[1] == [
        "https://sitemaps.dp.la/sitemap/nwdh/20260116-060000/all_item_urls_1.xml.gz"]


def test_the_xml_is_generate_tag_sitemaps():
    """Byte for byte the format of generate_tag_sitemap.py's _build_shard and _build_index (values escaped)."""
    assert shard_xml(["https://dp.la/item/a", "https://dp.la/item/b&c"], "2026-01-16T04:00:00Z") == (
        '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        "  <url>\n    <loc>https://dp.la/item/a</loc>\n    <lastmod>2026-01-16T04:00:00Z</lastmod>\n  </url>\n"
        "  <url>\n    <loc>https://dp.la/item/b&amp;c</loc>\n    <lastmod>2026-01-16T04:00:00Z</lastmod>\n  </url>\n"
        "</urlset>")
    assert index_xml(["https://sitemaps.dp.la/sitemap/nwdh/20260116-040000/all_item_urls_1.xml.gz"],
                     "2026-01-16T04:00:00Z") == (
        '<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        "  <sitemap>\n    <loc>https://sitemaps.dp.la/sitemap/nwdh/20260116-040000/all_item_urls_1.xml.gz</loc>\n"
        "    <lastmod>2026-01-16T04:00:00Z</lastmod>\n  </sitemap>\n</sitemapindex>")


# one server case: Elasticsearch is reached through the same client API (the scan passed on it as well)
@pytest.mark.parametrize("search_backend", ["embedded", "opensearch"])
def test_the_tag_scan_pages_through_the_alias_by_id(shared_fixtures, search):
    """More documents than a page, over two providers' indices behind the alias: each tagged one once, by id."""
    [template] = fixture_records("northwest-heritage", shared_fixtures / "ingestion3" / "northwest-heritage.xml")
    untagged = {key: value for key, value in json.loads(template["document"]).items() if key != "tags"}

    def record(n: int, tags: list[str]) -> dict:
        document = {**untagged, "id": f"{n:032x}", **({"tags": tags} if tags else {})}
        return {"id": document["id"], "deleted": False, "document": json.dumps(document)}

    first = [record(n, ["nwdh"] if n % 3 else ["nwdh", "aviation"]) for n in range(0, 2 * TAG_PAGE + 2, 2)]
    second = [record(n, [] if n % 5 == 0 else ["texas"]) for n in range(1, 2 * TAG_PAGE, 2)]
    names = []
    for provider, records in (("nwdh", first), ("tx", second)):
        names.append(search.create_index(ALIAS, provider))
        search.write(names[-1], records)
    search.update_alias(ALIAS, add=names)

    scanned = list(search.tagged(ALIAS, ["aviation", "texas"]))

    expected = sorted([(r["id"], ["aviation"]) for r in first if "aviation" in r["document"]] +
                      [(r["id"], ["texas"]) for r in second if "texas" in r["document"]])
    assert scanned == expected and len(scanned) > TAG_PAGE
    assert list(search.tagged(ALIAS, [])) == [] and list(search.tagged(ALIAS, ["none"])) == []
