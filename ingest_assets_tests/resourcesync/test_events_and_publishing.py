"""record_event (one transaction, validated locations) and the publisher's incremental Change Lists."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from urllib.error import HTTPError
from urllib.request import Request, urlopen

import pytest
from sqlalchemy import text

from ingest_assets.core.errors import ValidationError
from ingest_assets.resourcesync.events import record_event
from ingest_assets.resourcesync.model import Location, ResourceSet
from ingest_assets.resourcesync.server import ResourceSyncApp
from ingest_assets.resourcesync.sql_index import SqlResourceIndex
from ingest_assets.core.sql import make_engine


def test_abs_path_resolves_under_the_root_and_never_outside(tmp_path):
    root = tmp_path / "root"
    rs = ResourceSet("set1", "https://data.example.org/set1", str(root))
    assert rs.url(Location.of(f"{root}/a/b c.txt")) == "https://data.example.org/set1/a/b%20c.txt"
    assert rs.canonical(Location.of(f"{root}/x/../a.txt")) == Location("rel_path", "a.txt")
    for outside in (f"{root}/../etc/passwd", f"{root}-other/a.txt", "/etc/passwd", str(root)):
        with pytest.raises(ValidationError, match="outside the root") as err:
            rs.url(Location.of(outside))
        assert "set1" in str(err.value) and outside in str(err.value)
    for bad in ("../a.txt", "a/../../b", "a//b", "a\\b"):
        with pytest.raises(ValidationError, match="inside the root"):
            rs.url(Location("rel_path", bad))
    with pytest.raises(ValidationError, match="local root"):
        ResourceSet("s3set", "https://x.org/", "s3://bucket/prefix").url(Location.of("/data/a.txt"))
    with pytest.raises(ValidationError, match="http"):
        rs.url(Location("url", "ftp://example.org/a"))


def test_event_writes_resource_and_change_in_one_transaction(source, t0):
    src = source()
    src.put("a.txt", b"one", t0)
    engine = src.index.engine
    with engine.begin() as conn:  # make the change insert fail after the resource write
        conn.execute(
            text("CREATE TRIGGER refuse BEFORE INSERT ON rs_change BEGIN SELECT RAISE(ABORT, 'disk full'); END")
        )
    with pytest.raises(Exception, match="disk full"):
        src.put("a.txt", b"two", t0 + timedelta(hours=1))
    [resource] = src.index.resources("set1")
    assert resource["md5"] == "f97c5d29941bfb1b2fdab0874906ab82" and resource["lastmod"] == "2026-01-05T09:00:00.000Z"
    assert [c["change"] for c in src.index.changes("set1")] == ["created"]


def test_event_validation_names_set_and_record_and_writes_nothing(source, t0, tmp_path):
    src = source()
    cases = [
        dict(location=str(tmp_path / "elsewhere.txt"), change="created"),
        dict(location="a.txt", change="modified"),
        dict(location="a.txt", change="created", length=-1),
        dict(location="a.txt", change="created", md5="D41D8CD98F00B204E9800998ECF8427E"),  # digests are lower-case hex
        dict(location="a.txt", change="created", mime='text/html"><evil'),
        dict(location="a.txt", change="created", links=[{"rel": "describedby", "href": "../up.xml"}]),
    ]
    for case in cases:
        with pytest.raises(ValidationError) as err:
            record_event(src.index, src.set, lastmod=t0, datetime=t0, **case)
        assert "'set1'" in str(err.value)
    with pytest.raises(ValidationError, match="timezone-aware"):
        record_event(src.index, src.set, "a.txt", "created", t0, datetime(2026, 1, 1))
    assert list(src.index.resources("set1")) == [] and list(src.index.changes("set1")) == []


def test_replayed_event_is_logged_once_and_changes_keep_event_time(source, t0):
    src = source()
    for _ in range(2):
        record_event(
            src.index,
            src.set,
            "a.txt",
            "created",
            t0,
            t0,
            length=3,
            timestamp=datetime(2026, 3, 1, tzinfo=timezone.utc),
        )
    [change] = src.index.changes("set1")
    assert (change["datetime"], change["timestamp"]) == ("2026-01-05T09:00:00.000Z", "2026-03-01T00:00:00.000Z")


def test_reading_and_publishing_never_delete_and_only_touched_intervals_are_rewritten(source, t0, fixed_clock):
    src = source(clock=fixed_clock.clock)
    fixed_clock.state["now"] = t0 + timedelta(days=3)
    for day in range(3):  # recorded, as they happen, at the clock's time
        src.put(f"d{day}.txt", b"x", t0 + timedelta(days=day), recorded=fixed_clock.clock())
    fixed_clock.state["now"] += timedelta(hours=1)
    assert src.publish()["change_lists_written"] == 3
    first = src.state()["parts"]
    assert [p["until"] for p in first] == [
        "2026-01-06T00:00:00.000Z",
        "2026-01-07T00:00:00.000Z",
        "2026-01-08T00:00:00.000Z",
    ]
    # hours later, nothing new: nothing rewritten, nothing removed from the log
    fixed_clock.state["now"] += timedelta(hours=6)
    assert src.publish()["change_lists_written"] == 0
    assert len(list(src.index.changes("set1"))) == 3
    # an event of the middle day recorded late: listed at the latest Resource List's at (a destination
    # baselined from it may lack the change), in a new list; the published ones are left as they were
    paths = [src.storage.uri(f"_resourcesync/set1/changelist/2026010{d}T000000Z-00001.xml") for d in (5, 6, 7)]
    before = [os.stat(path).st_mtime_ns for path in paths]
    src.delete("d0.txt", t0 + timedelta(days=1, hours=5), recorded=fixed_clock.clock())
    assert src.publish()["change_lists_written"] == 1
    assert [os.stat(path).st_mtime_ns for path in paths] == before
    at = src.state()["resource_list_ats"][1]
    assert src.state()["parts"][-1]["from"] == at == "2026-01-08T16:00:07.000Z"
    late = src.storage.read_bytes("_resourcesync/set1/changelist/20260108T000000Z-00001.xml")
    assert b'<rs:md change="deleted" datetime="2026-01-08T16:00:07Z"/>' in late
    assert len(list(src.index.changes("set1"))) == 4
    assert list(src.index.changes("set1"))[-1]["datetime"] == "2026-01-06T14:00:00.000Z"  # the event time


def test_each_publish_cuts_the_change_lists_at_its_resource_list(source, t0, fixed_clock):
    src = source(clock=fixed_clock.clock)
    fixed_clock.state["now"] = t0 + timedelta(hours=1)
    src.put("a.txt", b"a", t0)
    src.put("b.txt", b"b", t0 + timedelta(hours=2))  # after the Resource List's at: its list stays open
    src.publish()
    at = src.state()["resource_list_ats"][-1]
    assert at == "2026-01-05T10:00:01.000Z"
    assert [(p["from"], p["until"]) for p in src.state()["parts"]] == [
        ("2026-01-05T00:00:00.000Z", at),
        (at, None),
    ]
    index = src.storage.read_bytes("_resourcesync/set1/changelist.xml")
    assert b'<rs:md capability="changelist" from="2026-01-05T00:00:00Z"/>' in index
    assert b'<rs:md from="2026-01-05T10:00:01Z"/></sitemap>' in index
    fixed_clock.state["now"] = t0 + timedelta(days=1)
    assert src.publish()["change_lists_written"] == 2
    assert [(p["from"], p["until"]) for p in src.state()["parts"]] == [
        ("2026-01-05T00:00:00.000Z", at),
        (at, "2026-01-06T00:00:00.000Z"),
    ]


def test_empty_set_publishes_valid_empty_lists_and_old_snapshots_are_pruned(source):
    src = source()
    for _ in range(3):
        assert src.publish() == {"resources": 0, "change_lists": 0, "change_lists_written": 0}
    assert len(src.storage.list_children("_resourcesync/set1/resourcelist")) == 2
    index = src.storage.read_bytes("_resourcesync/set1/changelist.xml")
    assert b"<sitemapindex" in index and b"<sitemap>" not in index


def test_server_serves_only_published_documents_and_files_under_the_root(source, t0, tmp_path):
    src = source()
    src.put("a.txt", b"a", t0)
    (tmp_path / "secret.txt").write_bytes(b"secret")
    (src.root / "link.txt").symlink_to(tmp_path / "secret.txt")
    src.publish()
    with urlopen(f"{src.base}/set1/resources/a.txt", timeout=5) as response:
        assert response.read() == b"a" and response.headers["Content-Type"] == "text/plain"
    with urlopen(Request(f"{src.base}/set1/changelist.xml", method="HEAD"), timeout=5) as response:
        size = len(src.storage.read_bytes("_resourcesync/set1/changelist.xml"))
        assert response.read() == b"" and response.headers["Content-Length"] == str(size)
    with pytest.raises(HTTPError) as err:
        urlopen(Request(f"{src.base}/set1/changelist.xml", data=b"x", method="POST"), timeout=5)
    assert err.value.code == 405
    for path in (
        "/set1/resources/link.txt",
        "/set1/resources/../../secret.txt",
        "/set1/resources/%2e%2e/secret.txt",
        "/set1/changelists.json",
        "/set1/resources/missing.txt",
        "/other/resources/a.txt",
        "/",
        "/set1/resourcelist",
    ):
        with pytest.raises(HTTPError) as err:
            urlopen(src.base + path, timeout=5)
        assert err.value.code == 404, path


def test_server_serves_the_files_of_a_set_without_root_from_its_storage_area(tmp_storage, http_server, tmp_path):
    records = ResourceSet("recs", "https://cdn.example.org/recs/")  # no root: files in the storage
    tmp_storage.write_bytes("_resourcesync/recs/resources/items/a1.jsonld", b'{"id":"a1"}')
    tmp_storage.write_bytes("_resourcesync/recs/changelists.json", b"{}")
    tmp_storage.write_bytes("demo/state/secret.json", b"secret")
    area = tmp_path / "storage/_resourcesync/recs/resources/items"
    (area / "state.jsonld").symlink_to(tmp_path / "storage/demo/state/secret.json")
    base = http_server(app=ResourceSyncApp(tmp_storage, [records]))
    with urlopen(f"{base}/recs/resources/items/a1.jsonld", timeout=5) as response:
        assert response.read() == b'{"id":"a1"}' and response.headers["Content-Type"] == "application/ld+json"
    for path in (
        "/recs/resources/items/state.jsonld",
        "/recs/resources/../changelists.json",
        "/recs/resources/%2e%2e/changelists.json",
        "/recs/resources/items",
        "/recs/resources/items/b2.jsonld",
        "/other/resources/items/a1.jsonld",
    ):
        with pytest.raises(HTTPError) as err:
            urlopen(base + path, timeout=5)
        assert err.value.code == 404, path


def test_event_committed_after_a_publish_read_is_published_next_time(source, t0, fixed_clock):
    """A transaction that took its recording time before a publish read but committed after it."""
    src = source(clock=fixed_clock.clock)
    fixed_clock.state["now"] = t0 + timedelta(days=2)
    src.put("a.txt", b"a", t0, recorded=fixed_clock.clock())
    in_flight_since = fixed_clock.clock()
    src.publish()
    src.put("b.txt", b"b", t0 + timedelta(hours=1), recorded=in_flight_since)
    fixed_clock.state["now"] += timedelta(hours=1)
    assert src.publish()["change_lists_written"] == 2  # a's list again (recorded just before), b's new one
    at = src.state()["resource_list_ats"][0]  # committed after that Resource List began: listed after it
    [part] = [p for p in src.state()["parts"] if p["from"] == at]
    assert b"/b.txt</loc>" in src.storage.read_bytes(f"_resourcesync/set1/changelist/{part['url'].rsplit('/', 1)[1]}")


def test_one_command_publishes_and_serves(tmp_path, t0):
    """``ingest-assets serve-resourcesync --publish`` with the platform's settings and registry."""
    files = tmp_path / "files"
    files.mkdir()
    (files / "a.txt").write_bytes(b"served")
    (tmp_path / "registry.yaml").write_text(f"demo:\n  resourcesync:\n    root: {files}\n")
    env = {**os.environ, "INGEST_HOME": str(tmp_path / "home"), "INGEST_REGISTRY": str(tmp_path / "registry.yaml")}
    env.pop("INGEST_RESOURCESYNC_URL", None)
    env.pop("INGEST_SEARCH", None)
    index = SqlResourceIndex(make_engine(f"sqlite:///{tmp_path / 'home' / 'ingest.sqlite3'}"))
    demo = ResourceSet("demo", "http://unused.example.org/", str(files))
    record_event(index, demo, str(files / "a.txt"), "created", t0, t0, length=6)
    server = subprocess.Popen(
        [sys.executable, "-m", "ingest_assets.cli", "serve-resourcesync", "--port", "0", "--publish"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = server.stdout.readline()
        assert line.startswith("serving ResourceSync on http://127.0.0.1:"), line
        description = line.split()[-1]
        base = description.rsplit("/.well-known/", 1)[0]
        with urlopen(description, timeout=5) as response:
            assert f"<loc>{base}/demo/capabilitylist.xml</loc>".encode() in response.read()
        with urlopen(f"{base}/demo/changelist.xml", timeout=5) as response:
            assert b'<rs:md capability="changelist" from="2026-01-05T00:00:00Z"/>' in response.read()
        with urlopen(f"{base}/demo/resources/a.txt", timeout=5) as response:
            assert response.read() == b"served"
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_tables_made_before_listing_times_list_their_changes_at_the_event_time(tmp_path, t0):
    engine = make_engine(f"sqlite:///{tmp_path}/old.sqlite3")
    with engine.begin() as conn:  # the rs_change table as it was, with one logged change
        conn.exec_driver_sql(
            "CREATE TABLE rs_change (change_id VARCHAR(40) PRIMARY KEY, resource_set VARCHAR(64) NOT NULL, "
            "loc_type VARCHAR(8) NOT NULL, loc_value TEXT NOT NULL, change VARCHAR(8) NOT NULL, lastmod VARCHAR(24), "
            "datetime VARCHAR(24) NOT NULL, timestamp VARCHAR(24) NOT NULL, length BIGINT, md5 VARCHAR(32), "
            "sha256 VARCHAR(64), mime VARCHAR(255))"
        )
        conn.exec_driver_sql("CREATE INDEX rs_change_order ON rs_change (resource_set, datetime, timestamp, change_id)")
        conn.exec_driver_sql(
            "INSERT INTO rs_change VALUES ('c1', 'set1', 'rel_path', 'a.txt', 'created', NULL, "
            "'2026-01-05T09:00:00.000Z', '2026-01-05T09:01:00.000Z', NULL, NULL, NULL, NULL)"
        )
    index = SqlResourceIndex(engine)
    record_event(index, ResourceSet("set1", "https://x.org/"), "b.txt", "created", t0, t0 + timedelta(hours=1))
    assert [(c["change_id"] == "c1", c["listed"]) for c in index.changes("set1")] == [
        (True, "2026-01-05T09:00:00.000Z"),
        (False, "2026-01-05T10:00:00.000Z"),
    ]
    with engine.connect() as conn:
        columns = conn.exec_driver_sql("SELECT name FROM pragma_index_info('rs_change_order')").scalars().all()
    assert columns == ["resource_set", "listed", "timestamp", "change_id"]
    SqlResourceIndex(engine)  # nothing more to do


def test_a_set_removed_from_the_registry_is_no_longer_served(tmp_storage, http_server, tmp_path):
    from ingest_assets.resourcesync.server import RegistrySets

    registry = tmp_path / "registry.yaml"
    registry.write_text("recs: {resourcesync: {}}\nother: {resourcesync: {}}\n")
    tmp_storage.write_bytes("_resourcesync/recs/capabilitylist.xml", b"<urlset/>")
    tmp_storage.write_bytes("_resourcesync/recs/resources/items/a1.jsonld", b'{"id":"a1"}')
    base = http_server(app=ResourceSyncApp(tmp_storage, RegistrySets(registry, "http://127.0.0.1")))
    for path in ("/recs/capabilitylist.xml", "/recs/resources/items/a1.jsonld"):
        with urlopen(base + path, timeout=5) as response:
            assert response.status == 200
    registry.write_text("other: {resourcesync: {}}\n")  # the operator removes the set; the server keeps running
    for path in ("/recs/capabilitylist.xml", "/recs/resources/items/a1.jsonld"):
        with pytest.raises(HTTPError) as err:
            urlopen(base + path, timeout=5)
        assert err.value.code == 404, path


def test_an_idle_connection_is_closed_by_the_server(tmp_storage):
    """A client that connects and sends nothing (half-open) no longer holds a server thread forever."""
    import socket
    import time

    from ingest_assets.core.wsgi import WsgiServer

    with WsgiServer(idle_seconds=0.5).start(ResourceSyncApp(tmp_storage, [])) as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as idle:
            started = time.monotonic()
            assert idle.recv(1) == b""  # the server closed it
            assert time.monotonic() - started < 5
