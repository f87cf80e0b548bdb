"""Fedora 6 backend against a live Fedora 6.1, its requests recorded by the proxy in front of it.

Each test's objects live in a container below the REST root that nobody created (``fedora.base``): the
transaction endpoint exists only at the root, and the backend finds it there.
"""

import threading
import uuid
from urllib.parse import urlsplit

import pytest

from ingest_assets.core.http import HttpClient
from ingest_assets.repository.backend import Conflict, ObjectGone, ObjectNotFound, PreconditionFailed, RepositoryError
from ingest_assets.repository.fedora import FedoraRepository
from ingest_assets.repository.model import RepositoryObject

TX_HEADER = "Atomic-ID"
TURTLE = "text/turtle"


def key(pid: str, title: str = "Thalictrum in Mitteleuropa") -> RepositoryObject:
    return RepositoryObject(pid, "member", dc={"title": [title], "type": ["Identification Tool"]},
                            k2n={"Best_Quality_URI": ["http://www.keytonature.eu/wiki/Thalictrum_in_Mitteleuropa"]},
                            collection="K2N:www.keytonature.eu_wiki_thalictrum_in_mitteleuropa",
                            harvesting_url="http://www.keytonature.eu/wiki/Thalictrum_in_Mitteleuropa")


def fresh_pid() -> str:
    return f"K2N:id_{uuid.uuid4().hex}"


def path_of(fedora, pid: str) -> str:
    return fedora.repo.object_url(pid).removeprefix(fedora.proxy.url)


def sent(fedora) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in fedora.proxy.requests]


def tx_path(exchange) -> str:
    """The transaction a ``POST .../fcr:tx`` opened (Fedora's Location, through the proxy)."""
    return urlsplit(exchange.reply["Location"]).path


def test_create_exact_requests_at_a_base_below_the_root(fedora):
    obj = key("K2N:id_0123456789abcdef0123456789abcdef")
    with fedora.repo.transaction() as tx:
        tx.put(obj)
    path = path_of(fedora, obj.pid)
    assert path.endswith("/K2N%3Aid_0123456789abcdef0123456789abcdef")
    base_path = path.rsplit("/", 1)[0]
    opened = fedora.proxy.calls("POST")[0]
    transaction = tx_path(opened)
    assert sent(fedora) == [
        ("HEAD", base_path), ("HEAD", fedora.root),  # the root advertises the transaction endpoint
        ("PUT", base_path),  # the base container, created where it was missing
        ("POST", f"{fedora.root}/fcr:tx"), ("HEAD", path), ("PUT", path), ("PUT", transaction)]
    assert opened.status == 201 and transaction.startswith(f"{fedora.root}/fcr:tx/")
    requests = fedora.proxy.requests
    assert requests[2].status == 201 and TX_HEADER not in requests[2].headers
    assert all(r.headers.get(TX_HEADER) == opened.reply["Location"] for r in requests[4:6])
    create = requests[5].headers
    assert create["Content-Type"] == TURTLE and requests[5].status == 201
    assert create["Link"] == '<http://www.w3.org/ns/ldp#BasicContainer>; rel="type"'
    assert create["Prefer"] == 'handling=lenient; received="minimal"'
    assert "If-Match" not in create
    assert TX_HEADER not in requests[6].headers and requests[6].status == 204
    listing = fedora.direct.get(fedora.server + base_path, headers={"Accept": "application/n-triples"}, timeout=10)
    assert f"<http://www.w3.org/ns/ldp#contains> <{fedora.server}{path.replace('%3A', ':')}>" in listing.text
    stored = fedora.direct.get(fedora.server + path, headers={"Accept": TURTLE}, timeout=10)
    assert stored.status_code == 200 and "Thalictrum in Mitteleuropa" in stored.text
    # the Best_Quality_URI is a triple of the object, not external content Fedora would have to fetch
    assert '"http://www.keytonature.eu/wiki/Thalictrum_in_Mitteleuropa"' in stored.text
    back = fedora.repo.get(obj.pid)
    assert back.k2n["Best_Quality_URI"] == obj.k2n["Best_Quality_URI"] and back.dc["title"] == obj.dc["title"]


def test_update_sends_the_strong_etag_and_a_change_in_between_rolls_back(fedora):
    repo = fedora.repo
    obj = key(fresh_pid())
    with repo.transaction() as tx:
        tx.put(obj)
    path = path_of(fedora, obj.pid)
    fedora.proxy.requests.clear()
    with repo.transaction() as tx:  # an unchanged object updated: Fedora's weak ETag, sent in its strong form
        tx.put(key(obj.pid, "changed once"))
    head, put = fedora.proxy.calls("HEAD", path)[0], fedora.proxy.calls("PUT", path)[0]
    assert head.reply["ETag"].startswith('W/"') and put.headers["If-Match"] == head.reply["ETag"][2:]
    assert put.status == 204 and repo.get(obj.pid).dc["title"] == ["changed once"]

    # someone else changes the object between our HEAD and our PUT: Fedora answers 412, we roll back
    def other_client():
        other = fedora.direct.put(fedora.server + path, data=key(obj.pid, "theirs").to_turtle(subject=fedora.server + path),
                                  headers={"Content-Type": TURTLE, "Prefer": 'handling=lenient; received="minimal"'},
                                  timeout=10)
        assert other.status_code == 204

    fedora.proxy.requests.clear()
    fedora.proxy.before("PUT", path, other_client)
    with pytest.raises(PreconditionFailed, match="412"):
        with repo.transaction() as tx:
            tx.put(key(obj.pid, "ours"))
    methods = sent(fedora)
    assert methods[-3:-1] == [("HEAD", path), ("PUT", path)] and methods[-1][0] == "DELETE"  # the rollback
    assert fedora.proxy.calls("PUT", path)[0].status == 412
    assert repo.get(obj.pid).dc["title"] == ["theirs"]


