"""Our own published resource sets as a record harvest source (``harvest: {type: resourcesync}``): a baseline
from the Resource List, then the changes of the Change Lists, over our server on 127.0.0.1."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from ingest_assets.core.errors import FetchError
from ingest_assets.core.http import HttpClient
from ingest_assets.records.harvest import StorageCheckpoint, harvest_records
from ingest_assets.records.harvest import resourcesync as harvester
from ingest_assets.core.registry import ProviderEntry

DAY = (datetime(2026, 11, 22, tzinfo=timezone.utc), datetime(2026, 11, 23, tzinfo=timezone.utc))


def xml(title: str) -> bytes:
    return f"<record xmlns='http://purl.org/dc/elements/1.1/'><title>{title}</title></record>".encode()


@pytest.fixture
def harvest(tmp_storage):
    checkpoint = StorageCheckpoint(tmp_storage, "rsprov")
    http = HttpClient(timeout=(2, 10), retries=1, backoff=0.01, allow_private=True)

    def run(src, window=None):
        block = {"type": "resourcesync", "url": f"{src.base}/.well-known/resourcesync", "allow_private": True}
        provider = ProviderEntry("rsprov", {"harvest": block})
        started = datetime.now(timezone.utc)  # an increment takes the changes up to the run's start
        return harvest_records(provider, started=started, window=window, http=http, checkpoint=checkpoint)

    run.checkpoint = checkpoint
    return run


def by_id(records) -> dict[str, dict]:
    return {r["id"]: r for r in records}


def test_baseline_then_increments_from_our_published_lists(source, t0, harvest):
    src = source()
    src.put("a.xml", xml("A"), t0, mime="application/xml")
    src.put("b.json", b'{"title": "B"}', t0 + timedelta(hours=1), mime="application/json")
    src.put("notes.txt", b"not a record", t0 + timedelta(hours=2))
    src.publish()
    url = f"{src.base}/set1/resources/"

    baseline = harvest(src)
    records = by_id(baseline)
    assert sorted(records) == [f"{url}a.xml", f"{url}b.json"]
    assert records[f"{url}a.xml"]["mimetype"] == "application_xml" and "<title>A</title>" in records[f"{url}a.xml"]["document"]
    assert json.loads(records[f"{url}b.json"]["document"]) == {"title": "B"}
    assert baseline.stats.failed == 1 and baseline.stats.errors[0].record == f"{url}notes.txt"
    assert "baseline from the Resource List" in baseline.stats.log_text()
    log = [json.loads(line) for line in baseline.requests.chunks()]  # one line per request, sitemaps are page 0
    assert [e["url"] for e in log if e["page"] == 0][0] == f"{src.base}/.well-known/resourcesync"
    assert {e["url"]: e["records"] for e in log if e["page"] == 1} == {
        f"{url}a.xml": [0, 1], f"{url}b.json": [1, 2], f"{url}notes.txt": [2, 2],  # notes.txt gave no record
    }

    now = datetime.now(timezone.utc)
    src.put("a.xml", xml("A, revised"), now, mime="application/xml")
    src.delete("b.json", now + timedelta(milliseconds=1))
    src.put("c.xml", xml("C"), now + timedelta(milliseconds=2), mime="application/xml")
    src.publish()
    src.server.paths.clear()

    increment = by_id(harvest(src, window=DAY))
    assert sorted(increment) == [f"{url}a.xml", f"{url}b.json", f"{url}c.xml"]  # notes.txt did not change
    assert "A, revised" in increment[f"{url}a.xml"]["document"] and not increment[f"{url}a.xml"]["deleted"]
    assert increment[f"{url}b.json"]["deleted"] and json.loads(increment[f"{url}b.json"]["document"])["change"] == "deleted"
    assert "/set1/resources/notes.txt" not in src.server.paths

    assert list(harvest(src, window=DAY)) == []  # nothing changed since


def test_content_that_differs_from_the_list_is_a_record_error(source, t0, harvest):
    src = source()
    src.put("a.xml", xml("A"), t0, mime="application/xml")
    src.put("b.xml", xml("B"), t0, mime="application/xml")
    src.publish()
    (src.root / "b.xml").write_bytes(xml("X"))  # same length, other bytes: the listed md5 no longer holds
    run = harvest(src)
    assert [r["id"] for r in run] == [f"{src.base}/set1/resources/a.xml"]
    assert run.stats.failed == 1 and "md5 mismatch" in str(run.stats.errors[0])


def test_rerun_after_a_failed_list_resumes_without_fetching_done_resources(source, t0, harvest, monkeypatch):
    monkeypatch.setattr(harvester, "PAGE_SIZE", 2)
    src = source(limit=4)  # a Resource List Index of two lists
    for i in range(8):
        src.put(f"r{i}.xml", xml(f"R{i}"), t0 + timedelta(hours=i), mime="application/xml")
    src.publish()
    got = []
    with pytest.raises(FetchError, match="503"):
        for record in harvest(src):
            if not got:  # from now on, every list not fetched yet fails: the index's second list
                fetched = set(src.server.paths)
                src.server.before = lambda path: 503 if "resourcelist" in path and path not in fetched else None
            got.append(record["id"])
    assert got == [f"{src.base}/set1/resources/r{i}.xml" for i in range(4)]
    state = harvest.checkpoint.load()
    assert state["done"] == 4 and state["spooled"] == 4

    src.server.before = None
    src.server.paths.clear()
    rerun = harvest(src)
    ids = [r["id"] for r in rerun]
    assert ids == [f"{src.base}/set1/resources/r{i}.xml" for i in range(8)] and rerun.stats.resumed
    assert not any(f"/r{i}.xml" in p for p in src.server.paths for i in range(4))  # r0-r3 came from the spool
    assert harvest.checkpoint.load() is None


def test_interrupted_increment_resumes_up_to_its_own_end_and_the_next_run_takes_the_rest(
    source, t0, harvest, monkeypatch
):
    monkeypatch.setattr(harvester, "PAGE_SIZE", 2)
    src = source()
    src.put("base.xml", xml("Base"), t0, mime="application/xml")
    src.publish()
    assert len(list(harvest(src))) == 1  # the baseline
    now = datetime.now(timezone.utc)
    for i in range(5):
        src.put(f"c{i}.xml", xml(f"C{i}"), now + timedelta(milliseconds=i), mime="application/xml")
    src.publish()

    first = harvest(src, window=DAY)
    got = [next(first)["id"] for _ in range(3)]  # page 1 handed on and checkpointed; the run dies in page 2
    first.close()
    until = harvest.checkpoint.load()["request"]["until"]
    src.put("late.xml", xml("Late"), datetime.now(timezone.utc) + timedelta(milliseconds=10), mime="application/xml")
    src.publish()

    second = harvest(src, window=DAY)
    ids = [r["id"] for r in second]
    assert second.stats.resumed and ids == [f"{src.base}/set1/resources/c{i}.xml" for i in range(5)]
    assert ids[:3] == got and harvest.checkpoint.load() is None
    assert second.stats.log_text().count(f"until {until}") == 1  # the interrupted run's end, not this run's start
    assert [r["id"] for r in harvest(src, window=DAY)] == [f"{src.base}/set1/resources/late.xml"]


def test_a_failure_before_an_interruption_is_still_tried_again_after_the_resumed_run(source, t0, harvest, monkeypatch):
    monkeypatch.setattr(harvester, "PAGE_SIZE", 2)
    src = source(limit=4)
    for i in range(8):
        src.put(f"r{i}.xml", xml(f"R{i}"), t0 + timedelta(hours=i), mime="application/xml")
    src.publish()
    (src.root / "r1.xml").write_bytes(xml("X1"))  # same length, other bytes than listed: r1 fails on page 1
    with pytest.raises(FetchError, match="503"):
        for record in harvest(src):
            fetched = set(src.server.paths)
            src.server.before = lambda path: 503 if "resourcelist" in path and path not in fetched else None
    src.server.before = None
    rerun = harvest(src)
    assert len(list(rerun)) == 7 and rerun.stats.resumed and rerun.stats.failed == 0  # r1's failure was spooled
    retry = harvest.checkpoint.load_state("resourcesync")["retry"]
    assert [(e["uri"], e["attempts"]) for e in retry] == [(f"{src.base}/set1/resources/r1.xml", 1)]
