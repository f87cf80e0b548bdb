"""Each hub ingestion3 harvests through an API (its harvesters/api/ package: Getty and Mississippi on Primo VE,
MWDL on Primo's X-Services, IA's scrape API, MDL's METL API for minnesota and sd, loc.gov's site maps), harvested
as its ``api`` block says from a local server answering in that API's shape over records built from ingestion3's
own fixtures (:mod:`ingest_assets_tests.support.api_hubs`, where each reconstructed envelope is described): the
paging to the end, the record count and ids, and every record mapped with the hub's profile."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from ingest_assets.core.errors import FetchError, LimitError, ParseError
from ingest_assets.core.http import HttpClient
from ingest_assets.core.registry import ProviderEntry, parse_registry
from ingest_assets.core.settings import Settings
from ingest_assets.records.harvest import StorageCheckpoint, harvest_records
from ingest_assets.records.mapping import check_registry, mapper_for
from ingest_assets_tests.support.api_hubs import HUBS, PROFILES, Hub, lc, mwdl
from ingest_assets_tests.support.api_servers import json_answer

@pytest.fixture
def hub(request, shared_fixtures, http_server) -> tuple[str, Hub]:
    name = request.param
    return name, HUBS[name](shared_fixtures / "ingestion3", lambda app: http_server(app=app))


def harvest(name: str, hub: Hub, storage, started, http):
    entry = ProviderEntry(name, {"harvest": {**hub.block, "allow_private": True}, "mapping": PROFILES[name]})
    run = harvest_records(entry, started=started, window=None, http=http, checkpoint=StorageCheckpoint(storage, name),
                          settings=Settings.from_env(hub.env))
    return entry, run


@pytest.mark.parametrize("hub", list(HUBS), indirect=True)
def test_each_api_hub_is_harvested_to_the_end_and_every_record_maps(hub, tmp_storage, started, http):
    name, hub = hub
    entry, run = harvest(name, hub, tmp_storage, started, http)
    records = list(run)
    assert [record["id"] for record in records] == hub.ids
    assert run.stats.pages == hub.pages and run.stats.failed == hub.failed and run.stats.records == len(hub.ids)
    hub.asked(hub.app.requests)
    assert StorageCheckpoint(tmp_storage, name).load() is None  # the list is complete
    mapper = mapper_for(entry)
    results = [mapper.map(record) for record in records]
    assert [result.messages for result in results if result.record is None] == []
    assert len({result.record["id"] for result in results}) == len(records)  # each its own DPLA id


def test_a_lost_loc_item_is_one_counted_error_naming_hub_url_and_record(shared_fixtures, http_server, tmp_storage,
                                                                         started, http):
    hub = lc(shared_fixtures / "ingestion3", lambda app: http_server(app=app))
    _, run = harvest("lc", hub, tmp_storage, started, http)
    list(run)
    [error] = run.stats.errors
    assert error.provider == "lc" and error.file.endswith("/item/gone/?fo=json&at=item")
    assert error.record == "page 4 record #1" and "HTTP 404" in error.message  # pages count over the lists


def test_a_primo_page_that_answers_an_error_fails_the_harvest_saying_so(shared_fixtures, http_server, tmp_storage,
                                                                        started, http):
    """Primo's X-Services answer a refused search with HTTP 200 and an ERROR element: not an empty, finished list."""
    hub = mwdl(shared_fixtures / "ingestion3", lambda app: http_server(app=app))
    hub.block["params"]["institution"] = "MWDL-TYPO"
    _, run = harvest("mwdl", hub, tmp_storage, started, http)
    with pytest.raises(FetchError, match="page 1 answers an error: Institution code is invalid") as caught:
        list(run)
    assert caught.value.provider == "mwdl" and "institution=MWDL-TYPO" in caught.value.file
    assert not caught.value.retryable


def test_an_empty_page_before_the_announced_total_ends_the_list_and_the_log_says_so(shared_fixtures, http_server,
                                                                                    tmp_storage, started, http):
    """Primo stops answering below its TOTALHITS (a deep-paging limit): ingestion3 stops there and warns."""
    hub = HUBS["getty"](shared_fixtures / "ingestion3", lambda app: http_server(app=app))
    hub.app.fail = lambda path, query: (
        json_answer({"info": {"total": 7, "first": 4, "last": 3}, "docs": []}) if query["offset"] == ["4"] else None)
    _, run = harvest("getty", hub, tmp_storage, started, http)
    assert [record["id"] for record in run] == hub.ids[:3]
    assert run.metadata()["expected"] == 7 and run.stats.pages == 2
    [note] = run.stats.notes
    assert note.startswith("page 2 (http://127.0.0.1:") and "apikey=[redacted]" in note
    assert note.endswith("is empty after 3 of the 7 records the list announces: the list ends there "
                         "(the API's deep-paging limit?)")


