"""A ResourceSync source as recorded (``replays/resourcesync``: a ``.well-known`` Source Description, Resource and
Change List indexes, JSON items), replayed whole on 127.0.0.1: a baseline, then increments, and a Change List with two ``rs:md`` per
``<url>``."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from ingest_assets.core.errors import ParseError
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


def test_a_baseline_is_full_and_an_increment_incremental(source, harvest):
    baseline = harvest(source)
    assert [r["id"] for r in baseline] == [f"{source.base}/api/items/1", f"{source.base}/api/items/2"]
    assert baseline.mode == "full"  # the count-drop gate and snapshots compare against it
    source.changes("changelist-datetime.xml")
    source.file("/api/items/2", "items/2-revised.json", "application/json")
    increment = harvest(source, window=DAY)
    assert [r["id"] for r in increment] == [f"{source.base}/api/items/{n}" for n in (1, 2, 3)]
    assert increment.mode == "incremental"


def test_two_rs_md_on_one_url_is_said_in_words(source, harvest):
    list(harvest(source))
    source.changes("changelist-two-md.xml")
    with pytest.raises(ParseError) as error:
        list(harvest(source, window=DAY))
    assert error.value.message == (f"the <url> of {source.base}/api/items/1 has 2 <rs:md> elements; ResourceSync "
                                   "allows one per <url>")
    assert error.value.file == f"{source.base}/resourcesync/changelist_000000.xml"
    assert error.value.record == f"{source.base}/api/items/1"
