"""OAI-PMH without a mandatory Identify, and harvests of several sets, over real HTTP from the oaipmh server."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from ingest_assets.core.errors import FetchError
from ingest_assets.records.harvest import harvest_records

DAY = "YYYY-MM-DD"
SECONDS = "YYYY-MM-DDThh:mm:ssZ"
WINDOW = (datetime(2024, 3, 2, tzinfo=timezone.utc), datetime(2024, 3, 3, tzinfo=timezone.utc))


def run(provider, server, http, checkpoint, started, window=None, **extra):
    block = {"type": "oai", "endpoint": server.url, "metadata_prefix": "oai_dc", "allow_private": True, **extra}
    return harvest_records(provider(block), started=started, window=window, http=http, checkpoint=checkpoint)


def list_requests(server) -> list[dict]:
    return [q for q in server.requests if q["verb"] == "ListRecords"]


def fail_identify(server, answer=500) -> None:
    server.before = lambda q: answer if q["verb"] == "Identify" else q


def test_failing_identify_falls_back_to_day_granularity_and_says_so(oai_server, provider, http, checkpoint, started):
    server = oai_server(granularity=SECONDS)
    fail_identify(server)
    harvest = run(provider, server, http, checkpoint, started, window=WINDOW)
    ids = [r["id"] for r in harvest]
    assert list_requests(server)[0] == {
        "verb": "ListRecords", "metadataPrefix": "oai_dc", "from": "2024-03-02", "until": "2024-03-02",
    }
    assert ids == server.repository.expected_ids("oai_dc", day=2) and len(ids) == 3
    log = harvest.stats.log_text()
    assert "Identify failed" in log and "HTTP 500" in log and f"harvesting by day ({DAY})" in log


def test_an_endpoint_that_gives_no_answer_fails_at_identify(provider, http, checkpoint, started):
    """Connection refused: the harvest ends at Identify, naming it, instead of asking ListRecords the same server
    (which doubled the tries of a provider that is down)."""
    import socket

    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{closed.getsockname()[1]}/oai"
    closed.close()
    block = {"type": "oai", "endpoint": url, "metadata_prefix": "oai_dc", "allow_private": True}
    with pytest.raises(FetchError) as err:
        list(harvest_records(provider(block), started=started, window=WINDOW, http=http, checkpoint=checkpoint))
    assert "connection refused" in str(err.value) and "fetching Identify" in str(err.value)
    assert err.value.retryable and err.value.file == url


def test_identify_answer_is_kept_and_used_when_identify_later_fails(oai_server, provider, http, checkpoint, started):
    server = oai_server(granularity=SECONDS)
    first = run(provider, server, http, checkpoint, started, window=WINDOW)
    assert len(list(first)) == 3 and f"Identify announces granularity {SECONDS}" in first.stats.log_text()
    assert checkpoint.load_state("oai-identify") == {"endpoint": server.url, "granularity": SECONDS}

    fail_identify(server, 404)
    server.requests.clear()
    second = run(provider, server, http, checkpoint, started, window=WINDOW)
    assert len(list(second)) == 3
    assert list_requests(server)[0]["from"] == "2024-03-02T00:00:00Z"  # the kept answer, not day granularity
    assert f"using the granularity it announced before, {SECONDS}" in second.stats.log_text()


def test_kept_answer_of_another_endpoint_is_not_used(oai_server, provider, http, checkpoint, started):
    server = oai_server(granularity=SECONDS)
    checkpoint.save_state("oai-identify", {"endpoint": "https://elsewhere.example/oai", "granularity": SECONDS})
    fail_identify(server)
    assert len(list(run(provider, server, http, checkpoint, started, window=WINDOW))) == 3
    assert list_requests(server)[0]["from"] == "2024-03-02"


def test_identify_with_an_invalid_granularity_means_day(oai_server, provider, http, checkpoint, started):
    server = oai_server(granularity="YYYY")
    harvest = run(provider, server, http, checkpoint, started, window=WINDOW)
    assert len(list(harvest)) == 3 and list_requests(server)[0]["until"] == "2024-03-02"
    assert "no valid granularity ('YYYY')" in harvest.stats.log_text()
    assert checkpoint.load_state("oai-identify") is None  # nonsense is not kept


def test_several_sets_are_listed_in_turn_and_a_record_in_two_appears_once(
    oai_server, provider, http, checkpoint, started
):
    server = oai_server(batch_size=3)
    harvest = run(provider, server, http, checkpoint, started, sets=["user-zenodo", "openaire"])
    ids = [r["id"] for r in harvest]
    assert [q.get("set") for q in list_requests(server)] == ["user-zenodo", "openaire", None]
    expected = server.repository.expected_ids("oai_dc", set="openaire")
    assert "oai:zenodo.org:13841" in expected and len(expected) == 6
    assert ids == expected  # 13841 came with user-zenodo first and is not repeated by openaire
    assert harvest.stats.records == 6 and harvest.stats.duplicates == 1 and checkpoint.load() is None


def test_all_sets_lists_sets_over_pages_and_skips_excluded_ones(oai_server, provider, http, checkpoint, started):
    server = oai_server(batch_size=3)  # six sets: two ListSets pages
    harvest = run(provider, server, http, checkpoint, started, all_sets=True, exclude_sets=["botanicals", "openaire"])
    ids = [r["id"] for r in harvest]
    list_sets = [q for q in server.requests if q["verb"] == "ListSets"]
    assert len(list_sets) == 2 and "resumptionToken" in list_sets[1]
    assert [q.get("set") for q in list_requests(server)] == ["user-ag-fis", "user-zenodo", "openaire_data", "1:1"]
    assert ids == ["oai:zenodo.org:13841", "oai:zenodo.org:17183", "hdl:1765/1160"]
    assert harvest.stats.duplicates == 1 and harvest.stats.deleted == 1
    assert "6 sets listed, 2 excluded" in harvest.stats.log_text()


def test_rerun_after_a_failure_in_the_second_set_resumes_in_that_set(oai_server, provider, http, checkpoint, started):
    server = oai_server(batch_size=3)
    sets = ["user-zenodo", "openaire"]
    server.before = lambda q: 503 if server.cursor(q) == 3 else q  # openaire's page 2 (user-zenodo has one page)
    got = []
    with pytest.raises(FetchError):
        for record in run(provider, server, http, checkpoint, started, sets=sets):
            got.append(record["id"])
    state = checkpoint.load()
    assert state["position"]["set"] == "openaire" and state["page"] == 2 and state["spooled"] == len(got) == 3

    server.before = None
    server.requests.clear()
    second = run(provider, server, http, checkpoint, started, sets=sets)
    ids = [r["id"] for r in second]
    assert ids == server.repository.expected_ids("oai_dc", set="openaire")
    assert [server.cursor(q) for q in server.requests] == [3]  # user-zenodo and openaire's page 1 came from the spool
    assert second.stats.resumed and checkpoint.load() is None


def test_all_sets_on_a_repository_without_sets_is_an_error(oai_server, provider, http, checkpoint, started):
    server = oai_server()
    server.before = lambda q: {"verb": "ListSets", "resumptionToken": "nonsense"} if q["verb"] == "ListSets" else q
    with pytest.raises(FetchError, match="all_sets: ListSets page 1 answered error badResumptionToken"):
        list(run(provider, server, http, checkpoint, started, all_sets=True))