def test_delete_purges_the_tombstone_and_put_over_a_tombstone(fedora):
    repo = fedora.repo
    obj = key(fresh_pid())
    path = path_of(fedora, obj.pid)
    with repo.transaction() as tx:
        tx.put(obj)
    assert fedora.direct.delete(fedora.server + path, timeout=10).status_code == 204  # deleted outside our transactions
    gone = fedora.direct.get(fedora.server + path, timeout=10)
    assert gone.status_code == 410 and 'rel="hasTombstone"' in gone.headers["Link"]
    with pytest.raises(ObjectGone):
        repo.get(obj.pid)
    fedora.proxy.requests.clear()
    with repo.transaction() as tx:
        tx.put(obj)
    methods = sent(fedora)
    assert methods[1:4] == [("HEAD", path), ("DELETE", path + "/fcr:tombstone"), ("PUT", path)]
    assert [r.status for r in fedora.proxy.requests[1:4]] == [410, 204, 201]
    fedora.proxy.requests.clear()
    never = "K2N:id_" + uuid.uuid4().hex
    with repo.transaction() as tx:
        tx.delete(obj.pid)
        tx.delete(never)  # never existed: nothing to do
    methods = sent(fedora)
    assert methods[1:4] == [("DELETE", path), ("DELETE", path + "/fcr:tombstone"), ("DELETE", path_of(fedora, never))]
    assert [r.status for r in fedora.proxy.requests[1:4]] == [204, 204, 404]
    with pytest.raises(ObjectNotFound):
        repo.get(obj.pid)


def test_roundtrip_rollback_and_concurrent_conflict(fedora):
    repo = fedora.repo
    obj = key(fresh_pid())
    with repo.transaction() as tx:
        tx.put(obj)
    back = repo.get(obj.pid)
    assert back.dc["title"] == ["Thalictrum in Mitteleuropa"] and back.collection == obj.collection
    assert back.harvesting_url == obj.harvesting_url
    # rollback: nothing of a failed transaction is visible
    other = key(fresh_pid())
    with pytest.raises(RuntimeError):
        with repo.transaction() as tx:
            tx.put(other)
            tx.delete(obj.pid)
            raise RuntimeError("crash before commit")
    assert not repo.exists(other.pid) and repo.exists(obj.pid)
    # a second transaction touching the same object is refused with 409 while the first is open
    entered, done = threading.Event(), threading.Event()

    def first():
        with repo.transaction() as tx:
            tx.put(key(obj.pid, "first"))
            entered.set()
            done.wait(10)

    thread = threading.Thread(target=first)
    thread.start()
    assert entered.wait(10)
    try:
        with pytest.raises(Conflict, match="409") as conflict:
            with repo.transaction() as tx:
                tx.put(key(obj.pid, "second"))
    finally:
        done.set()
        thread.join()
    assert "because it is being updated by another transaction" in str(conflict.value)  # Fedora's own words kept
    assert repo.get(obj.pid).dc["title"] == ["first"]
    # deleted outside a transaction: 410 + tombstone; a put purges the tombstone and re-creates the object
    repo.call("DELETE", repo.object_url(obj.pid))
    with pytest.raises(ObjectGone):
        repo.get(obj.pid)
    with repo.transaction() as tx:
        tx.put(key(obj.pid, "again"))
    assert repo.get(obj.pid).dc["title"] == ["again"]
    with repo.transaction() as tx:
        tx.delete(obj.pid)
    assert not repo.exists(obj.pid)
    with pytest.raises(ObjectNotFound):  # the tombstone was purged too
        repo.get(obj.pid)


def test_a_root_base_and_an_unreachable_transaction_endpoint(fedora):
    """At the REST root itself one HEAD finds the endpoint; a URL below no Fedora root is a clear error."""
    http = HttpClient(allow_private=True, retries=0)
    http.session.auth = fedora.direct.auth
    at_root = FedoraRepository(fedora.proxy.url + fedora.root, http)
    obj = key(fresh_pid())
    fedora.proxy.requests.clear()
    with at_root.transaction() as tx:
        tx.put(obj)
    assert sent(fedora)[:2] == [("HEAD", fedora.root), ("POST", f"{fedora.root}/fcr:tx")]
    assert at_root.get(obj.pid).dc["title"] == obj.dc["title"]
    nowhere = FedoraRepository(fedora.proxy.url + "/not-fedora/rest", http)
    with pytest.raises(RepositoryError, match="advertises a transaction endpoint"):
        with nowhere.transaction():
            pass
