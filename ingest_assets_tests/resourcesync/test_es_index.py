"""The Elasticsearch/OpenSearch backend at the HTTP boundary: exact requests through the recording proxy, answered
by each live search server (``es``); it gives the same documents as the embedded backend."""

from __future__ import annotations

import json
import socket
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from ingest_assets.core.errors import ConfigError, FetchError, IngestError
from ingest_assets.resourcesync.events import record_event
from ingest_assets.resourcesync.es_index import ElasticsearchResourceIndex
from ingest_assets.resourcesync.model import ResourceSet, resource_id
from ingest_assets.resourcesync.publish import Publisher
from ingest_assets.resourcesync.sql_index import SqlResourceIndex
from ingest_assets.core.sql import make_engine
from ingest_assets.storage import LocalStorage

SCHEMAS = Path(__file__).resolve().parents[2] / "ingest_assets" / "schemas"
RECORDED = datetime(2026, 2, 1, tzinfo=timezone.utc)
RS = ResourceSet("set1", "https://data.example.org/set1/", "/srv/set1")


def events(index, t0: datetime) -> None:
    """A realistic history: files created over two days, one updated twice, one deleted, a link."""

    def event(location, change, when, **kw):
        record_event(
            index,
            RS,
            location,
            change,
            when if change != "deleted" else None,
            when,
            timestamp=RECORDED + (when - t0),
            **kw,
        )

    for i in range(5):
        event(
            f"/srv/set1/docs/r{i}.pdf",
            "created",
            t0 + timedelta(hours=i),
            length=1000 + i,
            md5=f"{i:032x}",
            mime="application/pdf",
            links=[{"rel": "describedby", "href": f"meta/r{i}.xml", "mime": "application/xml"}],
        )
    event("https://other.example.org/landing/1", "created", t0 + timedelta(hours=6), mime="text/html")
    event("docs/r1.pdf", "updated", t0 + timedelta(days=1), length=2001, md5="a" * 32, sha256="b" * 64)
    event("docs/r2.pdf", "deleted", t0 + timedelta(days=1, hours=1, milliseconds=250))
    event("docs/r1.pdf", "updated", t0 + timedelta(days=1, hours=2), length=2002, md5="c" * 32)


def test_indices_are_created_with_the_schema_mappings(es):
    ElasticsearchResourceIndex(es.url)
    assert [(r.method, r.path) for r in es.requests] == [
        ("GET", "/"),  # which product answers (OpenSearch or Elasticsearch): asked once per client
        ("HEAD", "/resourcesync-resource"),
        ("PUT", "/resourcesync-resource"),
        ("HEAD", "/resourcesync-change"),
        ("PUT", "/resourcesync-change"),
        ("HEAD", "/resourcesync-resourcelist"),
        ("PUT", "/resourcesync-resourcelist"),
    ]
    for kind, create in zip(("resource", "change", "resourcelist"), es.requests[2::2], strict=True):
        assert create.json() == json.loads((SCHEMAS / f"resourcesync-{kind}.json").read_text())
    mappings = {kind: es.raw("GET", f"/resourcesync-{kind}/_mapping")[1][f"resourcesync-{kind}"]["mappings"]
                for kind in ("resource", "change", "resourcelist")}
    resource = mappings["resource"]
    assert set(resource) == {"_meta", "dynamic", "properties"}  # no mapping type level
    props = resource["properties"]
    assert props["resource_set"] == {"type": "keyword"}
    assert props["location"]["type"] == props["ln"]["type"] == props["ln"]["properties"]["href"]["type"] == "nested"
    assert props["timestamp"]["type"] == "date" and props["length"]["type"] == "long"
    change = mappings["change"]["properties"]
    assert {change[k]["type"] for k in ("datetime", "listed", "timestamp", "lastmod")} == {"date"}
    resource_list = mappings["resourcelist"]["properties"]
    assert resource_list == {"resource_set": {"type": "keyword"}, "at": change["datetime"]}
    assert not any(v.get("type") in ("string", "text") for v in {**props, **change}.values())

    es.requests.clear()
    ElasticsearchResourceIndex(es.url)  # existing indices are left alone
    assert [(r.method, r.path) for r in es.requests] == [
        ("GET", "/"),
        ("HEAD", "/resourcesync-resource"),
        ("HEAD", "/resourcesync-change"),
        ("HEAD", "/resourcesync-resourcelist"),
    ]


