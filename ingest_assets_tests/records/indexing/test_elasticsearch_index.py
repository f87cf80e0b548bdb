"""ElasticsearchIndex at the HTTP boundary: exact requests, answered by live OpenSearch and Elasticsearch through
the recording proxy, which injects the rejections a real server cannot be made to send on cue.
"""

from __future__ import annotations

import json
import uuid

import pytest

from ingest_assets.core.errors import ConfigError, FetchError, IngestError
from ingest_assets.records.indexing import (
    IndexBuildRefused,
    deletion_record,
    index_record,
    open_search_index,
)
from ingest_assets.records.indexing.es_index import ElasticsearchIndex
from ingest_assets_tests.support import free_port


@pytest.fixture
def index(es, build_clock):
    search_index = open_search_index(es.url, initial_backoff=0.01, max_retries=2, clock=build_clock)
    assert isinstance(search_index, ElasticsearchIndex)
    yield search_index
    search_index.close()


@pytest.fixture
def records(map_records):
    return [index_record(record) for record in map_records]


def ndjson(*pairs) -> bytes:
    return "".join(json.dumps(header, separators=(",", ":")) + "\n" + (f"{body}\n" if body else "")
                   for header, body in pairs).encode()


def index_action(name, record):
    return {"index": {"_index": name, "_id": record["id"]}}, record["document"]


def test_full_build_creates_index_from_schema_loads_and_swaps(es, index, alias, records, mapping_file):
    stats = index.full_build(alias, [*records, deletion_record("0" * 32)])

    name = f"{alias}-20261122030000"
    [create] = es.calls("PUT", f"/{name}")
    assert create.json() == json.loads(mapping_file.read_text("utf-8"))
    [bulk] = es.calls("PUT|POST", "/_bulk")
    assert bulk.body == ndjson(*(index_action(name, record) for record in records),
                               ({"delete": {"_index": name, "_id": "0" * 32}}, None))
    [swap] = es.calls("POST", "/_aliases")
    assert swap.json() == {"actions": [{"add": {"index": name, "alias": alias}}]}
    assert es.requests.index(swap) > es.requests.index(bulk)

    assert (stats.indexed, stats.deleted, stats.failed, stats.created, stats.removed) == (3, 1, 0, 3, 0)
    assert stats.index == name and stats.failures == []
    rec = stats.reconciliation
    assert (rec.input, rec.accounted, rec.expected_count, rec.index_count, rec.ok) == (4, 4, 3, 3, True)
    assert index.count(alias) == 3
    assert sorted(doc["id"] for doc in index.search(alias, "hamsters", 10)) == [
        "4d85a6bd965dde8352c8235c43fe1c44", "c340ca5de0e46b0538213c65c650c8c6"]
    [hit] = index.search(alias, "Paducah sun", 10)
    assert hit == json.loads(records[2]["document"])


def test_second_build_swaps_alias_in_one_action_and_keeps_the_old_index(es, index, alias, records):
    index.full_build(alias, records)
    stats = index.full_build(alias, records[:2])

    old, new = f"{alias}-20261122030000", f"{alias}-20261122030001"  # same clock second: next free name
    assert es.calls("HEAD", f"/{old}") and stats.index == new
    [_, swap] = es.calls("POST", "/_aliases")
    assert swap.json() == {"actions": [{"remove": {"index": old, "alias": alias, "must_exist": True}},
                                       {"add": {"index": new, "alias": alias}}]}
    assert not es.calls("DELETE", f"/{old}")  # kept for rollback
    assert es.raw("HEAD", f"/{old}")[0] == 200
    assert index.count(alias) == 2 and stats.reconciliation.ok
    assert [(i.name, i.provider, i.count, i.aliased) for i in index.indices(alias)] == [
        (old, None, 3, False), (new, None, 2, True)]


def test_apply_upserts_and_deletes_in_one_bulk(es, index, alias, records, map_records):
    index.full_build(alias, records)
    name = f"{alias}-20261122030000"
    changed = dict(map_records[0], isShownAt="http://doi.org/10.25549/berndt-m584-v2")
    updates = [index_record(changed), deletion_record(records[1]["id"]), deletion_record("f" * 32)]

    stats = index.apply(alias, updates)

    bulk = es.calls("PUT|POST", "/_bulk")[-1]
    assert bulk.body == ndjson(index_action(name, updates[0]),
                               ({"delete": {"_index": name, "_id": records[1]["id"]}}, None),
                               ({"delete": {"_index": name, "_id": "f" * 32}}, None))
    assert (stats.indexed, stats.created, stats.deleted, stats.removed, stats.failed) == (1, 0, 2, 1, 0)
    rec = stats.reconciliation
    assert (rec.count_before, rec.expected_count, rec.index_count, rec.ok) == (3, 2, 2, True)
    [hit] = index.search(alias, "hamsters play", 5)
    assert hit["isShownAt"] == "http://doi.org/10.25549/berndt-m584-v2"


def test_apply_without_index_creates_one_behind_the_alias(es, index, alias, records, mapping_file):
    stats = index.apply(alias, records[:1])
    [create] = es.calls("PUT", f"/{alias}-20261122030000")
    assert create.json() == json.loads(mapping_file.read_text("utf-8"))
    [point] = es.calls("POST", "/_aliases")
    assert point.json() == {"actions": [{"add": {"index": f"{alias}-20261122030000", "alias": alias}}]}
    assert stats.indexed == 1 and stats.reconciliation.ok and index.count(alias) == 1


