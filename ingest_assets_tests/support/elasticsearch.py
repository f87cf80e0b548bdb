"""The recording proxy in front of a live search server (OpenSearch or Elasticsearch) that the search index and
ResourceSync tests assert their requests on, with the faults a real server cannot be made to produce on cue: a
whole request answered with an error (a 429 rejection under indexing pressure, a 5xx, a 400 of a search) and
single bulk items rejected while the others of the same request are indexed.

``index_body`` rewrites an index-creation body on its way upstream (the recorded request stays as the client sent
it): Elasticsearch's test distribution needs the ``asciifolding`` filter swapped out. Indices created through the
proxy are deleted on :meth:`SearchProxy.close`.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterable

from ingest_assets_tests.support.servers.proxy import Exchange, RecordingProxy


def es_error(status: int, error_type: str, reason: str, **extra) -> tuple[int, dict]:
    """An error answer as the servers shape it (``root_cause`` plus the cause itself)."""
    cause = {"type": error_type, "reason": reason, **extra}
    return status, {"error": {"root_cause": [cause], **cause}, "status": status}


REJECTED = "rejected execution of coordinating operation [coordinating_and_primary_bytes=53687000, replica_bytes=0, " \
           "all_bytes=53687000, coordinating_operation_bytes=2048, max_coordinating_and_primary_bytes=53687091]"
REJECTED_ITEM = {"type": "es_rejected_execution_exception", "reason": (
    "rejected execution of primary operation [coordinating_and_primary_bytes=0, replica_bytes=0, all_bytes=0, "
    "primary_operation_bytes=1024, max_coordinating_and_primary_bytes=53687091]")}
REJECTED_REQUEST = es_error(429, "es_rejected_execution_exception", REJECTED)[1]
INDEX_PATH = re.compile(r"/[^/_][^/?]*")  # /<index>: where an index is created (PUT) or deleted


class SearchProxy(RecordingProxy):
    """``url`` to connect to; ``requests`` and :meth:`calls` (``Exchange``: method, path, params, body,
    ``json()``) to assert on; :meth:`fail_next`, :meth:`fail_items` and :meth:`before_next` to inject."""

    def __init__(self, upstream: str, index_body: Callable[[dict], dict] | None = None):
        super().__init__(upstream)
        self.index_body = index_body
        self.created: set[str] = set()  # indices created through this proxy (deleted upstream on close)
        self.answer_headers = {"Content-Type": "application/json"}  # the server's own (content type, product)
        self._item_failures: dict[str, list] = {}  # _id -> [status, error, times left]
        self._items_lock = threading.Lock()

    def fail_next(self, method: str, path: str, status: int, body: dict, times: int = 1) -> None:
        """Answer the next ``times`` requests whose method and path fully match with ``status`` and ``body``."""
        self.inject(method, path, status, json.dumps(body).encode(), times=times)

    def before_next(self, method: str, path: str, action: Callable[[], object]) -> None:
        """Run ``action`` (it may send its own requests) when the next matching request arrives."""
        self.before(method, path, action)

    def fail_items(self, ids: Iterable[str], times: int = 1, status: int = 429, error: dict | None = None) -> None:
        """Answer bulk items for ``ids`` with ``status``/``error`` (default: a 429 rejection) ``times`` times each;
        the other items of the request go to the server."""
        with self._items_lock:
            for record_id in ids:
                self._item_failures[record_id] = [status, error or REJECTED_ITEM, times]

    def raw(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict | None]:
        """A request straight to the server (not recorded), for checks outside the client."""
        status, _, data = self.forward(method, path, {"Content-Type": "application/json"},
                                       json.dumps(body).encode() if body is not None else b"")
        return status, json.loads(data) if data else None

    def close(self) -> None:
        """Delete the indices created through the proxy and stop it (a second call does nothing more)."""
        for name in sorted(self.created):
            self.raw("DELETE", f"/{name}?ignore_unavailable=true")
        self.created.clear()
        super().close()

    def handle(self, method: str, target: str, headers: dict[str, str], body: bytes):
        path = target.partition("?")[0]
        if method == "PUT" and INDEX_PATH.fullmatch(path):
            self.created.add(path[1:])
        if path.endswith("/_bulk"):
            with self._items_lock:
                failing = any(f[2] > 0 for f in self._item_failures.values())
            if failing:
                return self._bulk_with_failures(method, target, headers, body)
        return super().handle(method, target, headers, body)

    def forward(self, method: str, target: str, headers: dict[str, str], body: bytes):
        if self.index_body and method == "PUT" and body and INDEX_PATH.fullmatch(target.partition("?")[0]):
            body = json.dumps(self.index_body(json.loads(body))).encode()
        status, reply, payload = super().forward(method, target, headers, body)
        kept = {k: v for k, v in reply if k.lower() in ("content-type", "x-elastic-product")}
        if status == 200 and kept:
            self.answer_headers = kept
        return status, reply, payload

    def injected_headers(self, given: dict[str, str]) -> list[tuple[str, str]]:
        """As the server answers: its content type and, from Elasticsearch, ``X-Elastic-Product`` (its client
        refuses an answer without it)."""
        return list({**self.answer_headers, **given}.items())

    def _bulk_with_failures(self, method: str, target: str, headers: dict[str, str], body: bytes):
        """Answer the failing items here, send the others to the server and merge the item results in order."""
        exchange = Exchange(method, target.partition("?")[0], target.partition("?")[2], headers, body, status=200)
        with self._lock:
            self.requests.append(exchange)
        lines, actions, i = body.decode().splitlines(), [], 0
        while i < len(lines):
            op, meta = next(iter(json.loads(lines[i]).items()))
            size = 2 if op in ("index", "create") else 1
            actions.append((op, meta, lines[i:i + size]))
            i += size
        with self._items_lock:
            failing = {n for n, (_, meta, _) in enumerate(actions)
                       if self._item_failures.get(meta["_id"], [0, 0, 0])[2] > 0}
            for n in failing:
                self._item_failures[actions[n][1]["_id"]][2] -= 1
        passed = "".join(line + "\n" for n, (_, _, chunk) in enumerate(actions) if n not in failing for line in chunk)
        answered = iter(json.loads(self.forward(method, target, headers, passed.encode())[2])["items"] if passed else [])
        items = []
        for n, (op, meta, _) in enumerate(actions):
            if n in failing:
                status, error, _ = self._item_failures[meta["_id"]]
                items.append({op: {"_index": meta.get("_index"), "_id": meta["_id"], "status": status, "error": error}})
            else:
                items.append(next(answered))
        payload = json.dumps({"errors": True, "took": 2, "items": items}).encode()
        return 200, self.injected_headers({}), payload
