"""OAI-PMH harvests over real HTTP from a real OAI-PMH server (oaipmh 4.0.0) serving real records."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from lxml import etree

from ingest_assets.errors import FetchError
from ingest_assets.records.harvest import harvest_records

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


def test_failed_harvest_resumes_from_the_checkpointed_token(oai_server, provider, http, checkpoint, started):
    server = oai_server(batch_size=3)
    server.before = lambda q: 503 if server.cursor(q) == 6 else q
    first = run(provider, server, http, checkpoint, started)
    got = []
    with pytest.raises(FetchError) as failure:
        for record in first:
            got.append(record["id"])
    message = str(failure.value)
    assert "HTTP 503" in message and "page 3" in message and "testprov" in message and server.url in message
    assert len(got) == 6 and len(server.requests) == 3 + 2  # the 503 page was retried twice
    state = checkpoint.load()
    assert state["page"] == 2 and server.cursor({"resumptionToken": state["token"]}) == 6

    server.before = None
    second = run(provider, server, http, checkpoint, started)
    rest = [r["id"] for r in second]
    assert second.stats.resumed and second.stats.pages == 4
    assert got + rest == server.repository.expected_ids("mods")
    assert checkpoint.load() is None


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
    checkpoint.save({"kind": "oai", "request": {"metadataPrefix": "mods"}, "token": "expired", "page": 5})
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
