"""watchdog / last_success and the object index, on SQLite and on a real PostgreSQL server."""

import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy import text

from ingest_assets.repository.bookkeeping import Bookkeeping, LeaseLost
from ingest_assets.repository.index import ObjectIndex, guid_key
from ingest_assets.repository.model import RepositoryObject
from ingest_assets.core.sql import make_engine

SOURCE = "http://www.keytonature.eu/TemplateParameterIndex"


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, tmp_path):
    if request.param == "sqlite":
        engine = make_engine(f"sqlite:///{tmp_path / 'ingest.sqlite3'}")
    else:
        engine = make_engine(request.getfixturevalue("pg_url"))
        with engine.begin() as conn:
            for table in ("repository_objects", "repository_watchdog", "repository_last_success",
                          "repository_source_checks"):
                conn.execute(text(f"DROP TABLE IF EXISTS {table}"))
    yield engine
    engine.dispose()


def test_second_ingest_refused_while_fresh_and_stale_one_taken_over(engine):
    books = Bookkeeping(engine, max_duration=timedelta(seconds=0.4))
    first = books.claim(SOURCE)
    assert first is not None and books.is_running(SOURCE)
    assert books.claim(SOURCE) is None  # fresh watchdog: the second ingest terminates
    assert books.claim("http://other.example.org/tpi") is not None  # other sources are independent
    time.sleep(0.5)
    assert not books.is_running(SOURCE)
    second = books.claim(SOURCE)  # stale: a crash is assumed, the entry is taken over
    assert second is not None and second.token != first.token
    with pytest.raises(LeaseLost):
        books.heartbeat(first)  # the crashed-but-alive first process can no longer write
    with pytest.raises(LeaseLost):
        books.collection_done(first, "http://w/C", datetime.now(timezone.utc))
    with pytest.raises(LeaseLost):
        books.finish(first, datetime.now(timezone.utc))
    assert books.last_success(SOURCE) is None and books.last_success(SOURCE, "http://w/C") is None
    books.heartbeat(second)


def test_concurrent_claims_have_exactly_one_winner(engine):
    books = Bookkeeping(engine)
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda _: books.claim(SOURCE), range(8)))
    assert sum(r is not None for r in results) == 1


def test_last_success_general_and_per_collection(engine):
    books = Bookkeeping(engine)
    lease = books.claim(SOURCE)
    queried_until = datetime(2026, 11, 22, 2, 0, tzinfo=timezone.utc)
    books.collection_done(lease, "http://w/A", datetime(2026, 11, 22, 2, 1, tzinfo=timezone.utc))
    books.collection_done(lease, "http://w/A", datetime(2026, 11, 22, 2, 3, tzinfo=timezone.utc))
    assert books.last_success(SOURCE) is None  # nothing general before the end
    books.finish(lease, queried_until)
    assert books.watchdog_entry(SOURCE) is None
    assert books.last_success(SOURCE) == queried_until  # the time up to which updates were queried
    assert books.last_success(SOURCE, "http://w/A") == datetime(2026, 11, 22, 2, 3, tzinfo=timezone.utc)
    lease = books.claim(SOURCE)
    books.finish(lease, None)  # a run with failed units keeps the old general time
    assert books.last_success(SOURCE) == queried_until


def collection(pid, uri, provider=None, resource_id=None):
    obj = RepositoryObject(pid, "collection", provider=provider, harvesting_url=uri)
    if resource_id:
        obj.k2n["Resource_ID"] = [resource_id]
    return obj


def test_four_step_lookup(engine):
    index = ObjectIndex(engine)
    a = collection("K2N:w_a", "http://w/A", "K2N:prov", "17")
    b = collection("K2N:w_b", "http://w/B", "K2N:prov2", " 3F2504E0-4F89-11D3-9A0C-0305E82C3301 ")
    c = collection("K2N:w_c", "http://w/C", "K2N:prov3", "urn:lsid:example.org:coll:9")
    index.confirm([a, b, c], {"K2N:w_a": "http://w/A", "K2N:w_b": "http://w/B", "K2N:w_c": "http://w/C"})
    # 1. collection URI (Resource ID not compared)
    assert index.find_collection("http://w/A", "K2N:other", "999") == "K2N:w_a"
    # 2. provider + Resource ID
    assert index.find_collection("http://w/moved", "K2N:prov", "17") == "K2N:w_a"
    assert index.find_collection("http://w/moved", "K2N:prov2", "17") is None  # "17" is not globally unique
    # 3. GUID-like Resource ID, whitespace and hyphens ignored; URIs/URNs
    assert index.find_collection("http://w/x", "K2N:new", "3f2504e04f8911d39a0c0305e82c3301") == "K2N:w_b"
    assert index.find_collection("http://w/x", None, "urn:lsid:example.org:coll:9") == "K2N:w_c"
    # 4. nothing: a new collection
    assert index.find_collection("http://w/x", "K2N:new", "18") is None
    assert guid_key("12345") is None and guid_key("http://x.org/1") == "http://x.org/1"


def test_members_are_indexed_before_they_are_written(engine):
    index = ObjectIndex(engine)
    coll = collection("K2N:w_a", "http://w/A")
    members = [RepositoryObject(f"K2N:im_{i}", "member", collection="K2N:w_a") for i in range(3)]
    index.plan(members, {})
    assert index.members("K2N:w_a") == ["K2N:im_0", "K2N:im_1", "K2N:im_2"]
    assert index.get("K2N:im_0")["state"] == "pending"
    index.confirm([coll, *members[:2]], {"K2N:w_a": "http://w/A"}, removed=["K2N:im_2"])
    assert index.members("K2N:w_a") == ["K2N:im_0", "K2N:im_1"] and index.get("K2N:im_0")["state"] == "live"
    assert index.collections() == [("K2N:w_a", "http://w/A")]
