"""Parquet export of enriched records: row groups, the same records back through pyarrow and Spark, errors."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pyarrow.parquet as pq
import pytest

from ingest_assets.core.errors import IngestError
from ingest_assets.records.export.parquet import export_parquet
from ingest_assets.records.engines.steps import RecordActivity, in_process
from ingest_assets.storage import LocalStorage, layout
from ingest_assets.storage.activities import RecordSource, write_activity
from ingest_assets.storage.avro import MAP_RECORD

from ingest_assets_tests.support.spark import DAY, ENTRY, PROVIDER, write_harvest

STARTED = datetime(2026, 1, 15, 8, tzinfo=timezone.utc)


@pytest.fixture
def enriched(tmp_path, shared_fixtures) -> RecordSource:
    storage = LocalStorage(tmp_path / "storage")
    source = write_harvest(storage, shared_fixtures)
    for activity in ("mapping", "enrichment"):
        result = write_activity(storage, in_process(RecordActivity(activity, ENTRY), [source]), provider=PROVIDER,
                                activity=activity, day=DAY, started=STARTED, schema=MAP_RECORD, partition="p")
        source = RecordSource(storage, result.output)
    return source


def canonical(records) -> set[str]:
    return {json.dumps(r, sort_keys=True) for r in records}


def test_export_streams_row_groups_and_reads_back_the_same_records(enriched):
    storage = enriched.storage
    key = layout.export_key(PROVIDER, DAY, STARTED, layout.schema_name(MAP_RECORD), "parquet")
    stats = export_parquet(storage, enriched, key, MAP_RECORD, row_group_records=50)
    expected = list(enriched)
    assert stats.records == len(expected) > 150 and stats.row_groups == -(-len(expected) // 50)
    parquet = pq.ParquetFile(storage.uri(key))
    assert parquet.metadata.num_row_groups == stats.row_groups and parquet.metadata.num_rows == len(expected)
    assert canonical(parquet.read().to_pylist()) == canonical(expected)
    with pytest.raises(FileExistsError):  # write-once, like every output
        export_parquet(storage, enriched, key, MAP_RECORD)


def test_spark_reads_the_export(spark, enriched):
    key = layout.export_key(PROVIDER, DAY, STARTED, layout.schema_name(MAP_RECORD), "parquet")
    export_parquet(enriched.storage, enriched, key, MAP_RECORD, row_group_records=64)
    frame = spark.read.parquet(enriched.storage.uri(key))
    expected = {r["id"]: r["sourceResource"]["title"] for r in enriched}
    rows = frame.select("id", "sourceResource.title").collect()
    assert {row["id"]: list(row["title"]) for row in rows} == expected


def test_a_record_that_does_not_fit_is_named_and_nothing_is_written(enriched):
    storage = enriched.storage
    records = list(enriched)[:30]
    records[17] = {**records[17], "ingestDate": "yesterday"}
    key = layout.export_key(PROVIDER, DAY, STARTED, layout.schema_name(MAP_RECORD), "parquet")
    with pytest.raises(IngestError) as raised:
        export_parquet(storage, records, key, MAP_RECORD, provider=PROVIDER, row_group_records=10)
    assert (raised.value.provider, raised.value.record, raised.value.file) == (PROVIDER, records[17]["id"], key)
    assert not storage.exists(key)
