"""Counts reconcile across stages; a stage that loses records is caught and the lost ids are named."""

from datetime import date, datetime, timezone

import pytest

from ingest_assets.records.harvest.original import original_record
from ingest_assets.records.mapping import mint_id
from ingest_assets.records.audit.reconcile import MAX_MISSING, harvest_balance, indexing_balance, mapping_balance
from ingest_assets.records.engines.steps import RecordActivity, in_process
from ingest_assets.core.registry import ProviderEntry
from ingest_assets.storage.activities import RecordSource, RecordStream, write_activity
from ingest_assets.storage.avro import INDEX_RECORD, MAP_RECORD, ORIGINAL_RECORD

DAY = date(2026, 1, 15)
ENTRY = ProviderEntry("riverside", {"label": "Riverside Historical Society", "mapping": "oai_dc"})
DC = ('<oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/" xmlns:dc="http://purl.org/dc/elements/1.1/">'
      "<dc:title>Mill race at Millbrook, plate {n}</dc:title><dc:publisher>Riverside Historical Society</dc:publisher>"
      "<dc:identifier>https://riverside.example.org/items/{n}</dc:identifier>{rights}</oai_dc:dc>")
RIGHTS = "<dc:rights>http://rightsstatements.org/vocab/NoC-US/1.0/</dc:rights>"


def _originals(count: int) -> list[dict]:
    """``count`` records: every 5th deleted at the source, every 7th without rights (mapping refuses it)."""
    records = []
    for n in range(1, count + 1):
        document = DC.format(n=n, rights="" if n % 7 == 0 else RIGHTS)
        records.append(original_record("riverside", f"oai:riverside:{n}", 1, document, "application/xml", n % 5 == 0))
    return records


def _write(storage, activity, schema, stream: RecordStream, second: int) -> RecordSource:
    started = datetime(2026, 1, 16, 2, 0, second, tzinfo=timezone.utc)
    result = write_activity(storage, stream, provider="riverside", activity=activity, day=DAY, started=started,
                            schema=schema, partition=f"{DAY}|riverside")
    return RecordSource(storage, result.output)


def _stage(storage, activity, inputs, second, drop=frozenset()):
    """``activity`` on ``inputs`` in process, written as the pipeline writes it; ids in ``drop`` never reach the
    output, while the stage's own counts still claim them (a stage that silently loses records)."""
    stream = in_process(RecordActivity(activity, ENTRY), inputs)
    stream.records = (r for r in stream.records if r["id"] not in drop)
    schema = INDEX_RECORD if activity == "indexing" else MAP_RECORD
    return _write(storage, activity, schema, stream, second)


@pytest.fixture
def harvest(tmp_storage):
    originals = _originals(30)
    summary = {"records": 30, "deleted": 6, "failed": 0}
    return _write(tmp_storage, "harvest", ORIGINAL_RECORD, RecordStream(originals, summary=lambda: summary), 0)


def test_a_complete_pipeline_balances_at_every_stage(tmp_storage, harvest):
    mapping = _stage(tmp_storage, "mapping", [harvest], 1)
    enrichment = _stage(tmp_storage, "enrichment", [mapping], 2)
    _stage(tmp_storage, "indexing", [enrichment, harvest], 3)

    books = mapping_balance(tmp_storage, ENTRY, DAY)
    assert books.balanced and not books.missing
    # 30 harvested: 6 deleted at the source, 4 without rights (7, 14, 21, 28), 20 mapped
    assert books.equation() == "harvested 30 = mapped 20 + mapping failures 4 + deletions 6"
    books = indexing_balance(tmp_storage, ENTRY, DAY)
    assert books.equation() == "enriched 20 + harvest deletions 6 + absences 0 = index documents and deletions 26"
    assert books.balanced


def test_a_mapping_that_loses_records_names_them_and_not_its_failures(tmp_storage, harvest):
    lost = [mint_id("riverside", "oai:riverside:3"), mint_id("riverside", "oai:riverside:11")]
    _stage(tmp_storage, "mapping", [harvest], 1, drop=set(lost))

    books = mapping_balance(tmp_storage, ENTRY, DAY)
    assert not books.balanced
    assert books.equation() == "harvested 30 ≠ mapped 18 + mapping failures 4 + deletions 6"
    assert sorted(books.missing) == sorted(lost) and books.missing_count == 2  # records 7, 14... failed: not named
    assert books.describe().startswith("mapping of riverside on 2026-01-15: harvested 30 ≠")
    assert lost[0] in books.describe()


