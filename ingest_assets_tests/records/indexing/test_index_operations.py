"""The search index primitives publishing is built on, on every backend (embedded SQLite, live OpenSearch and
Elasticsearch): per-provider physical indices behind one alias, exact copies, alias
updates that name what they replace, per-index health, listing and lookups by id."""

from __future__ import annotations

import json

import pytest

from ingest_assets.core.errors import IngestError
from ingest_assets.records.indexing import AliasChanged, deletion_record, index_record, open_search_index
from ingest_assets.records.indexing.search_index import MAX_HITS

ALIAS = "dpla-map4"


@pytest.fixture
def records(map_records):
    return [index_record(record) for record in map_records]


@pytest.fixture
def index(search):
    return search


def ids(docs):
    return sorted(doc["id"] for doc in docs)


def test_provider_indices_behind_one_alias(index, records):
    first = index.create_index(ALIAS, "kentucky")
    second = index.create_index(ALIAS, "usc")
    assert (first, second) == ("dpla-map4-kentucky-20261122030000", "dpla-map4-usc-20261122030000")
    assert index.write(first, records[2:]).reconciliation.ok
    assert index.write(second, records[:2]).reconciliation.ok
    assert index.aliased(ALIAS) == []
    index.update_alias(ALIAS, add=[first, second])

    assert index.aliased(ALIAS) == [first, second]
    assert index.count(ALIAS) == 3 and index.count(first) == 1
    assert ids(index.search(ALIAS, "hamsters", 10)) == [records[0]["id"], records[1]["id"]]  # spans both
    assert ids(index.search(ALIAS, "*", 10)) == sorted(r["id"] for r in records)
    assert ids(index.search(first, "*", 10)) == [records[2]["id"]]
    found = index.documents(ALIAS, [records[0]["id"], records[2]["id"], "f" * 32])
    assert found == {r["id"]: json.loads(r["document"]) for r in (records[0], records[2])}
    assert [(i.name, i.provider, i.count, i.aliased) for i in index.indices(ALIAS)] == [
        (first, "kentucky", 1, True), (second, "usc", 2, True)]


def test_copy_is_exact_and_searchable(index, records):
    source = index.create_index(ALIAS, "usc")
    index.write(source, records)
    target = index.create_index(ALIAS, "usc")
    assert target == "dpla-map4-usc-20261122030001"

    assert index.copy(source, target) == 3
    assert index.count(target) == 3
    assert index.documents(target, [r["id"] for r in records]) == index.documents(source, [r["id"] for r in records])
    assert ids(index.search(target, "hamsters", 10)) == [records[0]["id"], records[1]["id"]]
    stats = index.write(target, [deletion_record(records[0]["id"])])  # the copy is its own index
    assert (stats.removed, index.count(target), index.count(source)) == (1, 2, 3)


def test_alias_update_names_what_it_replaces(index, records):
    old, new, other = (index.create_index(ALIAS, provider) for provider in ("usc", "usc", "kentucky"))
    index.update_alias(ALIAS, add=[old, other])
    index.update_alias(ALIAS, add=[new], remove=[old])
    assert index.aliased(ALIAS) == sorted([new, other])

    with pytest.raises(AliasChanged, match="no longer points at"):  # a second flip from the same state
        index.update_alias(ALIAS, add=[old], remove=[old])
    assert index.aliased(ALIAS) == sorted([new, other])  # nothing changed

    index.drop(old)
    assert old not in [i.name for i in index.indices(ALIAS)]
    index.drop(old)  # dropping what is gone is nothing


def test_health_of_a_new_index(index, records):
    name = index.create_index(ALIAS, "usc")
    index.write(name, records)
    health = index.health(name)
    assert health.ok and health.status in ("green", "yellow")
    if health.status == "yellow":  # one node cannot hold a replica: every shard it can place is placed
        assert health.evidence["copies_per_shard"] > health.evidence["number_of_data_nodes"]
        assert health.evidence["cluster_status"] in ("green", "yellow")


def test_documents_by_id_are_bounded(index, records):
    name = index.create_index(ALIAS, "usc")
    assert index.documents(name, []) == {}
    with pytest.raises(ValueError, match="at most 1000 ids"):
        index.documents(name, [f"{n:032x}" for n in range(1001)])


def test_a_search_asks_for_no_more_hits_than_a_server_answers(index, records):
    """The servers refuse a page past ``index.max_result_window`` (10,000) with HTTP 400, so a search of the largest
    size every backend takes is answered, and a larger one is refused before it is sent."""
    name = index.create_index(ALIAS, "usc")
    index.write(name, records)
    assert {doc["id"] for doc in index.search(name, "*", MAX_HITS)} <= {r["id"] for r in records}
    with pytest.raises(ValueError, match=f"1 to {MAX_HITS} hits"):
        index.search(name, "*", MAX_HITS + 1)


def test_a_missing_index_is_named(index):
    with pytest.raises(IngestError, match="dpla-map4-usc-20990101000000"):
        index.write("dpla-map4-usc-20990101000000", [])


def test_red_index_is_not_healthy(es, build_clock, records):
    """A primary shard no node holds (injected: a real single node cannot be made to lose one on demand): the wait
    for yellow times out (408) with the figures as they are."""
    index = open_search_index(es.url, clock=build_clock)
    name = index.create_index(ALIAS, "usc")
    index.write(name, records)
    red = {"cluster_name": "ingest-test", "status": "red", "timed_out": True, "number_of_nodes": 1,
           "number_of_data_nodes": 1, "active_primary_shards": 1, "active_shards": 1, "relocating_shards": 0,
           "initializing_shards": 0, "unassigned_shards": 3, "unassigned_primary_shards": 1,
           "delayed_unassigned_shards": 0, "number_of_pending_tasks": 0, "number_of_in_flight_fetch": 0,
           "task_max_waiting_in_queue_millis": 0, "active_shards_percent_as_number": 25.0}
    es.fail_next("GET", "/_cluster/health", 200, {**red, "timed_out": False})  # a red index makes the cluster red
    es.fail_next("GET", f"/_cluster/health/{name}", 408, red)
    health = index.health(name)
    assert not health.ok and health.status == "red"
    assert health.evidence["cluster_status"] == "red" and health.evidence["active_primary_shards"] == 1
    index.drop(name)


def test_damaged_embedded_index_is_not_healthy(tmp_path, build_clock, records):
    index = open_search_index(tmp_path / "search", clock=build_clock)
    name = index.create_index(ALIAS, "usc")
    index.write(name, records)
    path = tmp_path / "search" / f"{name}.sqlite3"
    path.write_bytes(b"this is no longer a database" * 200)
    health = index.health(name)
    assert not health.ok and health.status == "red" and "not a database" in health.evidence["quick_check"]
