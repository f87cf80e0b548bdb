"""Each output is read once: what a later step needs of an output is counted while the output is written.

Indexing reads the harvest for its deletions only when the harvest counted some; the day report takes the field
coverage of the enriched records from the enrichment output's ``_LOGS/coverage.json``. Each test damages the
output that must not be read again, so a second read fails the test. Real records: Zenodo's OAI-PMH page.
"""

from datetime import date, datetime, timezone

import pytest

from ingest_assets.core.errors import ParseError
from ingest_assets.core.registry import ProviderEntry
from ingest_assets.records.audit.reconcile import indexing_balance
from ingest_assets.records.engines.steps import RecordActivity, in_process
from ingest_assets.records.indexing import open_search_index
from ingest_assets.records.mapping.report import COVERAGE_LOG, Coverage
from ingest_assets.records.preview import read_inputs
from ingest_assets.records.mapping.profiles import PROFILES
from ingest_assets.records.publishing.report import build_report
from ingest_assets.storage.activities import RecordSource, RecordStream, write_activity
from ingest_assets.storage.avro import INDEX_RECORD, MAP_RECORD, ORIGINAL_RECORD, part_keys

DAY = date(2026, 2, 1)
ENTRY = ProviderEntry("zenodo", {"mapping": "oai_dc", "mapping_overrides": {  # what the page lacks, as a hub sets it
    "dataProvider": {"value": "Zenodo"}, "rights": {"value": "http://rightsstatements.org/vocab/InC/1.0/"}}})


def _write(storage, activity: str, stream: RecordStream, second: int) -> RecordSource:
    schema = {"harvest": ORIGINAL_RECORD, "indexing": INDEX_RECORD}.get(activity, MAP_RECORD)
    result = write_activity(storage, stream, provider="zenodo", activity=activity, day=DAY, schema=schema,
                            started=datetime(2026, 2, 2, 2, 0, second, tzinfo=timezone.utc), partition=f"{DAY}|zenodo")
    return RecordSource(storage, result.output)


def _stage(storage, activity: str, inputs: list[RecordSource], second: int) -> RecordSource:
    return _write(storage, activity, in_process(RecordActivity(activity, ENTRY), inputs), second)


def _damage(source: RecordSource) -> None:
    """Overwrite every part of ``source`` with bytes that are no Avro (reading it raises ParseError)."""
    for key in part_keys(source.storage, source.key):
        source.storage.write_bytes(key, b"not avro", overwrite=True)


@pytest.fixture
def harvest(tmp_storage, shared_fixtures) -> RecordSource:
    """The page's records as a harvest that counted its deletions (none) while writing, as every harvest does."""
    page = shared_fixtures / "oai-pmh" / "zenodo-listrecords-oai_dc.xml"
    originals = [r for r in read_inputs([str(page)], PROFILES["oai_dc"], "zenodo") if isinstance(r, dict)]
    assert originals and not any(r["deleted"] for r in originals)
    summary = {"mode": "incremental", "records": len(originals), "deleted": 0, "failed": 0}
    return _write(tmp_storage, "harvest", RecordStream(originals, summary=lambda: summary), 0)


def test_indexing_does_not_read_a_harvest_that_counts_no_deletions(tmp_storage, harvest):
    enrichment = _stage(tmp_storage, "enrichment", [_stage(tmp_storage, "mapping", [harvest], 1)], 2)
    _damage(harvest)
    indexing = _stage(tmp_storage, "indexing", [enrichment, harvest], 3)
    books = indexing_balance(tmp_storage, ENTRY, DAY)
    count = enrichment.manifest().record_count
    assert count and books.balanced and indexing.manifest().record_count == count
    assert books.equation() == f"enriched {count} + harvest deletions 0 + absences 0 = index documents and deletions {count}"


def test_indexing_reads_a_harvest_that_counts_deletions(tmp_storage, harvest):
    enrichment = _stage(tmp_storage, "enrichment", [_stage(tmp_storage, "mapping", [harvest], 1)], 2)
    summary = {**harvest.manifest().extra}
    counted = _write(tmp_storage, "harvest", RecordStream(list(harvest), summary=lambda: {"deleted": 1}), 4)
    assert summary["Summary deleted"] == "0" and counted.manifest().extra["Summary deleted"] == "1"
    _damage(counted)
    with pytest.raises(ParseError, match="damaged Avro part"):
        _stage(tmp_storage, "indexing", [enrichment, counted], 5)


def _report(tmp_path, indexing: RecordSource) -> dict:
    index = open_search_index(str(tmp_path / "index"))
    return build_report(ENTRY, DAY, indexing, index, None, None, set(), datetime(2026, 2, 2, 3, tzinfo=timezone.utc))


def test_the_day_report_takes_the_coverage_the_enrichment_counted_while_writing(tmp_path, tmp_storage, harvest):
    enrichment = _stage(tmp_storage, "enrichment", [_stage(tmp_storage, "mapping", [harvest], 1)], 2)
    indexing = _stage(tmp_storage, "indexing", [enrichment, harvest], 3)
    counted = Coverage()
    for record in enrichment:
        counted.add(record)
    kept = Coverage.from_bytes(tmp_storage.read_bytes(f"{enrichment.key}/{enrichment.output.log(COVERAGE_LOG)}"))
    assert kept.records == counted.records == enrichment.manifest().record_count
    assert kept.as_dict() == counted.as_dict() and counted.filled["title"] == counted.records
    _damage(enrichment)
    coverage = _report(tmp_path, indexing)["coverage"]
    assert coverage == {"records": counted.records, "fields": counted.as_dict()}


def test_an_enrichment_output_without_its_coverage_log_is_counted_again(tmp_path, tmp_storage, harvest):
    enrichment = _stage(tmp_storage, "enrichment", [_stage(tmp_storage, "mapping", [harvest], 1)], 2)
    indexing = _stage(tmp_storage, "indexing", [enrichment, harvest], 3)
    expected = _report(tmp_path, indexing)["coverage"]
    tmp_storage.delete(f"{enrichment.key}/{enrichment.output.log(COVERAGE_LOG)}")  # an output from before it was kept
    assert _report(tmp_path, indexing)["coverage"] == expected and expected["records"]
    _damage(enrichment)
    with pytest.raises(ParseError):
        _report(tmp_path, indexing)