def test_index_created_meanwhile_by_another_process_is_fine(es):
    ElasticsearchResourceIndex(es.url)
    es.fail_next("HEAD", "/resourcesync-resource", 404, {})  # missing, then PUT answers "already exists"
    ElasticsearchResourceIndex(es.url)
    assert [(r.method, r.path) for r in es.requests[-4:]] == [
        ("HEAD", "/resourcesync-resource"),
        ("PUT", "/resourcesync-resource"),
        ("HEAD", "/resourcesync-change"),
        ("HEAD", "/resourcesync-resourcelist"),
    ]


def test_each_event_is_one_bulk_request_with_both_documents(es, t0):
    index = ElasticsearchResourceIndex(es.url)
    es.requests.clear()
    change = record_event(index, RS, "/srv/set1/a.txt", "created", t0, t0, length=3, md5="d" * 32, timestamp=RECORDED)
    at_request = ("GET", "/resourcesync-resourcelist/_doc/set1", {}, None)  # real time: no refresh needed
    assert [(r.method, r.path, r.params, r.json()) for r in es.requests[::2]] == [at_request, at_request]
    assert len(es.requests) == 3
    method, path, body = es.requests[1].method, es.requests[1].path, es.requests[1].json()
    resource = {
        "resource_set": "set1",
        "location": {"type": "rel_path", "value": "a.txt"},
        "length": 3,
        "md5": "d" * 32,
        "sha256": None,
        "mime": None,
        "lastmod": "2026-01-05T09:00:00.000Z",
        "ln": [],
        "timestamp": "2026-02-01T00:00:00.000Z",
    }
    resource_id = body[0]["index"]["_id"]
    assert (method, path) == ("PUT", "/_bulk")
    assert body == [
        {"index": {"_index": "resourcesync-resource", "_id": resource_id}},
        resource,
        {"create": {"_index": "resourcesync-change", "_id": change["change_id"]}},
        change,
    ]
    assert change == {
        "change_id": change["change_id"],
        "resource_set": "set1",
        "location": {"type": "rel_path", "value": "a.txt"},
        "change": "created",
        "lastmod": "2026-01-05T09:00:00.000Z",
        "datetime": "2026-01-05T09:00:00.000Z",
        "listed": "2026-01-05T09:00:00.000Z",  # no Resource List yet: listed at the event time
        "timestamp": "2026-02-01T00:00:00.000Z",
        "length": 3,
        "md5": "d" * 32,
        "sha256": None,
        "mime": None,
    }

    # a Resource List taken at 12:00, then the deletion observed at 10:00 is recorded
    index.start_resource_list("set1", "2026-01-05T12:00:00.000Z")
    [put] = es.requests[-1:]
    assert (put.method, put.path, put.json()) == (
        "PUT",
        "/resourcesync-resourcelist/_doc/set1",
        {"resource_set": "set1", "at": "2026-01-05T12:00:00.000Z"},
    )
    deleted = record_event(index, RS, "a.txt", "deleted", None, t0 + timedelta(hours=1), timestamp=RECORDED)
    assert (deleted["datetime"], deleted["listed"]) == ("2026-01-05T10:00:00.000Z", "2026-01-05T12:00:00.000Z")
    assert es.requests[-2].json() == [
        {"delete": {"_index": "resourcesync-resource", "_id": resource_id}},
        {"create": {"_index": "resourcesync-change", "_id": deleted["change_id"]}},
        deleted,
    ]
    # a replayed deletion after a later Resource List: 404 for the resource, 409 for the change; both mean
    # "already done", and the change is kept as first recorded
    index.start_resource_list("set1", "2026-01-05T13:00:00.000Z")
    es.requests.clear()
    replayed = record_event(index, RS, "a.txt", "deleted", None, t0 + timedelta(hours=1), timestamp=RECORDED)
    es.raw("POST", "/resourcesync-change/_refresh")  # straight to the server: not recorded
    assert replayed == deleted and es.raw("GET", "/resourcesync-change/_count")[1]["count"] == 2
    assert [(r.method, r.path) for r in es.requests] == [
        ("GET", "/resourcesync-resourcelist/_doc/set1"),
        ("PUT", "/_bulk"),
        ("GET", f"/resourcesync-change/_doc/{deleted['change_id']}"),
    ]


