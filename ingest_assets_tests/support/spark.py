"""A multi-part harvest of real oai_dc records for the Spark tests (every 17th a deletion, every 29th damaged)."""

from __future__ import annotations

from datetime import date, datetime, timezone
from pathlib import Path

from lxml import etree

from ingest_assets.core.registry import ProviderEntry
from ingest_assets.storage import layout
from ingest_assets.storage.activities import RecordSource
from ingest_assets.storage.avro import ORIGINAL_RECORD, schema_with_doc, write_parts
from ingest_assets.storage.manifest import Manifest

OAI = "http://www.openarchives.org/OAI/2.0/"
DAY = date(2026, 1, 15)
PROVIDER = "sparkdc"
SETTINGS = {"mapping": "oai_dc", "mapping_overrides": {  # what the fixtures lack for DPLA
    "dataProvider": {"value": "Fixture Data Provider"}, "rights": {"value": "http://rightsstatements.org/vocab/InC/1.0/"}}}
ENTRY = ProviderEntry(PROVIDER, SETTINGS)
PART_RECORDS = 60  # small parts: 4 input parts -> 4 Spark tasks on 2 cores
FIXTURE_FILES = ("oai-pmh/zenodo-listrecords-oai_dc.xml", "oai-pmh/cyberleninka-listrecords-cyrillic-dcterms.xml")



def fixture_originals(shared_fixtures: Path, count: int, started: datetime):
    """``count`` OriginalRecords from real oai_dc ListRecords (unique ids), every 17th a harvest deletion and
    every 29th a damaged document (a mapping failure)."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    base = []
    for name in FIXTURE_FILES:
        for record in etree.parse(str(shared_fixtures / name), parser).iter(f"{{{OAI}}}record"):
            if record.find(f"{{{OAI}}}metadata") is not None:
                ident = record.findtext(f"{{{OAI}}}header/{{{OAI}}}identifier").strip()
                base.append((ident, etree.tostring(record, encoding="unicode")))
    stamp = int(started.timestamp())
    for n in range(count):
        ident, doc = base[n % len(base)]
        unique = f"{ident}#{n}"
        doc = doc.replace(ident, unique, 1)
        deleted = n % 17 == 5
        if n % 29 == 7:
            doc = doc[: len(doc) // 2]
        yield {"id": unique, "ingestDate": stamp, "provider": PROVIDER, "document": "" if deleted else doc,
               "mimetype": "application_xml", "deleted": deleted}


def write_harvest(storage, shared_fixtures: Path, count: int = 4 * PART_RECORDS - 7, deletions: bool = True) -> RecordSource:
    """A complete harvest output of several part files (as a long harvest writes them). Without ``deletions`` its
    deleted records are left out and its ``_MANIFEST`` counts none, as our harvests count them."""
    started = datetime(2026, 1, 15, 6, 0, tzinfo=timezone.utc)
    output = layout.activity_output(PROVIDER, "harvest", DAY, started, layout.schema_name(ORIGINAL_RECORD))
    originals = (r for r in fixture_originals(shared_fixtures, count, started) if deletions or not r["deleted"])
    with storage.folder(output.folder) as folder:
        stats = write_parts(folder, schema_with_doc(ORIGINAL_RECORD, "test harvest"), originals, part_records=PART_RECORDS)
        manifest = Manifest("harvest", PROVIDER, output.schema, stats.records, started, "test", f"{DAY}|{PROVIDER}",
                            extra={} if deletions else {"Summary deleted": "0"})
        folder.write_bytes(layout.MANIFEST, manifest.to_bytes())
    return RecordSource(storage, output)
