"""The Wikimedia export of a published day on real records (DPLA's Smithsonian document, ingestion3's SI and NARA
fixtures), published through the gates into the embedded index: Gate D first, then the folder ingestion3's
WikiMetadataEntry writes, read back with pyarrow."""

from __future__ import annotations

import json
from datetime import date, datetime, timezone
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from ingest_assets.core.registry import ProviderEntry, ReviewBlock
from ingest_assets.records.enrichment import chain_for
from ingest_assets.records.enrichment.institutions import institutions, parse_institutions
from ingest_assets.records.indexing import index_record
from ingest_assets.records.mapping import mapper_for, mint_id, minter_for
from ingest_assets.records.preview import read_inputs
from ingest_assets.records.mapping.profiles import PROFILES
from ingest_assets.records.publishing.takedowns import Target, Takedowns, take_down
from ingest_assets.records.wikimedia import GateRefused, export_published_day
from ingest_assets.records.wikimedia.export import PART, SUCCESS
from ingest_assets.storage import LocalStorage, layout
from ingest_assets.storage.manifest import Manifest
from ingest_assets_tests.support.wikimedia import fixture_records, own_table, publish_day, published_document_record

pytestmark = pytest.mark.parametrize("search_backend", ["embedded"])  # the gate and export read the SearchIndex API
ALIAS = "dpla-map4"
DAY, LATER = date(2026, 1, 15), date(2026, 1, 16)
NOW = datetime(2026, 1, 16, 4, 0, tzinfo=timezone.utc)
SI = minter_for(ProviderEntry("si", {"mapping": "si"}))
NARA = minter_for(ProviderEntry("nara", {"mapping": "nara"}))
# DPLA's Smithsonian document (smithsonian-4a338737.json) as we publish it: eligible once the NMAH may upload
KITTENS = """== {{int:filedesc}} ==
 {{ Artwork
   | Other fields 1 = {{ InFi | Creator | Needham, D; E.B. and E.C. Kellogg; Kelloggs & Thayer }}
   | title = Kittens
   | description = Colored print of three kittens playing with yarn on and around a stool. Stool is upholstered with \
brass tacks holding upholstery to the frame. Window in left background showing a garden view. Patterned carpet.; \
Currently not on view
   | date = 1846
   | permission = {{cc-zero}}
   | source = {{ DPLA
       | Q148584
       | hub = Q131626
       | url = http://n2t.net/ark:/65665/ng49ca746a1-387c-704b-e053-15f76fa0b4fa
       | dpla_id = 4a338737d97ababaf13f42be8e9bf1de
       | local_id =\x20
   }}
   | Institution = {{ Institution | wikidata = Q148584 }}
 }}"""


@pytest.fixture
def storage(tmp_path):
    return LocalStorage(tmp_path / "storage")


@pytest.fixture
def hub_table(tmp_path):
    """The hub's own table: DPLA's, with the National Museum of American History opted in."""
    path = own_table(tmp_path, {("Smithsonian Institution", "National Museum of American History"): True})
    return lambda: parse_institutions(path.read_bytes(), str(path))


def export(storage, publisher, provider, mint, day=DAY, table=institutions, started=NOW):
    return export_published_day(storage, publisher.index, ALIAS, publisher.ledger, publisher.journal, provider, mint,
                                day, started, table)


def test_a_published_day_exports_its_eligible_records_as_ingestion3_writes_them(
        shared_fixtures, storage, publisher, hub_table):
    kittens = published_document_record("smithsonian-4a338737.json")
    anacostia = fixture_records("si", shared_fixtures / "ingestion3" / "si.xml")  # no rights statement, not opted in
    source, published = publish_day(storage, publisher, "si", DAY, [kittens, *anacostia])
    assert published.promoted

    gate, wiki = export(storage, publisher, "si", SI, table=hub_table)

    assert gate.passed and gate.evidence["live_index"] == published.candidate.name
    assert (wiki.read, wiki.not_live, wiki.eligible) == (2, 0, 1)
    assert wiki.failed == {"institution": 1, "rights": 1}
    assert wiki.key == "si/wiki/20260115/20260116_040000-si-wiki.parquet"
    folder = Path(storage.uri(wiki.key))
    assert sorted(p.name for p in folder.iterdir()) == ["_MANIFEST", SUCCESS, PART]
    table = pq.read_table(folder / PART)
    assert table.column_names == ["_1", "_2", "_3", "_4", "_5"]  # Spark's names of WikimediaMetadataExecutor's tuple
    assert [f.metadata[b"name"] for f in table.schema] == [b"dplaId", b"wikiMarkup", b"iiifManifest", b"mediaMaster",
                                                            b"title"]
    [row] = table.to_pylist()
    assert row == {"_1": "4a338737d97ababaf13f42be8e9bf1de", "_2": KITTENS, "_3": "",
                   "_4": ["https://ids.si.edu/ids/deliveryService?id=NMAH-2003-24633-000001"], "_5": "Kittens"}
    manifest = Manifest.from_bytes((folder / "_MANIFEST").read_bytes())
    assert (manifest.activity, manifest.record_count, manifest.partition) == ("wiki", 1, "2026-01-15")
    assert manifest.inputs == [source.output.relative] and manifest.extra["Index"] == ALIAS
    assert manifest.extra["Summary read"] == "2" and manifest.extra["Summary failed_rights"] == "1"

    # DPLA's table as shipped: the NMAH may not upload; a second export in the same second takes the next one
    _, again = export(storage, publisher, "si", SI)
    assert again.eligible == 0 and again.failed == {"institution": 2, "rights": 1}
    assert again.key == "si/wiki/20260115/20260116_040001-si-wiki.parquet"
    assert pq.read_table(Path(storage.uri(again.key)) / PART).num_rows == 0
    assert layout.wiki_outputs(storage, "si", DAY) == [wiki.key, again.key]


