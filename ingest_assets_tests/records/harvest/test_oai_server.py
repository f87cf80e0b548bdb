"""OAI-PMH harvests over real HTTP from a real OAI-PMH server (oaipmh 4.0.0) serving real records."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
import requests
from lxml import etree

from ingest_assets.core.errors import FetchError, IngestError
from ingest_assets.lineage.records import record_lineage
from ingest_assets.records.harvest import REQUEST_LOG, StorageCheckpoint, harvest_records
from ingest_assets.records.mapping import mint_id
from ingest_assets.storage.activities import RecordStream, write_activity
from ingest_assets.storage.avro import ORIGINAL_RECORD
from ingest_assets.storage.layout import provider_state_key

OAI = "http://www.openarchives.org/OAI/2.0/"
MODS = "http://www.loc.gov/mods/v3"
DAY = "YYYY-MM-DD"


def block(server, **extra):
    return {"type": "oai", "endpoint": server.url, "metadata_prefix": "mods", "allow_private": True, **extra}


def run(provider, server, http, checkpoint, started, window=None, **extra):
    return harvest_records(provider(block(server, **extra)), started=started, window=window, http=http, checkpoint=checkpoint)


def test_full_harvest_pages_through_resumption_tokens(oai_server, provider, http, checkpoint, started):
    server = oai_server(batch_size=3)
    harvest = run(provider, server, http, checkpoint, started)
    assert server.requests == []  # lazy: nothing fetched before the first record is asked for
    head = [next(harvest) for _ in range(3)]
    assert len(server.requests) == 1  # one page at a time: page 2 is fetched only when record 4 is asked for
    records = head + list(harvest)

    assert [r["id"] for r in records] == server.repository.expected_ids("mods")
    assert len(records) == 11 and harvest.stats.pages == 4 and harvest.stats.records == 11
    assert server.requests[0] == {"verb": "ListRecords", "metadataPrefix": "mods"}
    assert [server.cursor(q) for q in server.requests[1:]] == [3, 6, 9]
    assert all(set(q) == {"verb", "resumptionToken"} for q in server.requests[1:])
    assert {r["provider"] for r in records} == {"testprov"}
    assert {r["ingestDate"] for r in records} == {int(started.timestamp())} == {1795316645}  # 2026-11-22T03:04:05Z
    assert {r["mimetype"] for r in records} == {"application_xml"}
    assert checkpoint.load() is None

    first = etree.fromstring(records[0]["document"].encode())  # standalone, namespace-complete
    assert first.tag == f"{{{OAI}}}record"
    assert first.findtext(f".//{{{MODS}}}titleInfo/{{{MODS}}}title") == "Plate 1. Clematis cylindrica"
    assert first.findtext(f"{{{OAI}}}header/{{{OAI}}}identifier") == "arn00007c00001"

    deleted = [r for r in records if r["deleted"]]
    assert [r["id"] for r in deleted] == ["hdl:1765/1160"] and harvest.stats.deleted == 1
    header = etree.fromstring(deleted[0]["document"].encode())
    assert header.tag == f"{{{OAI}}}header" and header.get("status") == "deleted"


def test_set_restricts_the_list(oai_server, provider, http, checkpoint, started):
    server = oai_server()
    records = list(run(provider, server, http, checkpoint, started, set="botanicals"))
    assert server.requests[0] == {"verb": "ListRecords", "metadataPrefix": "mods", "set": "botanicals"}
    assert [r["id"] for r in records] == server.repository.expected_ids("mods", set="botanicals")
    assert len(records) == 10 and not any(r["deleted"] for r in records)


@pytest.mark.parametrize(
    ("granularity", "expected_from", "expected_until"),
    [("YYYY-MM-DDThh:mm:ssZ", "2024-03-02T00:00:00Z", "2024-03-02T23:59:59Z"), (DAY, "2024-03-02", "2024-03-02")],
)
def test_window_uses_the_announced_granularity(
    oai_server, provider, http, checkpoint, started, granularity, expected_from, expected_until
):
    server = oai_server(granularity=granularity)
    window = (datetime(2024, 3, 2, tzinfo=timezone.utc), datetime(2024, 3, 3, tzinfo=timezone.utc))
    records = list(run(provider, server, http, checkpoint, started, window=window, metadata_prefix="oai_dc"))
    assert server.requests[0] == {"verb": "Identify"}
    assert server.requests[1] == {
        "verb": "ListRecords", "metadataPrefix": "oai_dc", "from": expected_from, "until": expected_until,
    }
    expected = server.repository.expected_ids("oai_dc", day=2)
    assert [r["id"] for r in records] == expected and "hdl:1765/1160" in expected and len(expected) == 3


def test_no_records_match_is_an_empty_harvest(oai_server, provider, http, checkpoint, started):
    server = oai_server()
    window = (datetime(2025, 1, 1, tzinfo=timezone.utc), datetime(2025, 1, 2, tzinfo=timezone.utc))
    checkpoint.save({"kind": "oai", "request": {"metadataPrefix": "mods"}, "token": "stale", "page": 7})
    harvest = run(provider, server, http, checkpoint, started, window=window)
    assert list(harvest) == []
    assert b"noRecordsMatch" in server.server.handleRequest(server.requests[-1])
    assert harvest.stats.pages == 1 and not harvest.stats.resumed
    assert checkpoint.load() is None  # a checkpoint for another request is not used, and is cleared at the end


def fail_on_page_3(server, harvest_run, outcome=503) -> tuple[list[str], Exception]:
    """Run a harvest whose page 3 fails (after retries); the ids it yielded before failing."""
    server.before = lambda q: outcome if server.cursor(q) == 6 else q
    got = []
    with pytest.raises((FetchError, requests.RequestException)) as failure:
        for record in harvest_run():
            got.append(record["id"])
    server.before = None
    server.requests.clear()
    return got, failure.value


@pytest.mark.parametrize("outcome", [503, "drop"])
def test_rerun_after_a_failed_page_yields_the_whole_list_once(
    oai_server, provider, http, checkpoint, spool_files, started, outcome
):
    server = oai_server(batch_size=3)
    expected = server.repository.expected_ids("mods")
    got, error = fail_on_page_3(server, lambda: run(provider, server, http, checkpoint, started), outcome)
    if outcome == 503:
        message = str(error)
        assert "HTTP 503" in message and "page 3" in message and "testprov" in message and server.url in message
    else:  # the connection closed mid-page
        assert "IncompleteRead" in str(error)
    assert got == expected[:6]
    state = checkpoint.load()
    assert state["page"] == 2 and state["spooled"] == 6 and server.cursor({"resumptionToken": state["position"]["token"]}) == 6
    assert [name.split("/")[1] for name in spool_files()] == ["00000001.avro", "00000002.avro"]

    later = started + timedelta(hours=5)
    second = run(provider, server, http, checkpoint, later)
    records = list(second)
    assert [r["id"] for r in records] == expected  # every record once, in list order
    assert [server.cursor(q) for q in server.requests] == [6, 9]  # pages 1-2 came from the spool
    assert second.stats.resumed and second.stats.pages == 4
    assert second.stats.records == 11 and second.stats.deleted == 1 and second.stats.duplicates == 0
    assert {r["ingestDate"] for r in records} == {int(later.timestamp())}  # one harvest, one ingestDate
    assert checkpoint.load() is None and spool_files() == []

    fresh = list(run(provider, server, http, checkpoint, later))
    assert records == fresh  # the spooled records are exactly what the server serves


def test_page_spooled_but_not_checkpointed_is_fetched_again(oai_server, provider, http, tmp_storage, spool_files, started):
    class SaveFailsOnPage2(StorageCheckpoint):
        def save(self, state):
            if state["page"] == 2:
                raise OSError("storage unavailable")
            super().save(state)

    server = oai_server(batch_size=3)
    got = []
    with pytest.raises(OSError, match="storage unavailable"):
        for record in run(provider, server, http, SaveFailsOnPage2(tmp_storage, "testprov"), started):
            got.append(record["id"])
    checkpoint = StorageCheckpoint(tmp_storage, "testprov")
    assert len(got) == 6 and checkpoint.load()["page"] == 1 and len(spool_files()) == 2

    server.requests.clear()
    second = run(provider, server, http, checkpoint, started)
    assert [r["id"] for r in second] == server.repository.expected_ids("mods")
    assert [server.cursor(q) for q in server.requests] == [3, 6, 9]  # page 2 is fetched again, its spool replaced
    assert second.stats.duplicates == 0 and spool_files() == []


@pytest.mark.parametrize(
    ("damage", "error"),
    [
        ("delete", r"spool of pages 1-2 holds 3 records, the checkpoint counts 6.*provider 'testprov'"),
        ("truncate", r"unreadable harvest spool page .*provider 'testprov', file '.*/00000001\.avro'"),
    ],
)
def test_damaged_spool_fails_rather_than_losing_records(
    oai_server, provider, http, checkpoint, tmp_storage, spool_files, started, damage, error
):
    server = oai_server(batch_size=3)
    fail_on_page_3(server, lambda: run(provider, server, http, checkpoint, started))
    key = f"{provider_state_key('testprov', 'harvest-spool')}/{spool_files()[0]}"
    if damage == "delete":
        tmp_storage.delete(key)
    else:
        tmp_storage.write_bytes(key, tmp_storage.read_bytes(key)[:-40], overwrite=True)
    with pytest.raises(IngestError, match=error):
        list(run(provider, server, http, checkpoint, started))
    assert server.requests == [] and checkpoint.load()["page"] == 2  # nothing fetched, nothing forgotten


def test_rerun_for_another_window_ignores_and_clears_the_old_spool(
    oai_server, provider, http, checkpoint, spool_files, started
):
    server = oai_server(batch_size=3)
    fail_on_page_3(server, lambda: run(provider, server, http, checkpoint, started))
    (old,) = {name.split("/")[0] for name in spool_files()}

    window = (datetime(2024, 3, 2, tzinfo=timezone.utc), datetime(2024, 3, 3, tzinfo=timezone.utc))
    second = run(provider, server, http, checkpoint, started, window=window)
    records = [next(second)]
    assert checkpoint.load() is None and spool_files() == []  # cleared before the first page was handed on
    records += [next(second) for _ in range(3)]  # page 1 handed on, first record of page 2
    (new,) = {name.split("/")[0] for name in spool_files()}
    assert new != old and checkpoint.load()["request"]["from"] == "2024-03-02T00:00:00Z"
    records += list(second)

    assert [r["id"] for r in records] == server.repository.expected_ids("mods", day=2)
    assert not second.stats.resumed and second.stats.records == 4
    assert server.requests[1] == {
        "verb": "ListRecords", "metadataPrefix": "mods", "from": "2024-03-02T00:00:00Z", "until": "2024-03-02T23:59:59Z",
    }
    assert checkpoint.load() is None and spool_files() == []


def test_bad_resumption_token_restarts_the_list_once_without_duplicates(oai_server, provider, http, checkpoint, started):
    server = oai_server(batch_size=3)
    expired = []

    def expire_once(query):
        if server.cursor(query) == 6 and not expired:
            expired.append(query["resumptionToken"])
            return {**query, "resumptionToken": "expired"}
        return query

    server.before = expire_once
    harvest = run(provider, server, http, checkpoint, started)
    ids = [r["id"] for r in harvest]
    assert ids == server.repository.expected_ids("mods")  # each record once, in list order
    assert harvest.stats.restarts == 1 and harvest.stats.duplicates == 6
    assert [q.get("metadataPrefix") for q in server.requests].count("mods") == 2  # the list was restarted


def test_second_bad_resumption_token_fails(oai_server, provider, http, checkpoint, started):
    server = oai_server(batch_size=3)
    server.before = lambda q: {**q, "resumptionToken": "expired"} if server.cursor(q) == 3 else q
    harvest = run(provider, server, http, checkpoint, started)
    with pytest.raises(FetchError, match="badResumptionToken on page 4"):
        list(harvest)
    assert harvest.stats.restarts == 1 and harvest.stats.records == 3


def test_expired_checkpoint_token_restarts_from_the_checkpointed_request(oai_server, provider, http, checkpoint, started):
    server = oai_server(batch_size=4)
    checkpoint.save({"kind": "oai", "request": {"metadataPrefix": "mods"}, "position": {"set": None, "token": "expired"},
                     "page": 5, "spooled": 0})
    harvest = run(provider, server, http, checkpoint, started)
    ids = [r["id"] for r in harvest]
    assert server.requests[0] == {"verb": "ListRecords", "resumptionToken": "expired"}
    assert server.requests[1] == {"verb": "ListRecords", "metadataPrefix": "mods"}
    assert ids == server.repository.expected_ids("mods")
    assert harvest.stats.resumed and harvest.stats.restarts == 1
    assert checkpoint.load() is None


def test_private_addresses_need_allow_private_in_the_block(oai_server, provider, http, checkpoint, started):
    server = oai_server()
    block = {"type": "oai", "endpoint": server.url, "metadata_prefix": "mods"}
    harvest = harvest_records(provider(block), started=started, window=None, http=http, checkpoint=checkpoint)
    with pytest.raises(FetchError, match="not a public address.*page 1"):
        next(harvest)
    assert server.requests == [] and http.allow_private  # the caller's client is left as it was


def test_no_records_match_on_a_resumed_page_ends_the_list(oai_server, provider, http, checkpoint, started):
    server = oai_server(batch_size=3)
    # as some servers do when the rest of the list vanished: page 3 answers noRecordsMatch
    server.before = lambda q: {"verb": "ListRecords", "metadataPrefix": "mods", "from": "2030-01-01"} if server.cursor(q) == 6 else q
    harvest = run(provider, server, http, checkpoint, started)
    assert len(list(harvest)) == 6 and harvest.stats.pages == 3
    assert checkpoint.load() is None


def test_full_in_the_block_ignores_the_window(oai_server, provider, http, checkpoint, started):
    server = oai_server(batch_size=20)
    window = (datetime(2024, 3, 2, tzinfo=timezone.utc), datetime(2024, 3, 3, tzinfo=timezone.utc))
    harvest = run(provider, server, http, checkpoint, started, window=window, full=True)
    assert len(list(harvest)) == 11
    assert server.requests == [{"verb": "ListRecords", "metadataPrefix": "mods"}]


def request_log(harvest) -> list[dict]:
    return [json.loads(line) for line in harvest.logs()[REQUEST_LOG]]


def test_request_log_names_each_page_and_the_records_it_brought(oai_server, provider, http, checkpoint, started):
    server = oai_server(batch_size=3)
    window = (datetime(2024, 3, 1, tzinfo=timezone.utc), datetime(2024, 4, 1, tzinfo=timezone.utc))
    harvest = run(provider, server, http, checkpoint, started, window=window)
    records = list(harvest)
    log = request_log(harvest)
    assert [entry["page"] for entry in log] == list(range(len(log))) and log[0]["params"] == {"verb": "Identify"}
    first = log[1]["params"]
    assert first["verb"] == "ListRecords" and (first["from"], first["until"]) == ("2024-03-01T00:00:00Z", "2024-03-31T23:59:59Z")
    assert all(entry["params"]["resumptionToken"] for entry in log[2:])
    assert [entry["params"]["resumptionToken"] for entry in log[2:]] == [q["resumptionToken"] for q in server.requests[2:]]
    assert all(entry["status"] == 200 and entry["response_date"] for entry in log)
    assert all(entry["url"].startswith(server.url) and "verb=" in entry["url"] for entry in log)
    # the ranges tile the output: each record's position falls in the page that brought it
    assert [entry["records"] for entry in log[1:]] == [[n, min(n + 3, len(records))] for n in range(0, len(records), 3)]


def test_a_resumed_harvest_logs_its_spooled_pages_then_its_own_requests(
    oai_server, provider, http, checkpoint, started
):
    server = oai_server(batch_size=3)
    fail_on_page_3(server, lambda: run(provider, server, http, checkpoint, started), 503)
    second = run(provider, server, http, checkpoint, started)
    list(second)
    log = request_log(second)
    assert log[0] == {"spooled_pages": 2, "records": [0, 6]}
    assert [(entry["page"], entry["records"]) for entry in log[1:]] == [(3, [6, 9]), (4, [9, 11])]


def test_lineage_of_a_harvested_record_names_its_page(oai_server, provider, http, checkpoint, started, tmp_storage):
    server = oai_server(batch_size=3)
    harvest = run(provider, server, http, checkpoint, started)
    day = started.date()
    write_activity(tmp_storage, RecordStream(harvest, started=started, logs=harvest.logs), provider="testprov",
                   activity="harvest", day=day, started=started, schema=ORIGINAL_RECORD, partition="test")
    wanted = server.repository.expected_ids("mods")[7]  # the second record of page 3
    lineage = record_lineage(tmp_storage, "testprov", mint_id("testprov", wanted))  # asked by its DPLA id
    original, request = lineage.steps
    assert original.what == "original record" and original.facts["id"] == wanted and original.facts["position"] == 7
    assert original.facts["part"] == "part-00000.avro" and original.where.endswith("-testprov-OriginalRecord.v1.avro")
    assert request.what == "harvest request" and request.facts["page"] == 3 and request.facts["records"] == [6, 9]
    assert server.cursor(request.facts["params"]) == 6 and request.where == request.facts["url"]