def test_change_is_listed_after_a_resource_list_that_started_while_it_was_written(es, t0):
    """No transactions: a Resource List can start between reading its predecessor's ``at`` and the bulk
    write, and read before the write is visible. The change is then listed again, at the new ``at``."""
    index = ElasticsearchResourceIndex(es.url)
    index.start_resource_list("set1", "2026-01-05T12:00:00.000Z")
    # a publisher's start_resource_list lands just before the bulk request
    es.before_next("PUT|POST", "/_bulk", lambda: ElasticsearchResourceIndex(es.url).start_resource_list(
        "set1", "2026-01-05T13:00:00.000Z"))
    es.requests.clear()
    change = record_event(index, RS, "b.txt", "created", t0, t0, length=1, timestamp=RECORDED)
    assert change["listed"] == "2026-01-05T13:00:00.000Z" and change["datetime"] == "2026-01-05T09:00:00.000Z"
    assert es.raw("GET", f"/resourcesync-change/_doc/{change['change_id']}")[1]["_source"] == change
    assert [(r.method, r.path) for r in es.requests if r.method != "HEAD"] == [
        ("GET", "/resourcesync-resourcelist/_doc/set1"),
        ("PUT", "/_bulk"),
        ("GET", "/"),  # the publisher's client asks which product answers
        ("PUT", "/resourcesync-resourcelist/_doc/set1"),  # the publisher's
        ("GET", "/resourcesync-resourcelist/_doc/set1"),
        ("PUT", f"/resourcesync-change/_doc/{change['change_id']}"),
        ("GET", "/resourcesync-resourcelist/_doc/set1"),
    ]
    index.refresh()
    assert [c["listed"] for c in index.changes("set1")] == ["2026-01-05T13:00:00.000Z"]


def test_refused_document_and_unavailable_server_raise_errors_naming_the_event(es, t0):
    index = ElasticsearchResourceIndex(es.url)
    es.fail_items([resource_id("set1", {"type": "rel_path", "value": "a.txt"})])  # the resource document: a 429
    with pytest.raises(IngestError, match="es_rejected_execution_exception") as err:
        record_event(index, RS, "a.txt", "created", t0, t0)
    assert err.value.retryable and err.value.record == "a.txt" and err.value.provider == "set1"

    unavailable = {
        "error": {
            "root_cause": [{"type": "cluster_block_exception", "reason": "blocked"}],
            "type": "cluster_block_exception",
            "reason": "blocked",
        },
        "status": 503,
    }
    es.fail_next("PUT|POST", "/_bulk", 503, unavailable)  # retried by the client, then fine
    record_event(index, RS, "b.txt", "created", t0, t0)
    es.fail_next("PUT|POST", "/_bulk", 503, unavailable, times=4)
    with pytest.raises(FetchError) as err:
        record_event(index, RS, "c.txt", "created", t0, t0)
    assert err.value.status == 503 and err.value.retryable and es.url in str(err.value)

    bad = {
        "error": {
            "root_cause": [{"type": "query_shard_exception", "reason": "No mapping found for [datetime]"}],
            "type": "search_phase_execution_exception",
            "reason": "all shards failed",
        },
        "status": 400,
    }
    es.fail_next("POST|GET", "/_search", 400, bad)
    with pytest.raises(FetchError, match="400") as err:
        list(index.changes("set1"))
    assert not err.value.retryable
    last = es.requests[-1]
    assert last.method == "DELETE" and last.path in ("/_pit", "/_search/point_in_time")  # each server's name
    stats = es.raw("GET", "/_nodes/stats/indices/search")[1]["nodes"].values()
    assert sum(node["indices"]["search"]["open_contexts"] for node in stats) == 0  # the point in time is closed


