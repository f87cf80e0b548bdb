"""The Avro layout through spark-avro and through binaryFiles + fastavro: both read the same records from an
output, and what either writes reads back, with fastavro, as the records it was given."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import fastavro
import pytest

from ingest_assets.records.engines.spark_avro import read_output, write_output
from ingest_assets.records.engines.steps import RecordActivity, in_process
from ingest_assets.storage import LocalStorage, layout
from ingest_assets.storage.activities import RecordSource, write_activity
from ingest_assets.storage.avro import MAP_RECORD, load_schema, part_keys, read_part
from ingest_assets_tests.support.spark import DAY, ENTRY, PROVIDER, write_harvest


def canonical(records) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in records)


@pytest.mark.parametrize("spark", ["local[2]"], indirect=True)  # the data source is the point, not the cluster
def test_spark_avro_and_fastavro_read_and_write_the_same_records(spark, spark_avro_jar, tmp_path, shared_fixtures):
    storage = LocalStorage(tmp_path / "storage")
    harvest = write_harvest(storage, shared_fixtures)
    started = datetime(2026, 1, 15, 7, 0, tzinfo=timezone.utc)
    mapped = write_activity(storage, in_process(RecordActivity("mapping", ENTRY), [harvest]), provider=PROVIDER,
                            activity="mapping", day=DAY, started=started, schema=MAP_RECORD,
                            partition=f"{DAY}|{PROVIDER}").output
    expected = list(RecordSource(storage, mapped))
    assert len(expected) > 150 and len(part_keys(storage, mapped.folder)) >= 1
    schema = load_schema(MAP_RECORD)

    frames = {way: read_output(spark, storage, mapped.folder, schema, way=way) for way in ("spark-avro", "fastavro")}
    assert frames["spark-avro"].schema == frames["fastavro"].schema
    rows = {way: [r.asDict(recursive=True) for r in frame.collect()] for way, frame in frames.items()}
    assert canonical(rows["spark-avro"]) == canonical(rows["fastavro"]) == canonical(expected)

    for n, (way, frame) in enumerate(frames.items(), 1):  # each writes what the other read
        writer = "fastavro" if way == "spark-avro" else "spark-avro"
        folder = layout.activity_output(PROVIDER, "mapping", DAY, started + timedelta(minutes=n), "MAP4_x.MAPRecord.v1").folder
        stats = write_output(frame.repartition(3), storage, folder, schema, way=writer)
        assert stats.records == len(expected) and stats.parts == [f"part-{n:05d}.avro" for n in range(len(stats.parts))]
        written = [r for key in part_keys(storage, folder) for r in read_part(storage, key)]
        assert canonical(written) == canonical(expected)
        with storage.open_read(f"{folder}/part-00000.avro") as part:
            reader = fastavro.reader(part)
            assert reader.writer_schema["name"] == "dpla.avro.v1.MAP4_x.MAPRecord"
            assert reader.codec == "snappy"  # INGEST_AVRO_CODEC's default, whoever wrote the part