def nara_variants(shared_fixtures, *local_ids: str) -> list[dict]:
    """ingestion3's NARA fixture record (NoC-US, NARA may upload) without its media, and copies of it with a media
    master under other NARA ids."""
    entry = ProviderEntry("nara", {"mapping": "nara"})
    [original] = read_inputs([str(shared_fixtures / "ingestion3" / "nara.xml")], PROFILES["nara"], "nara")
    mapped = mapper_for(entry).map(original).record
    assert mapped["mediaMaster"], "the fixture's digital objects map to a media master"
    mapped = {**mapped, "mediaMaster": [], "iiifManifest": None}
    variants = [mapped] + [{**mapped, "id": mint_id("nara", naid), "originalId": naid,
                            "mediaMaster": [f"https://catalog.archives.gov/OpaAPI/media/{naid}/content.jpg"]}
                           for naid in local_ids]
    return [index_record(chain_for(entry).enrich(record)[0]) for record in variants]


def test_blocked_and_taken_down_records_stay_off_commons(shared_fixtures, storage, publisher, engine):
    records = nara_variants(shared_fixtures, "100297392", "7000001", "7000002")  # the first: ignore-nara.txt's
    publish_day(storage, publisher, "nara", DAY, records)
    take_down(publisher.index, ALIAS, Takedowns(engine), [Target(records[3]["id"], "nara")], "rights holder", "test",
              NOW, lambda provider: None)

    _, wiki = export(storage, publisher, "nara", NARA)

    assert (wiki.read, wiki.not_live, wiki.eligible) == (4, 1, 1)
    assert wiki.failed == {"asset": 1, "id": 1}
    [row] = pq.read_table(Path(storage.uri(wiki.key)) / PART).to_pylist()
    assert row["_1"] == mint_id("nara", "7000001") and "permission = {{NoC-US | Q" in row["_2"]
    assert "| hub = Q518155" in row["_2"]


def test_gate_d_refuses_a_day_that_is_not_published_and_writes_nothing(shared_fixtures, storage, publisher):
    records = fixture_records("si", shared_fixtures / "ingestion3" / "si.xml")
    with pytest.raises(GateRefused, match="si 2026-01-15 is not published \\(it was never indexed\\)"):
        export(storage, publisher, "si", SI)
    publish_day(storage, publisher, "si", DAY, records, review=ReviewBlock(required=True))
    with pytest.raises(GateRefused) as held:
        export(storage, publisher, "si", SI)
    assert "is not published (si 2026-01-15: pending" in str(held.value)
    assert "ingest-assets review approve si --date 2026-01-15" in held.value.hint
    assert held.value.result.evidence["state"] == "pending"

    publish_day(storage, publisher, "si", LATER, records)
    assert export(storage, publisher, "si", SI, day=LATER)[0].passed
    publisher.remove("si", reason="hub withdrew")  # off the alias: its days are rolled back
    with pytest.raises(GateRefused, match="si 2026-01-16 is not published .*rolled_back"):
        export(storage, publisher, "si", SI, day=LATER)
    assert layout.wiki_outputs(storage, "si", DAY) == [] and len(layout.wiki_outputs(storage, "si", LATER)) == 1


def test_gate_d_refuses_a_provider_the_table_does_not_resolve(shared_fixtures, storage, publisher, tmp_path):
    publish_day(storage, publisher, "nara", DAY, nara_variants(shared_fixtures))
    smithsonian_only = json.dumps({"Smithsonian Institution": {"Wikidata": "Q131626", "upload": False}}).encode()
    with pytest.raises(GateRefused) as unresolved:
        export(storage, publisher, "nara", NARA, table=lambda: parse_institutions(smithsonian_only, "hub.json"))
    result = unresolved.value.result
    assert result.description == ("provider name 'National Archives and Records Administration' is not a hub with a "
                                  "Wikidata id in the institutions table (hub.json)")
    assert result.evidence["provider_names"] == ["National Archives and Records Administration"]
    assert "INGEST_WIKI_INSTITUTIONS" in result.remediation

    with pytest.raises(GateRefused, match="the institutions table is not JSON"):
        export(storage, publisher, "nara", NARA, table=lambda: parse_institutions(b"{", str(tmp_path / "broken.json")))
    assert layout.wiki_outputs(storage, "nara", DAY) == []
