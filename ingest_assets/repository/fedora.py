"""Fedora 6 REST backend: LDP containers with DC/K2N/RELS-EXT triples, ``fcr:tx``.

* object ``<pid>`` lives at ``<base>/<pid, %-escaped>`` as an RDF source (Turtle); ``<base>`` may be the REST root
  or any container below it; relations name ``info:fedora/<pid>``, which Fedora serves back as ``<root>/<pid>``;
* its Best_Quality_URI is one of its triples (``k2n:Best_Quality_URI``), not external content: Fedora fetches
  external content when it is attached and refuses any URL its ``fcrepo.external.content.allowed`` list does not
  name, so a provider's links would make the repository server call out to provider hosts;
* updates of existing objects send ``If-Match`` with the ETag just read (412 -> :class:`PreconditionFailed`), in
  its strong form: Fedora gives RDF sources weak ETags (``W/"..."``), and ``If-Match`` compares strongly (RFC
  9110), so the weak form never matches;
* ``delete`` sends DELETE and purges the tombstone (``<obj>/fcr:tombstone``) so the PID can be re-used;
  a PUT over a tombstone (410) purges it first;
* a transaction is a POST to the endpoint the REST root advertises (``Link: <...>;
  rel="http://fedora.info/definitions/v4/transaction#endpoint"``: ``<root>/fcr:tx``, which exists only at the root),
  found once by walking up from ``<base>``; 201 + Location; every request then carries ``Atomic-ID``;
  commit = ``PUT <tx>``, rollback = ``DELETE <tx>``, keep-alive = ``POST <tx>``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import quote, urlsplit, urlunsplit

import requests.utils

from ingest_assets.core.errors import FetchError
from ingest_assets.core.http import HttpClient
from ingest_assets.repository.model import RepositoryObject
from ingest_assets.repository.backend import (
    Conflict,
    ObjectGone,
    ObjectNotFound,
    PreconditionFailed,
    Repository,
    RepositoryError,
    Transaction,
)

TRANSACTION_ENDPOINT = "http://fedora.info/definitions/v4/transaction#endpoint"
BASIC_CONTAINER = '<http://www.w3.org/ns/ldp#BasicContainer>; rel="type"'
LENIENT = 'handling=lenient; received="minimal"'
MAX_BODY = 16 * 1024 * 1024


def strong(etag: str) -> str:
    """``W/"x"`` -> ``"x"``: the ETag for ``If-Match``."""
    return etag[2:] if etag.startswith("W/") else etag


class FedoraTransaction(Transaction):
    def __init__(self, repository: "FedoraRepository", tx_url: str):
        self.repository = repository
        self.tx_url = tx_url

    def _call(self, method: str, url: str, headers: dict | None = None, data: bytes | None = None):
        return self.repository.call(method, url, {**(headers or {}), "Atomic-ID": self.tx_url}, data)

    def put(self, obj: RepositoryObject) -> None:
        url = self.repository.object_url(obj.pid)
        headers = {"Content-Type": "text/turtle", "Prefer": LENIENT}
        try:
            _, found, _ = self._call("HEAD", url)
            headers["If-Match"] = strong(found.get("ETag", "*"))
        except ObjectNotFound:
            headers["Link"] = BASIC_CONTAINER
        except ObjectGone:
            self._call("DELETE", f"{url}/fcr:tombstone")
            headers["Link"] = BASIC_CONTAINER
        self._call("PUT", url, headers, obj.to_turtle(subject=url))

    def delete(self, pid: str) -> None:
        url = self.repository.object_url(pid)
        try:
            self._call("DELETE", url)
        except ObjectNotFound:
            return
        except ObjectGone:
            pass  # deleted earlier, tombstone left behind
        self._call("DELETE", f"{url}/fcr:tombstone")

    def keep_alive(self) -> None:
        self.repository.call("POST", self.tx_url)


class FedoraRepository(Repository):
    def __init__(self, base_url: str, http: HttpClient):
        self.base_url = base_url.rstrip("/")
        self.http = http
        self._tx_endpoint: str | None = None

    def _create_base(self) -> None:
        try:
            self.call("PUT", self.base_url, {"Link": BASIC_CONTAINER})
        except Conflict:
            pass  # created meanwhile by another process

    def transaction_endpoint(self) -> str:
        """The ``fcr:tx`` endpoint the REST root advertises, looked for from ``base_url`` upwards (once); a base
        container that does not exist yet is created on the way."""
        if self._tx_endpoint is None:
            parts = urlsplit(self.base_url)
            segments = parts.path.rstrip("/").split("/")
            missing_base = False
            while True:
                url = urlunsplit((parts.scheme, parts.netloc, "/".join(segments) or "/", "", ""))
                try:
                    _, headers, _ = self.call("HEAD", url)
                except ObjectNotFound:
                    headers = {}
                    missing_base = missing_base or url == self.base_url
                endpoint = _link(headers.get("Link", ""), TRANSACTION_ENDPOINT)
                if endpoint:
                    self._tx_endpoint = endpoint.rstrip("/")
                    break
                if len(segments) <= 1:
                    raise RepositoryError(f"no Fedora REST root at or above {self.base_url} advertises a "
                                          "transaction endpoint", file=self.base_url)
                segments.pop()
            if missing_base:  # made now, so that the base container lists its objects
                self._create_base()
        return self._tx_endpoint

    def object_url(self, pid: str) -> str:
        return f"{self.base_url}/{quote(pid, safe='')}"

    def call(self, method: str, url: str, headers: dict | None = None, data: bytes | None = None):
        """One request -> ``(status, headers, body)``; 404/409/410/412 become repository errors."""
        try:
            with self.http.open(url, method=method, headers=headers, data=data, max_bytes=MAX_BODY) as body:
                return body.status, dict(body.headers), body.read() if method != "HEAD" else b""
        except FetchError as exc:
            errors = {404: ObjectNotFound, 409: Conflict, 410: ObjectGone, 412: PreconditionFailed}
            kind = errors.get(exc.status, RepositoryError)
            detail = (exc.body or b"").decode("utf-8", "replace").strip()[:300]
            message = f"Fedora {method} answered {exc.message}" + (f": {detail}" if detail else "")
            raise kind(message, file=url, retryable=exc.retryable) from exc

    @contextmanager
    def transaction(self) -> Iterator[FedoraTransaction]:
        _, headers, _ = self.call("POST", self.transaction_endpoint())
        tx_url = headers.get("Location")
        if not tx_url:
            raise RepositoryError("Fedora created a transaction without a Location", file=self.base_url)
        tx = FedoraTransaction(self, tx_url)
        try:
            yield tx
        except BaseException:
            try:
                self.call("DELETE", tx_url)
            except RepositoryError:
                pass  # an expired or unknown transaction is rolled back already
            raise
        try:
            self.call("PUT", tx_url)
        except ObjectGone as exc:
            raise RepositoryError("Fedora transaction expired before commit", file=tx_url,
                                  retryable=True) from exc

    def get(self, pid: str) -> RepositoryObject:
        _, _, body = self.call("GET", self.object_url(pid), {"Accept": "text/turtle"})
        root = self.transaction_endpoint().removesuffix("/fcr:tx")
        return RepositoryObject.from_turtle(body, pid, pid_prefixes=(f"{root}/",))

    def exists(self, pid: str) -> bool:
        try:
            self.call("HEAD", self.object_url(pid))
        except (ObjectNotFound, ObjectGone):
            return False
        return True


def _link(header: str, rel: str) -> str | None:
    """The target of the ``Link`` header entry with relation ``rel``."""
    for entry in requests.utils.parse_header_links(header) if header else ():
        if rel in entry.get("rel", "").split():
            return entry.get("url")
    return None