def test_errors_name_the_server_without_its_password(es, t0):
    password = "pw-" + uuid.uuid4().hex
    index = ElasticsearchResourceIndex(es.url.replace("://", f"://elastic:{password}@"))
    refusal = {"type": "document_parsing_exception", "reason": "[1:42] failed to parse field [length] of type [long]"}
    es.fail_items([resource_id("set1", {"type": "rel_path", "value": "a.txt"})], status=400, error=refusal)
    with pytest.raises(IngestError, match="document_parsing_exception") as refused:
        record_event(index, RS, "a.txt", "created", t0, t0)
    full = {"error": {"type": "cluster_block_exception", "reason": "disk usage exceeded"}, "status": 503}
    es.fail_next("PUT|POST", "/_bulk", 503, full, times=4)
    with pytest.raises(FetchError, match="HTTP 503 cluster_block_exception: disk usage exceeded") as unavailable:
        record_event(index, RS, "b.txt", "created", t0, t0)
    assert unavailable.value.status == 503 and unavailable.value.retryable

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(FetchError) as down:  # nothing listens there any more
        ElasticsearchResourceIndex(f"http://elastic:{password}@127.0.0.1:{port}")
    assert down.value.status is None and down.value.retryable and f"127.0.0.1:{port}" in str(down.value)
    with pytest.raises(ConfigError) as malformed:
        ElasticsearchResourceIndex(f"http://elastic:{password}@127.0.0.1:notaport")

    for err in (refused.value, unavailable.value, down.value, malformed.value):
        assert err.file and password not in str(err) and "elastic:" not in str(err)


def _publish_all(index, tmp: Path, t0: datetime) -> dict[str, bytes]:
    moments = iter(t0 + timedelta(days=3, seconds=s) for s in range(1000))
    storage = LocalStorage(tmp)
    Publisher(index, storage, "https://rs.example.org", limit=3, clock=lambda: next(moments)).publish([RS])
    return {key: storage.read_bytes(key) for key in storage.list_keys()}


def test_embedded_and_elasticsearch_give_the_same_documents(es, tmp_path, t0):
    remote = ElasticsearchResourceIndex(es.url, page=2)  # small pages: search_after paging is exercised
    sql = SqlResourceIndex(make_engine(f"sqlite:///{tmp_path}/index.sqlite3"))
    for index in (remote, sql):
        events(index, t0)
    remote.refresh()  # search sees what the last refresh made visible; SQL needs none
    assert list(remote.resources("set1")) == list(sql.resources("set1"))
    assert list(remote.changes("set1")) == list(sql.changes("set1"))
    assert remote.change_span("set1") == sql.change_span("set1") == ("2026-01-05T09:00:00.000Z", "2026-02-02T02:00:00.000Z")
    ours = _publish_all(sql, tmp_path / "sql", t0)
    theirs = _publish_all(remote, tmp_path / "remote", t0)
    assert ours == theirs
    assert len([k for k in ours if "/changelist/" in k]) == 3  # six changes on day one, three on day two
    assert b'change="deleted" datetime="2026-01-06T10:00:00.250Z"' in b"".join(ours.values())
    searches = [r.json() for r in es.requests if r.path == "/_search"]
    assert searches[0]["sort"] == [
        {"location.value": {"order": "asc", "nested": {"path": "location"}}},
        {"location.type": {"order": "asc", "nested": {"path": "location"}}},
    ]
    assert any(body.get("search_after") for body in searches)