def test_an_index_that_loses_documents_and_deletions_names_them(tmp_storage, harvest):
    mapping = _stage(tmp_storage, "mapping", [harvest], 1)
    enrichment = _stage(tmp_storage, "enrichment", [mapping], 2)
    lost = {mint_id("riverside", "oai:riverside:1"), mint_id("riverside", "oai:riverside:10")}  # a document, a deletion
    _stage(tmp_storage, "indexing", [enrichment, harvest], 3, drop=lost)

    books = indexing_balance(tmp_storage, ENTRY, DAY)
    assert not books.balanced and set(books.missing) == lost


def test_missing_ids_are_counted_in_full_and_named_up_to_the_limit(tmp_storage):
    originals = _originals(200)
    harvest = _write(tmp_storage, "harvest", ORIGINAL_RECORD, RecordStream(originals), 0)
    _stage(tmp_storage, "mapping", [harvest], 1, drop={mint_id("riverside", r["id"]) for r in originals})

    books = mapping_balance(tmp_storage, ENTRY, DAY)
    mappable = sum(1 for n in range(1, 201) if n % 5 and n % 7)
    assert books.missing_count == mappable and len(books.missing) == MAX_MISSING
    assert f"{mappable} missing id(s) (first {MAX_MISSING})" in books.describe()


def test_the_books_judge_the_harvest_the_stage_read_not_a_newer_one(tmp_storage, harvest):
    _stage(tmp_storage, "mapping", [harvest], 1)
    _write(tmp_storage, "harvest", ORIGINAL_RECORD, RecordStream(_originals(40)), 5)  # harvested again, not mapped yet
    assert mapping_balance(tmp_storage, ENTRY, DAY).balanced


@pytest.mark.parametrize(("announced", "balanced"), [(32, True), (33, False)])
def test_the_harvest_against_the_size_its_source_announced(tmp_storage, announced, balanced):
    summary = {"records": 30, "failed": 1, "duplicates": 1, "expected": announced}
    _write(tmp_storage, "harvest", ORIGINAL_RECORD, RecordStream(_originals(30), summary=lambda: summary), 0)
    books = harvest_balance(tmp_storage, "riverside", DAY)
    assert books.balanced is balanced
    assert books.equation() == f"announced {announced} {'=' if balanced else '≠'} harvested 30 + unreadable 1 + duplicates 1"


def test_nothing_to_judge_without_an_announced_size_or_outputs(tmp_storage, harvest):
    assert harvest_balance(tmp_storage, "riverside", DAY) is None
    assert mapping_balance(tmp_storage, ENTRY, DAY) is None
    assert indexing_balance(tmp_storage, ENTRY, DAY) is None


def test_harvest_deletions_are_counted_when_the_harvest_summary_has_none(tmp_storage):
    """A harvest output written by other software (no summary): its deletions are counted in its records."""
    harvest = _write(tmp_storage, "harvest", ORIGINAL_RECORD, RecordStream(_originals(30)), 0)
    mapping = _stage(tmp_storage, "mapping", [harvest], 1)
    _stage(tmp_storage, "indexing", [_stage(tmp_storage, "enrichment", [mapping], 2), harvest], 3)
    books = indexing_balance(tmp_storage, ENTRY, DAY)
    assert books.balanced and books.equation() == "enriched 20 + harvest deletions 6 + absences 0 = index documents and deletions 26"


def test_absences_are_counted_and_one_lost_by_indexing_is_named(tmp_storage):
    def full(count: int, second: int) -> RecordSource:
        summary = {"mode": "full", "records": count}
        return _write(tmp_storage, "harvest", ORIGINAL_RECORD, RecordStream(_originals(count), summary=lambda: summary),
                      second)

    full(30, 10)
    harvest = full(28, 20)  # 29 is gone (30 was deleted at the source already)
    enrichment = _stage(tmp_storage, "enrichment", [_stage(tmp_storage, "mapping", [harvest], 21)], 22)
    absent = mint_id("riverside", "oai:riverside:29")
    indexing = _stage(tmp_storage, "indexing", [enrichment, harvest], 23, drop={absent})

    assert indexing.manifest().extra["Summary absent"] == "1"
    books = indexing_balance(tmp_storage, ENTRY, DAY)
    assert not books.balanced and books.missing == (absent,)
    assert books.equation() == "enriched 19 + harvest deletions 5 + absences 1 ≠ index documents and deletions 24"
