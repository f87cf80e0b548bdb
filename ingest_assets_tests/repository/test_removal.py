"""The verification service removes a collection only after repeated 404/410 over the grace period."""

from datetime import datetime, timedelta, timezone

from ingest_assets.core.http import HttpClient
from ingest_assets.repository.index import ObjectIndex
from ingest_assets.repository.ingest import publish_changes
from ingest_assets.repository.model import RepositoryObject, feed_path
from ingest_assets.repository.ocfl import OcflRepository
from ingest_assets.repository.removal import GarbageCollector
from ingest_assets.resourcesync.config import capability_set
from ingest_assets.resourcesync.feed import ChangeFeed
from ingest_assets.resourcesync.sql_index import SqlResourceIndex
from ingest_assets.core.sql import make_engine
from ingest_assets.storage import LocalStorage


def test_removal_only_on_repeated_404_or_410(tmp_path, http_server):
    status = {"/wiki/Gone": "404 Not Found", "/wiki/Deleted": "410 Gone", "/wiki/Flaky": "503 Service Unavailable",
              "/wiki/Here": "200 OK"}

    def app(environ, start_response):
        start_response(status[environ["PATH_INFO"]], [("Content-Type", "text/html")])
        return [b""]

    base = http_server(app=app)
    engine = make_engine(f"sqlite:///{tmp_path / 'ingest.sqlite3'}")
    index, repo = ObjectIndex(engine), OcflRepository(tmp_path / "ocfl")
    objects = []
    for name in ("Gone", "Deleted", "Flaky", "Here"):
        coll = RepositoryObject(f"K2N:w_{name.lower()}", "collection", harvesting_url=f"{base}/wiki/{name}",
                                k2n={"Best_Quality_URI": [f"{base}/wiki/{name}"]})
        member = RepositoryObject(f"K2N:sd_{name.lower()}", "member", collection=coll.pid)
        objects += [coll, member]
    with repo.transaction() as tx:
        for obj in objects:
            tx.put(obj)
    index.confirm(objects, {o.pid: o.harvesting_url for o in objects if o.kind == "collection"})
    day0 = datetime(2026, 11, 1, tzinfo=timezone.utc)
    feed = ChangeFeed(SqlResourceIndex(engine), LocalStorage(tmp_path / "storage"), capability_set("repository"))
    publish_changes(feed, objects, [], day0)
    collector = GarbageCollector(index, repo, HttpClient(allow_private=True, retries=0), min_misses=3,
                                 grace=timedelta(days=7), feed=feed)
    first = collector.run(day0)
    assert first.checked == 4 and sorted(first.missing) == ["K2N:w_deleted", "K2N:w_gone"]
    assert list(first.unreachable) == ["K2N:w_flaky"] and first.removed == []
    # three misses, but within the grace period: nothing removed yet
    assert collector.run(day0 + timedelta(days=1)).removed == []
    assert collector.run(day0 + timedelta(days=2)).removed == []
    status["/wiki/Deleted"] = "200 OK"  # the page came back: its count starts again
    assert collector.run(day0 + timedelta(days=8)).removed == ["K2N:w_gone"]
    assert not repo.exists("K2N:w_gone") and not repo.exists("K2N:sd_gone")
    assert index.get("K2N:w_gone") is None and index.get("K2N:sd_gone") is None
    assert feed.report.counts == {"created": 8, "updated": 0, "deleted": 2, "unchanged": 0}  # published as gone
    assert sorted(feed.paths()) == sorted(feed_path(o.pid) for o in objects if not o.pid.endswith("_gone"))
    gone = feed.index.changes("repository-objects", "2026-11-09", "2026-11-10")
    assert sorted(c["location"]["value"] for c in gone if c["change"] == "deleted") == [
        feed_path("K2N:sd_gone"), feed_path("K2N:w_gone")]  # at the check that removed them
    status["/wiki/Deleted"] = "410 Gone"
    assert collector.run(day0 + timedelta(days=20)).removed == []  # one miss since it came back
    # server errors never remove anything, however long they last
    for name in ("K2N:w_flaky", "K2N:sd_flaky", "K2N:w_here", "K2N:sd_here", "K2N:w_deleted"):
        assert repo.exists(name)
    engine.dispose()


def test_items_whose_own_page_is_gone_are_removed_too(tmp_path, http_server):
    """Members mapped from pages of their own (a wiki's image pages) are checked at those pages, each page once a
    run however many items it holds, with the collection's grace and its refusal to act on 5xx."""
    status = {"/wiki/Pollen_collection": "200 OK", "/wiki/Pollen_1": "404 Not Found", "/wiki/Pollen_2": "200 OK",
              "/wiki/Pollen_3": "503 Service Unavailable"}
    heads = []

    def app(environ, start_response):
        heads.append(environ["PATH_INFO"])
        start_response(status[environ["PATH_INFO"]], [("Content-Type", "text/html")])
        return [b""]

    base = http_server(app=app)
    engine = make_engine(f"sqlite:///{tmp_path / 'ingest.sqlite3'}")
    index, repo = ObjectIndex(engine), OcflRepository(tmp_path / "ocfl")
    collection = RepositoryObject("K2N:w_pollen_collection", "collection", harvesting_url=f"{base}/wiki/Pollen_collection")
    items = [RepositoryObject(f"K2N:im_{n}{'a' * 31}", "member", collection=collection.pid,
                              harvesting_url=f"{base}/wiki/Pollen_{page}") for n, page in enumerate((1, 1, 2, 3))]
    with repo.transaction() as tx:
        for obj in (collection, *items):
            tx.put(obj)
    index.confirm([collection, *items], {collection.pid: collection.harvesting_url})
    collector = GarbageCollector(index, repo, HttpClient(allow_private=True, retries=0), min_misses=2,
                                 grace=timedelta(days=7))
    day0 = datetime(2026, 11, 1, tzinfo=timezone.utc)
    first = collector.run(day0)
    assert first.checked == 5 and sorted(heads) == sorted(status)  # Pollen_1 asked once for its two items
    assert first.missing == [items[0].pid, items[1].pid] and first.removed == []
    assert list(first.unreachable) == [items[3].pid]
    assert collector.run(day0 + timedelta(days=3)).removed == []  # two misses, within the grace period
    assert collector.run(day0 + timedelta(days=8)).removed == [items[0].pid, items[1].pid]
    assert not repo.exists(items[0].pid) and index.get(items[1].pid) is None
    for kept in (collection, items[2], items[3]):  # its collection, a page still there, a page answering 503
        assert repo.exists(kept.pid) and index.get(kept.pid)
    engine.dispose()
