from datetime import date, datetime, timedelta, timezone

from ingest_assets.storage import layout
from ingest_assets.storage.activities import RecordStream, write_activity
from ingest_assets.storage.avro import ORIGINAL_RECORD
from ingest_assets.storage.snapshot import snapshot_records, snapshot_sources

T0 = datetime(2026, 3, 1, 6, 0, tzinfo=timezone.utc)


def harvest(storage, day: date, records: dict[str, str | None], mode="incremental", offset=0):
    started = T0 + timedelta(days=(day - date(2026, 3, 1)).days, minutes=offset)
    rows = [
        {"id": rid, "ingestDate": int(started.timestamp()), "provider": "p", "document": doc or "",
         "mimetype": "application_xml", "deleted": doc is None}
        for rid, doc in records.items()
    ]
    write_activity(storage, RecordStream(rows, started=started, summary=lambda: {"mode": mode}), provider="p",
                   activity="harvest", day=day, started=started, schema=ORIGINAL_RECORD, partition="x")


def state(storage, as_of):
    return {r["id"]: r["document"] for r in snapshot_records(snapshot_sources(storage, "p", as_of))}


def test_snapshot_walks_back_to_the_last_full_harvest(tmp_storage):
    harvest(tmp_storage, date(2026, 3, 1), {"a": "a0", "old": "gone-with-full"}, mode="full")
    harvest(tmp_storage, date(2026, 3, 2), {"a": "a1", "b": "b1", "c": "c1", "z": "z1"}, mode="full")
    harvest(tmp_storage, date(2026, 3, 3), {"b": "b2", "c": None})
    harvest(tmp_storage, date(2026, 3, 4), {"a": "a3"})
    harvest(tmp_storage, date(2026, 3, 4), {"a": "a3-rerun", "d": "d3"}, offset=30)  # a re-run of the same day

    assert state(tmp_storage, date(2026, 3, 1)) == {"a": "a0", "old": "gone-with-full"}
    assert state(tmp_storage, date(2026, 3, 2)) == {"a": "a1", "b": "b1", "c": "c1", "z": "z1"}
    assert state(tmp_storage, date(2026, 3, 3)) == {"a": "a1", "b": "b2", "z": "z1"}
    assert state(tmp_storage, date(2026, 3, 9)) == {"a": "a3-rerun", "b": "b2", "d": "d3", "z": "z1"}
    days = [s.output.day for s in snapshot_sources(tmp_storage, "p", date(2026, 3, 9))]
    assert days == [date(2026, 3, 4), date(2026, 3, 3), date(2026, 3, 2)]
    assert state(tmp_storage, date(2026, 2, 1)) == {}


def test_incomplete_outputs_are_ignored(tmp_storage):
    harvest(tmp_storage, date(2026, 3, 1), {"a": "a0"}, mode="full")
    (out,) = layout.complete_outputs(tmp_storage, "p", "harvest")
    tmp_storage.delete(out.manifest)  # e.g. an S3 upload that never finished
    assert state(tmp_storage, date(2026, 3, 1)) == {}


def test_a_damaged_part_is_an_error_naming_the_file(tmp_storage):
    import pytest

    from ingest_assets.core.errors import ParseError
    from ingest_assets.storage.activities import RecordSource

    harvest(tmp_storage, date(2026, 3, 1), {f"r{i}": "x" * 500 for i in range(50)}, mode="full")
    (out,) = layout.complete_outputs(tmp_storage, "p", "harvest")
    part = f"{out.folder}/part-00000.avro"
    data = tmp_storage.read_bytes(part)
    tmp_storage.write_bytes(part, data[: len(data) - 40], overwrite=True)
    with pytest.raises(ParseError, match="damaged Avro part") as err:
        list(RecordSource(tmp_storage, out))
    assert err.value.file == tmp_storage.uri(part)
