"""Avro parts of real mapped and enriched records: what fastavro's union hints write is what plain fastavro writes."""

import copy
import io

import fastavro
import pytest

from ingest_assets.core.errors import IngestError
from ingest_assets.core.registry.entries import ProviderEntry
from ingest_assets.records.engines.steps import RecordActivity
from ingest_assets.records.mapping.profiles import PROFILES
from ingest_assets.records.preview import read_inputs
from ingest_assets.storage.avro import MAP_RECORD, part_keys, read_folder, schema_with_doc, write_parts

FIXTURES = {  # the records pipeline benchmark's kinds: oai_dc, QDC, MODS
    "oai_dc": "oai-pmh/zenodo-listrecords-oai_dc.xml",
    "qdc": "dpla/provider-maryland-cdm-oai_qdc-record.xml",
    "mods": "oai-pmh/harvard-librarycloud-listrecords-mods-resumption.xml",
}
REQUIRED = {"dataProvider": {"default": "Fixture Data Provider"},
            "rights": {"default": "http://rightsstatements.org/vocab/InC/1.0/"}}


@pytest.fixture
def real_records(shared_fixtures) -> list[dict]:
    """Mapped and enriched records of real oai_dc, QDC and MODS fixtures."""
    found = []
    for profile, name in FIXTURES.items():
        entry = ProviderEntry("fixture", {"mapping": profile, "mapping_overrides": REQUIRED})
        records = [o for o in read_inputs([str(shared_fixtures / name)], PROFILES[profile], "fixture")
                   if isinstance(o, dict) and not o.get("deleted")]
        for activity in ("mapping", "enrichment"):
            step = RecordActivity(activity, entry).steps(RecordActivity(activity, entry).new_report())[0]
            records = [r for r in map(step, records) if r is not None]
            found += records
    assert len(found) > 20 and any(r["sourceResource"]["subject"] for r in found)
    return found


def plain_fastavro(schema: dict, records: list[dict]) -> tuple[str, list[dict]]:
    """The header's schema text and the records read back of what plain fastavro writes (no hints, validated)."""
    buffer = io.BytesIO()
    fastavro.writer(buffer, schema, records, codec="snappy", validator=True)
    buffer.seek(0)
    read = fastavro.reader(buffer)
    return read.metadata["avro.schema"], list(read)


def test_parts_read_back_as_plain_fastavro_writes_them(real_records, tmp_storage):
    real_records[0] = {k: v for k, v in real_records[0].items() if k not in ("tags", "mediaMaster")}  # defaulted
    given = copy.deepcopy(real_records)
    schema = schema_with_doc(MAP_RECORD, "mapping of fixture")
    with tmp_storage.folder("out") as folder:
        stats = write_parts(folder, schema, real_records, provider="fixture", part_records=10)
        folder.write_bytes("_MANIFEST", b"{}")
    assert stats.records == len(real_records) and len(part_keys(tmp_storage, "out")) == len(stats.parts) > 1
    header, expected = plain_fastavro(schema, given)
    assert list(read_folder(tmp_storage, "out")) == expected
    assert real_records == given  # the records passed on to later steps are not changed
    for key in part_keys(tmp_storage, "out"):
        with tmp_storage.open_read(key) as handle:
            assert fastavro.reader(handle).metadata["avro.schema"] == header


@pytest.mark.parametrize("path, value", [
    (("hasView",), "https://example.org/view"),  # a string where an array belongs
    (("sourceResource", "subject"), "Asthma"),  # a string where an array of Concepts belongs
    (("sourceResource", "creator"), [{"name": 5}]),  # a number where a string belongs
    (("sourceResource", "spatial"), [{"city": "Annapolis"}]),  # a Place without its required name
    (("sourceResource", "date"), ["2008"]),  # a string where a TimeSpan belongs
])
def test_a_record_that_does_not_fit_is_rejected_naming_it(real_records, tmp_storage, path, value):
    bad = copy.deepcopy(real_records[1])
    (bad if len(path) == 1 else bad[path[0]])[path[-1]] = value
    with pytest.raises(IngestError) as caught, tmp_storage.folder("out") as folder:
        write_parts(folder, schema_with_doc(MAP_RECORD, "mapping of fixture"), [real_records[0], bad],
                    provider="fixture")
    assert "MAPRecord" in str(caught.value) and caught.value.provider == "fixture"
    assert caught.value.record == bad["id"] and caught.value.file == "part-00000.avro"
