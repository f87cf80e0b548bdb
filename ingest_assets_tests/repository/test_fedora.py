"""Fedora 6 backend at the HTTP boundary (a fake that logs raw requests) and live when FEDORA_URL is set."""

import os
import threading
import uuid

import pytest
import requests

from ingest_assets.core.http import HttpClient
from ingest_assets.repository.fedora import FedoraRepository
from ingest_assets.repository.model import RepositoryObject
from ingest_assets.repository.backend import Conflict, ObjectGone, ObjectNotFound, PreconditionFailed

TX_HEADER = "Atomic-ID"


def key(pid: str, title: str = "Thalictrum in Mitteleuropa") -> RepositoryObject:
    return RepositoryObject(pid, "member", dc={"title": [title], "type": ["Identification Tool"]},
                            k2n={"Best_Quality_URI": ["http://www.keytonature.eu/wiki/Thalictrum_in_Mitteleuropa"]},
                            collection="K2N:www.keytonature.eu_wiki_thalictrum_in_mitteleuropa",
                            harvesting_url="http://www.keytonature.eu/wiki/Thalictrum_in_Mitteleuropa")


@pytest.fixture(params=["fake", "live"])
def fedora(request):
    """``(repository, fake or None)``: every behaviour test also runs against FEDORA_URL when set."""
    if request.param == "live":
        url = os.environ.get("FEDORA_URL")
        if not url:
            pytest.skip("FEDORA_URL not set")
        http = HttpClient(allow_private=True)
        if os.environ.get("FEDORA_USER"):
            http.session.auth = (os.environ["FEDORA_USER"], os.environ.get("FEDORA_PASSWORD", ""))
        return FedoraRepository(url, http), None
    fake, base = request.getfixturevalue("fake_fedora")
    return FedoraRepository(base, HttpClient(allow_private=True, retries=0)), fake


def fresh_pid() -> str:
    return f"K2N:id_{uuid.uuid4().hex}"


def test_create_exact_requests(fake_fedora):
    fake, base = fake_fedora
    repo = FedoraRepository(base, HttpClient(allow_private=True, retries=0))
    obj = key("K2N:id_0123456789abcdef0123456789abcdef")
    with repo.transaction() as tx:
        tx.put(obj)
    tx_url = f"{fake.base}/rest/fcr:tx/1"
    path = "/rest/K2N%3Aid_0123456789abcdef0123456789abcdef"
    assert [(m, p) for m, p, _ in fake.requests] == [
        ("POST", "/rest/fcr:tx"), ("HEAD", path), ("PUT", path), ("PUT", path + "/best_quality"),
        ("PUT", "/rest/fcr:tx/1")]
    assert all(h.get(TX_HEADER) == tx_url for _, _, h in fake.requests[1:4])
    create = fake.requests[2][2]
    assert create["Content-Type"] == "text/turtle"
    assert create["Link"] == '<http://www.w3.org/ns/ldp#BasicContainer>; rel="type"'
    assert create["Prefer"] == 'handling=lenient; received="minimal"'
    assert "If-Match" not in create
    assert fake.requests[3][2]["Link"] == ('<http://www.keytonature.eu/wiki/Thalictrum_in_Mitteleuropa>; '
                                          'rel="http://fedora.info/definitions/fcrepo#ExternalContent"; '
                                          'handling="redirect"; type="text/html"')
    assert TX_HEADER not in fake.requests[4][2]
    stored = fake.resources["/rest/K2N:id_0123456789abcdef0123456789abcdef"]["body"]
    assert f"<{fake.base}{path}>".encode() in stored and b"Thalictrum in Mitteleuropa" in stored


def test_update_sends_if_match_and_a_412_rolls_back(fake_fedora):
    fake, base = fake_fedora
    repo = FedoraRepository(base, HttpClient(allow_private=True, retries=0))
    obj = key("K2N:id_" + "a" * 32)
    with repo.transaction() as tx:
        tx.put(obj)
    path = "/rest/K2N%3Aid_" + "a" * 32
    etag = fake.resources[f"/rest/K2N:id_{'a' * 32}"]["etag"]
    fake.requests.clear()
    fake.inject[("PUT", path)] = 412  # someone changed it between our HEAD and PUT
    with pytest.raises(PreconditionFailed, match="412"):
        with repo.transaction() as tx:
            tx.put(key(obj.pid, "changed"))
    assert [(m, p) for m, p, _ in fake.requests] == [
        ("POST", "/rest/fcr:tx"), ("HEAD", path), ("PUT", path), ("DELETE", "/rest/fcr:tx/2")]
    assert fake.requests[2][2]["If-Match"] == etag and "Link" not in fake.requests[2][2]
    assert repo.get(obj.pid).dc["title"] == ["Thalictrum in Mitteleuropa"]


def test_delete_purges_the_tombstone_and_put_over_a_tombstone(fake_fedora):
    fake, base = fake_fedora
    repo = FedoraRepository(base, HttpClient(allow_private=True, retries=0))
    obj = key("K2N:id_" + "b" * 32)
    path = "/rest/K2N%3Aid_" + "b" * 32
    with repo.transaction() as tx:
        tx.put(obj)
    requests.delete(f"{fake.base}{path}", timeout=5)  # someone deletes it outside our transactions
    gone = requests.get(f"{fake.base}{path}", timeout=5)
    assert gone.status_code == 410 and 'rel="hasTombstone"' in gone.headers["Link"]
    with pytest.raises(ObjectGone):
        repo.get(obj.pid)
    fake.requests.clear()
    with repo.transaction() as tx:
        tx.put(obj)
    assert [(m, p) for m, p, _ in fake.requests] == [
        ("POST", "/rest/fcr:tx"), ("HEAD", path), ("DELETE", path + "/fcr:tombstone"), ("PUT", path),
        ("PUT", path + "/best_quality"), ("PUT", "/rest/fcr:tx/2")]
    fake.requests.clear()
    with repo.transaction() as tx:
        tx.delete(obj.pid)
        tx.delete("K2N:id_" + "c" * 32)  # never existed: nothing to do
    assert [(m, p) for m, p, _ in fake.requests] == [
        ("POST", "/rest/fcr:tx"), ("DELETE", path), ("DELETE", path + "/fcr:tombstone"),
        ("DELETE", "/rest/K2N%3Aid_" + "c" * 32), ("PUT", "/rest/fcr:tx/3")]
    with pytest.raises(ObjectNotFound):
        repo.get(obj.pid)


def test_roundtrip_rollback_and_concurrent_conflict(fedora):
    repo, fake = fedora
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
    if fake is not None:
        assert "being modified in another transaction" in str(conflict.value)  # Fedora's own words kept
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