def test_a_page_without_the_total_is_an_error_naming_page_and_url(shared_fixtures, http_server, tmp_storage, started,
                                                                  http):
    hub = HUBS["getty"](shared_fixtures / "ingestion3", lambda app: http_server(app=app))
    hub.block["paging"]["total_path"] = "info.totalResults"
    _, run = harvest("getty", hub, tmp_storage, started, http)
    with pytest.raises(ParseError, match=r"page 1 has no total at 'info.totalResults' \(got None\)") as caught:
        list(run)
    assert caught.value.provider == "getty" and "offset=1" in caught.value.file


def test_a_source_with_more_records_than_max_records_stops_with_a_limit_error(shared_fixtures, http_server, tmp_storage,
                                                                              started, http):
    hub = HUBS["minnesota"](shared_fixtures / "ingestion3", lambda app: http_server(app=app))
    hub.block["bounds"] = {"max_records": 4}
    _, run = harvest("minnesota", hub, tmp_storage, started, http)
    got = []
    with pytest.raises(LimitError, match="harvest stopped on page 2: the source holds more than 4 records") as caught:
        for record in run:
            got.append(record)
    assert len(got) == 4 and caught.value.provider == "minnesota" and "page%5Bnumber%5D=2" in caught.value.file


def test_the_documented_hub_blocks_load_with_their_profiles():
    """docs/harvest-apis.md gives one block per hub: each loads as a registry entry and its profile compiles."""
    text = (Path(__file__).resolve().parents[3] / "docs" / "harvest-apis.md").read_text("utf-8")
    entries = {}
    for block in re.findall(r"```yaml\n(.*?)```", text, re.S):
        if "\n  harvest:" in block:
            entries.update(yaml.safe_load(block))
    registry = parse_registry(entries, "docs/harvest-apis.md")
    check_registry(registry)
    assert registry.problems == {} and sorted(registry) == sorted(HUBS)
    assert {name: registry[name].settings.mapping for name in registry} == {
        name: profile for name, profile in PROFILES.items()}


def test_a_harvest_that_failed_in_a_later_set_resumes_at_that_set(shared_fixtures, http_server, tmp_storage, started):
    hub = HUBS["ia"](shared_fixtures / "ingestion3", lambda app: http_server(app=app))
    hub.app.fail = lambda path, query: json_answer({}, "503 Busy") if query["q"] == ["collection:americana"] else None
    http = HttpClient(retries=0, allow_private=True)
    _, run = harvest("ia", hub, tmp_storage, started, http)
    got = []
    with pytest.raises(FetchError, match="HTTP 503 fetching page 4"):
        for record in run:
            got.append(record["id"])
    assert got == hub.ids[:5]
    hub.app.fail, hub.app.requests = None, []
    _, again = harvest("ia", hub, tmp_storage, started, http)
    assert [record["id"] for record in again] == hub.ids and again.stats.resumed
    assert [query["q"] for _, query in hub.app.requests] == [["collection:americana"]] * 2  # elmscollege from the spool


def test_an_item_a_retry_could_fetch_fails_the_page_instead_of_losing_the_record(shared_fixtures, http_server,
                                                                                 tmp_storage, started):
    hub = HUBS["lc"](shared_fixtures / "ingestion3", lambda app: http_server(app=app))
    hub.app.fail = lambda path, query: json_answer({}, "503 Busy") if path == "/item/73691635/" else None
    _, run = harvest("lc", hub, tmp_storage, started, HttpClient(retries=0, allow_private=True))
    with pytest.raises(FetchError, match="HTTP 503 fetching the record it links to") as caught:
        list(run)
    assert caught.value.retryable and caught.value.provider == "lc" and "/item/73691635/" in caught.value.file
    assert caught.value.record == "page 3 record #2"
    assert run.stats.failed == 0


def test_items_fetched_past_the_time_bound_stop_the_harvest(shared_fixtures, http_server, tmp_storage, started, http,
                                                            monkeypatch):
    """Each item is a request: the time bound is checked before each, not only between pages."""
    from ingest_assets.records.harvest import progress

    hub = HUBS["lc"](shared_fixtures / "ingestion3", lambda app: http_server(app=app))
    hub.block["bounds"] = {"max_minutes": 1}
    clock = iter([0.0])  # the run starts at 0 (its deadline: 60 s), and any later look at the clock says 10,000 s
    monkeypatch.setattr(progress.time, "monotonic", lambda: next(clock, 10_000.0))
    _, run = harvest("lc", hub, tmp_storage, started, http)
    with pytest.raises(LimitError, match="harvest stopped on page 1: the list goes on past 1 minutes") as caught:
        list(run)
    assert [path for path, _ in hub.app.requests] == ["/collections/maps-a/"]  # the page, not one of its items
    assert run.stats.failed == 0 and caught.value.provider == "lc" and "sp=1" in caught.value.file
