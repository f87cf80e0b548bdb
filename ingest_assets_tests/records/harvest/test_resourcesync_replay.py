"""A ResourceSync source as recorded (``replays/resourcesync``: a ``.well-known`` Source Description, Resource and
Change List indexes, JSON items), replayed whole on 127.0.0.1: Change Lists written the 1.0 way (``<lastmod>``,
no ``datetime``), with two ``rs:md`` per ``<url>``, and with every change failing."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from ingest_assets.core.errors import IngestError, ParseError
from ingest_assets.core.http import HttpClient
from ingest_assets.core.registry import ProviderEntry
from ingest_assets.records.harvest import StorageCheckpoint, harvest_records

DAY = (datetime(2026, 11, 22, tzinfo=timezone.utc), datetime(2026, 11, 23, tzinfo=timezone.utc))
DOCUMENTS = {
    "/.well-known/resourcesync": "wellknown-resourcesync.xml",
    "/resourcesync/capabilitylist.xml": "capabilitylist.xml",
    "/resourcesync/resourcelist-index.xml": "resourcelist-index.xml",
    "/resourcesync/resourcelist_000000.xml": "resourcelist.xml",
    "/resourcesync/changelist-index.xml": "changelist-index.xml",
}


@pytest.fixture
def source(replay_source):
    """The recorded source: items 1-3 as recorded; the Change List at ``changelist_000000.xml`` is chosen by the
    test (the index names that one file)."""
    app = replay_source("resourcesync")
    for path, name in DOCUMENTS.items():
        app.file(path, name, "application/xml")
    for number in (1, 2, 3):
        app.file(f"/api/items/{number}", f"items/{number}.json", "application/json")
    app.changes = lambda name: app.file("/resourcesync/changelist_000000.xml", name, "application/xml")
    return app


@pytest.fixture
def harvest(tmp_storage):
    checkpoint = StorageCheckpoint(tmp_storage, "kanagawa")
    http = HttpClient(timeout=(2, 10), retries=0, allow_private=True)

    def run(app, window=None, **block):
        entry = ProviderEntry("kanagawa", {"harvest": {
            "type": "resourcesync", "url": f"{app.base}/.well-known/resourcesync", "allow_private": True, **block}})
        return harvest_records(entry, started=datetime.now(timezone.utc), window=window, http=http,
                               checkpoint=checkpoint)

    run.checkpoint = checkpoint
    return run


def test_a_baseline_is_full_and_an_increment_of_a_lastmod_change_list_takes_every_change(source, harvest):
    baseline = harvest(source)
    assert [r["id"] for r in baseline] == [f"{source.base}/api/items/1", f"{source.base}/api/items/2"]
    assert baseline.mode == "full"  # the count-drop gate and snapshots compare against it
    # item 3's recorded md5 is not the one the source lists: a counted error, kept to be tried again
    assert baseline.stats.failed == 1 and "md5 mismatch" in str(baseline.stats.errors[0])
    assert [e["uri"] for e in harvest.checkpoint.load_state("resourcesync")["retry"]] == [f"{source.base}/api/items/3"]

    source.changes("changelist-lastmod.xml")  # <lastmod> only, as ResourceSync 1.0 sources write them
    source.file("/api/items/2", "items/2-revised.json", "application/json")
    increment = harvest(source, window=DAY)
    records = {r["id"]: r for r in increment}
    assert increment.mode == "incremental" and increment.stats.failed == 0
    assert sorted(records) == [f"{source.base}/api/items/{n}" for n in (1, 2, 3)]
    assert json.loads(records[f"{source.base}/api/items/2"]["document"])["title"] == "Item two (revised)"
    deleted = records[f"{source.base}/api/items/3"]  # its deletion replaced the baseline's failed fetch
    assert deleted["deleted"] and json.loads(deleted["document"])["datetime"] == "2022-11-21T16:21:41Z"
    state = harvest.checkpoint.load_state("resourcesync")
    assert state["since"] == "2022-11-21T16:21:41Z" and state["retry"] == []


def test_a_harvest_whose_every_change_failed_fails_and_the_failures_are_tried_again(source, harvest):
    list(harvest(source))  # baseline
    source.changes("changelist-allfail.xml")  # 1: wrong md5, 2: wrong length, 4: not (yet) on the server
    failed = harvest(source, window=DAY, max_attempts=2)
    with pytest.raises(IngestError, match="every one of the 4 resources of this harvest failed") as error:
        list(failed)
    assert not error.value.retryable
    assert "gave up on " + f"{source.base}/api/items/3" in failed.stats.log_text()  # its 2nd run: given up
    state = harvest.checkpoint.load_state("resourcesync")
    assert state["since"] == "2022-11-23T16:21:41Z"  # past the changes: they wait in the retry list instead
    assert [(e["uri"].rsplit("/", 1)[1], e["attempts"]) for e in state["retry"]] == [("1", 1), ("2", 1), ("4", 1)]

    source.file("/api/items/4", "items/1.json", "application/json")  # item 4 appears (the bytes its change lists)
    retried = harvest(source, window=DAY, max_attempts=2)
    assert [r["id"] for r in retried] == [f"{source.base}/api/items/4"]
    log = retried.stats.log_text()
    assert "3 failed before and tried again" in log
    for number, reason in (("1", "md5 mismatch"), ("2", "the list gives length 7")):
        assert f"gave up on {source.base}/api/items/{number} (updated at 2022-11-23T16:21:41Z) after 2 attempts" in log
        assert reason in log
    assert harvest.checkpoint.load_state("resourcesync")["retry"] == []
    assert list(harvest(source, window=DAY)) == []  # nothing left to try, nothing new


def test_a_harvest_the_source_answered_nothing_to_is_retryable_and_keeps_no_state(source, harvest):
    for number in (1, 2, 3):
        source.fault(f"/api/items/{number}", 503)  # injected: the server's bad day
    with pytest.raises(IngestError, match="every one of the 3 resources") as error:
        list(harvest(source))
    assert error.value.retryable and harvest.checkpoint.load_state("resourcesync") is None
    source.faults.clear()
    assert len(list(harvest(source))) == 2  # the baseline, as if the bad day never was (item 3: md5 as recorded)


def test_two_rs_md_on_one_url_is_said_in_words(source, harvest):
    list(harvest(source))
    source.changes("changelist-two-md.xml")
    with pytest.raises(ParseError) as error:
        list(harvest(source, window=DAY))
    assert error.value.message == (f"the <url> of {source.base}/api/items/1 has 2 <rs:md> elements; ResourceSync "
                                   "allows one per <url>")
    assert error.value.file == f"{source.base}/resourcesync/changelist_000000.xml"
    assert error.value.record == f"{source.base}/api/items/1"
