"""A full harvest's absences: what a full harvest no longer holds of the provider's previous state, and when
nothing may be deleted by absence."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest

from ingest_assets.records.harvest.original import original_record
from ingest_assets.records.indexing.absences import Absences
from ingest_assets.storage import LocalStorage
from ingest_assets.storage.activities import RecordSource, RecordStream, write_activity
from ingest_assets.storage.avro import ORIGINAL_RECORD

START = datetime(2026, 1, 15, 2, 0, tzinfo=timezone.utc)


@pytest.fixture
def storage(tmp_path):
    return LocalStorage(tmp_path / "storage")


def harvest(storage, n: int, numbers, mode: str, deleted=(), failed=0, errors: bytes | None = None) -> RecordSource:
    """The harvest of day ``n`` (from START): records ``numbers`` (``deleted`` ones marked so)."""
    started = START + timedelta(days=n)
    records = [original_record("demo", f"id{i}", int(started.timestamp()), "<x/>", "application/xml", i in deleted)
               for i in numbers]
    logs = {"harvest-errors.csv": errors} if errors else {}
    result = write_activity(storage, RecordStream(records, started=started, logs=lambda: logs,
                                                  summary=lambda: {"mode": mode, "failed": failed}),
                            provider="demo", activity="harvest", day=started.date(), started=started,
                            schema=ORIGINAL_RECORD, partition="test")
    return RecordSource(storage, result.output)


def test_records_gone_since_the_previous_full_harvest_and_the_increments_after_it(storage):
    harvest(storage, 0, range(1, 11), "full")
    harvest(storage, 1, [11, 12], "incremental")  # added since
    harvest(storage, 2, [3], "incremental", deleted={3})  # deleted at the source: not an absence later
    full = harvest(storage, 3, [*range(1, 9), 11], "full")
    absences = Absences(full)
    assert sorted(absences.ids()) == ["id10", "id12", "id9"] and absences.count == 3 and not absences.skipped


def test_the_previous_state_leaves_out_days_never_published(storage):
    harvest(storage, 0, range(1, 11), "full")
    harvest(storage, 1, range(1, 6), "full")  # a short harvest that was rejected
    full = harvest(storage, 2, range(1, 8), "full")
    assert sorted(Absences(full, exclude={(START + timedelta(days=1)).date()}).ids()) == ["id10", "id8", "id9"]
    assert sorted(Absences(full).ids()) == []  # against the rejected one, nothing looks absent


def test_an_incremental_harvest_deletes_nothing_by_absence(storage):
    harvest(storage, 0, range(1, 11), "full")
    increment = harvest(storage, 1, [1], "incremental")
    absences = Absences(increment)
    assert list(absences.ids()) == [] and absences.skipped == "an incremental harvest deletes nothing by absence"


def test_unreadable_records_are_not_absent(storage):
    harvest(storage, 0, range(1, 11), "full")
    named = harvest(storage, 1, range(1, 9), "full", failed=1,
                    errors=b"provider,file,record,message\ndemo,page-2,id9,bad XML\n")
    assert sorted(Absences(named).ids()) == ["id10"]  # id9 could not be read, it is not gone
    unnamed = harvest(storage, 2, range(1, 9), "full", failed=2,
                      errors=b"provider,file,record,message\ndemo,page-2,id9,bad XML\n")
    absences = Absences(unnamed)
    assert list(absences.ids()) == [] and "cannot be told from them" in absences.skipped


def test_a_first_harvest_has_nothing_absent(storage):
    assert list(Absences(harvest(storage, 0, range(1, 4), "full")).ids()) == []


def test_the_day_of_a_rerun_counts_its_earlier_run(storage):
    harvest(storage, 0, range(1, 6), "full")
    started = START + timedelta(hours=3)  # the same day, harvested again
    records = [original_record("demo", f"id{i}", int(started.timestamp()), "<x/>", "application/xml", False)
               for i in range(1, 4)]
    result = write_activity(storage, RecordStream(records, started=started, summary=lambda: {"mode": "full"}),
                            provider="demo", activity="harvest", day=date(2026, 1, 15), started=started,
                            schema=ORIGINAL_RECORD, partition="test")
    assert sorted(Absences(RecordSource(storage, result.output)).ids()) == ["id4", "id5"]