def _late_history(index, tmp: Path, t0: datetime) -> tuple[list[dict], dict[str, bytes]]:
    """:func:`events`, a publish, then a harvest's events observed before it but recorded after it, and
    the next publish: (change documents, published documents)."""
    moments = iter(t0 + timedelta(days=3, seconds=s) for s in range(1000))
    storage = LocalStorage(tmp)
    publisher = Publisher(index, storage, "https://rs.example.org", limit=3, clock=lambda: next(moments))
    events(index, t0)
    publisher.publish([RS])
    observed, recorded = t0 + timedelta(days=3) - timedelta(minutes=30), RECORDED + timedelta(days=5)
    record_event(index, RS, "docs/r3.pdf", "updated", observed, observed, length=9, md5="e" * 32, timestamp=recorded)
    record_event(index, RS, "docs/r4.pdf", "deleted", None, observed, timestamp=recorded + timedelta(seconds=1))
    publisher.publish([RS])
    index.refresh()
    return list(index.changes("set1")), {key: storage.read_bytes(key) for key in storage.list_keys()}


def test_late_events_are_listed_after_the_publish_alike_in_both_backends(es, tmp_path, t0):
    remote = ElasticsearchResourceIndex(es.url, page=2)
    sql = SqlResourceIndex(make_engine(f"sqlite:///{tmp_path}/index.sqlite3"))
    changes, published = _late_history(sql, tmp_path / "sql", t0)
    assert _late_history(remote, tmp_path / "remote", t0) == (changes, published)
    at = "2026-01-08T09:00:00.000Z"  # the first publish's Resource List
    assert [(c["change"], c["datetime"], c["listed"]) for c in changes[-2:]] == [
        ("updated", "2026-01-08T08:30:00.000Z", at),
        ("deleted", "2026-01-08T08:30:00.000Z", at),
    ]
    assert all(c["listed"] == c["datetime"] for c in changes[:-2])  # recorded before any Resource List
    [late] = [v for k, v in published.items() if k.endswith("/changelist/20260108T000000Z-00001.xml")]
    assert b'<rs:md capability="changelist" from="2026-01-08T09:00:00Z"' in late
    assert b'<lastmod>2026-01-08T08:30:00Z</lastmod><rs:md change="updated" datetime="2026-01-08T09:00:00Z"' in late
    assert b'/docs/r4.pdf</loc><rs:md change="deleted" datetime="2026-01-08T09:00:00Z"/>' in late


def test_postgresql_tables_give_the_same_documents(pg_url, tmp_path, t0):
    """The embedded backend's tables on the production database (byte order of paths kept: COLLATE "C")."""
    pg = SqlResourceIndex(make_engine(pg_url))
    sql = SqlResourceIndex(make_engine(f"sqlite:///{tmp_path}/index.sqlite3"))
    try:
        for index in (pg, sql):
            events(index, t0)
            record_event(index, RS, "docs/Z.pdf", "created", t0, t0, timestamp=RECORDED)  # sorts before "docs/r"
        assert list(pg.resources("set1")) == list(sql.resources("set1"))
        assert _publish_all(pg, tmp_path / "pg", t0) == _publish_all(sql, tmp_path / "sql", t0)
        with pg.engine.begin() as conn:
            conn.exec_driver_sql("TRUNCATE rs_resource, rs_change, rs_resourcelist")
        late = _late_history(SqlResourceIndex(make_engine(f"sqlite:///{tmp_path}/late.sqlite3")), tmp_path / "l", t0)
        assert _late_history(pg, tmp_path / "late-pg", t0) == late
    finally:
        with pg.engine.begin() as conn:
            conn.exec_driver_sql("DROP TABLE rs_resource, rs_change, rs_resourcelist")
        pg.close()