def test_document_failures_are_reported_and_counted(es, index, alias, records):
    bad = {"id": "b" * 32, "deleted": False,
           "document": json.dumps({"id": "b" * 32, "ingestDate": "yesterday afternoon"})}
    stats = index.full_build(alias, [records[0], bad, records[1], {"id": 7}], max_failure_rate=0.5)

    assert (stats.indexed, stats.failed) == (2, 2)
    invalid, parse = sorted(stats.failures, key=lambda failure: failure["op"], reverse=True)
    assert invalid == {"id": 7, "op": "validate", "status": None, "type": "invalid_index_record",
                       "reason": "id must be a non-empty string, got 7"}
    assert parse["id"] == "b" * 32 and parse["op"] == "index" and parse["status"] == 400
    assert parse["type"] in ("document_parsing_exception", "mapper_parsing_exception")
    assert "ingestDate" in parse["reason"]
    assert stats.reconciliation.ok and index.count(alias) == 2


def test_too_many_failures_keep_the_previous_index(es, index, alias, records):
    index.full_build(alias, records)
    bad = [{"id": f"{n:032x}", "deleted": False, "document": json.dumps({"ingestDate": "not a date"})}
           for n in range(3)]
    with pytest.raises(IndexBuildRefused, match="3 of 4 documents failed") as refused:
        index.full_build(alias, [records[0], *bad])

    assert refused.value.stats.failed == 3
    assert len(es.calls("POST", "/_aliases")) == 1
    assert es.calls("DELETE", f"/{alias}-20261122030001")
    assert es.raw("GET", f"/_alias/{alias}")[1] == {f"{alias}-20261122030000": {"aliases": {alias: {}}}}
    assert index.count(alias) == 3


def test_rejected_documents_are_retried_alone(es, index, alias, records):
    es.fail_items([records[1]["id"]], times=1)
    stats = index.full_build(alias, records)

    name = f"{alias}-20261122030000"
    first, retry = es.calls("PUT|POST", "/_bulk")
    assert first.body == ndjson(*(index_action(name, record) for record in records))
    assert retry.body == ndjson(index_action(name, records[1]))
    assert (stats.indexed, stats.failed) == (3, 0) and index.count(alias) == 3


def test_rejected_bulk_request_backs_off_and_is_resent(es, index, alias, records, rejected_request):
    es.fail_next("PUT|POST", "/_bulk", 429, rejected_request)
    stats = index.full_build(alias, records)

    first, second = es.calls("PUT|POST", "/_bulk")
    assert first.body == second.body
    assert (stats.indexed, stats.failed) == (3, 0) and stats.reconciliation.ok


def test_persistent_rejection_is_a_counted_failure(es, index, alias, records):
    es.fail_items([records[2]["id"]], times=10)
    stats = index.full_build(alias, records, max_failure_rate=0.5)

    assert len(es.calls("PUT|POST", "/_bulk")) == 3  # first attempt + max_retries=2
    assert (stats.indexed, stats.failed) == (2, 1)
    [failure] = stats.failures
    assert failure["id"] == records[2]["id"] and failure["status"] == 429
    assert failure["type"] == "es_rejected_execution_exception"
    assert stats.reconciliation.ok and index.count(alias) == 2


def test_unknown_alias_is_a_clear_error(index, alias):
    with pytest.raises(IngestError, match=f"no search index behind alias '{alias}'"):
        index.search(alias, "anything", 3)
    with pytest.raises(IngestError, match="no search index behind alias"):
        index.count(alias)



def _with_credentials(url: str, password: str) -> str:
    scheme, rest = url.split("://", 1)
    return f"{scheme}://elastic:{password}@{rest}"


def test_errors_name_the_server_without_its_password(es, alias, records, build_clock):
    password = "pw-" + uuid.uuid4().hex
    index = open_search_index(_with_credentials(es.url, password), initial_backoff=0.01, clock=build_clock)
    index.full_build(alias, records)
    cause = {"type": "illegal_state_exception", "reason": "shard is closing"}
    broken = {"error": {"root_cause": [cause], **cause}, "status": 500}
    es.fail_next("GET|POST", f"/{alias}/_count", 500, broken)
    with pytest.raises(FetchError) as refused:
        index.count(alias)
    assert refused.value.status == 500 and refused.value.retryable
    assert "HTTP 500 illegal_state_exception: shard is closing" in str(refused.value)
    index.close()

    unreachable = open_search_index(
        _with_credentials(f"http://127.0.0.1:{free_port()}", password), initial_backoff=0.01, clock=build_clock
    )
    with pytest.raises(FetchError) as down:
        unreachable.search(alias, "anything")
    assert down.value.status is None and down.value.retryable and "127.0.0.1" in str(down.value)
    unreachable.close()

    with pytest.raises(ConfigError) as malformed:
        open_search_index(f"http://elastic:{password}@127.0.0.1:notaport")
    for err in (refused.value, down.value, malformed.value):
        assert password not in str(err) and password not in repr(err.args) and "elastic:" not in str(err)
