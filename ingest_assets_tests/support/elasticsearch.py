"""One fake Elasticsearch for every test that talks to a cluster: an HTTP server on 127.0.0.1 answering the
REST APIs the official client uses, with the headers, status codes and bodies an Elasticsearch 9 node sends
(the pinned client asks for ``compatible-with=9``).

The model: indices with mappings and aliases; ``_bulk`` (index, create, delete: 409 on an existing create,
a strict ``date`` field refusing an unparsable value), ``_doc`` get and put (real time), ``_refresh`` (only
then do ``_search`` and ``_count`` see writes), ``_search`` (``match_all``, ``simple_query_string``,
``term``, ``range``, ``bool`` filters; ``sort`` with ``search_after``; ``min``/``max`` aggregations; points
in time) and the alias APIs. Every request is recorded; failures are injected per request or per bulk item.
With ``upstream`` (a live cluster's URL) every request is forwarded there instead, so the same assertions
on requests hold against a real cluster; the injected failures are then the faults a real server cannot be
made to produce on cue (a 429 rejection of one bulk item or one request, a 5xx of one request).
``index_body`` rewrites an index-creation body on its way upstream (the recorded request stays as the client
sent it): Elasticsearch's test distribution needs the ``asciifolding`` filter swapped out.
"""

from __future__ import annotations

import base64
import copy
import http.client
import json
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import cmp_to_key
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

HEADERS = {"X-Elastic-Product": "Elasticsearch", "Content-Type": "application/vnd.elasticsearch+json;compatible-with=9"}
SHARDS = {"total": 2, "successful": 1, "failed": 0}
READ_SHARDS = {"total": 1, "successful": 1, "skipped": 0, "failed": 0}
REJECTED = "rejected execution of coordinating operation [coordinating_and_primary_bytes=53687000, replica_bytes=0, " \
           "all_bytes=53687000, coordinating_operation_bytes=2048, max_coordinating_and_primary_bytes=53687091]"
REJECTED_ITEM = {"type": "es_rejected_execution_exception", "reason": (
    "rejected execution of primary operation [coordinating_and_primary_bytes=0, replica_bytes=0, all_bytes=0, "
    "primary_operation_bytes=1024, max_coordinating_and_primary_bytes=53687091]")}


def es_error(status: int, error_type: str, reason: str, **extra) -> tuple[int, dict]:
    """An error answer as Elasticsearch shapes it (``root_cause`` plus the cause itself)."""
    cause = {"type": error_type, "reason": reason, **extra}
    return status, {"error": {"root_cause": [cause], **cause}, "status": status}


REJECTED_REQUEST = es_error(429, "es_rejected_execution_exception", REJECTED)[1]


@dataclass
class Recorded:
    method: str
    path: str
    params: dict
    body: bytes

    def json(self):
        """The body parsed: a list of lines for NDJSON (``_bulk``), else one value; None when empty."""
        if not self.body:
            return None
        if self.path.endswith("/_bulk"):
            return [json.loads(line) for line in self.body.splitlines() if line.strip()]
        return json.loads(self.body)


def _millis(value) -> int:
    """A ``date`` field's value as Elasticsearch sorts and aggregates it: epoch milliseconds."""
    if isinstance(value, int | float):
        return int(value)
    moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    moment = moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
    return round(moment.timestamp() * 1000)


def _date_text(millis: int) -> str:
    return datetime.fromtimestamp(millis / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _field(doc: dict, path: str):
    for name in path.split("."):
        doc = doc.get(name) if isinstance(doc, dict) else None
    return doc


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


class FakeElasticsearch:
    """The recording server; ``url`` is its address, ``indices`` and ``aliases`` its state."""

    def __init__(self, upstream: str | None = None, index_body: Callable[[dict], dict] | None = None):
        self.upstream = urlsplit(upstream) if upstream else None
        self.index_body = index_body
        self.headers = dict(HEADERS)  # of every answer made here: in upstream mode, the server's own
        self.requests: list[Recorded] = []
        self.created: set[str] = set()  # indices created through this server (deleted upstream on close)
        self.indices: dict[str, dict] = {}
        self.aliases: dict[str, set[str]] = {}
        self.pits: dict[str, dict[str, dict]] = {}
        self._scripted: list[list] = []  # [method, path, status, body, times left]
        self._hooks: list[tuple[str, str, Callable[[], object]]] = []
        self._item_failures: dict[str, list] = {}  # _id -> [status, error, times left]
        self._seq = 0
        self._lock = threading.RLock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def handle_one(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                status, headers, payload = fake.handle(self.command, self.path, dict(self.headers), body)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_one

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    # --- test controls -------------------------------------------------------------------------
    def fail_next(self, method: str, path: str, status: int, body: dict, times: int = 1) -> None:
        """Answer the next ``times`` requests whose method and path fully match these regular expressions with
        ``status`` and ``body`` instead of processing them."""
        self._scripted.append([method, path, status, body, times])

    def before_next(self, method: str, path: str, action: Callable[[], object]) -> None:
        """Run ``action`` (it may send its own requests) when the next matching request arrives, before it is
        processed: another client's write that lands just then."""
        self._hooks.append((method, path, action))

    def fail_items(self, ids: Iterable[str], times: int = 1, status: int = 429, error: dict | None = None) -> None:
        """Answer bulk items for ``ids`` with ``status``/``error`` (default: a 429 rejection) ``times`` times each;
        the other items of the request are processed."""
        for record_id in ids:
            self._item_failures[record_id] = [status, error or REJECTED_ITEM, times]

    def calls(self, method: str, path: str) -> list[Recorded]:
        """Recorded requests whose method and path fully match these regular expressions."""
        return [r for r in self.requests if re.fullmatch(method, r.method) and re.fullmatch(path, r.path)]

    def raw(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict | None]:
        """A request to this server (so to the live cluster in proxy mode), for checks outside the client."""
        conn = http.client.HTTPConnection("127.0.0.1", self.server.server_address[1], timeout=10)
        payload = json.dumps(body).encode() if body is not None else None
        conn.request(method, path, body=payload, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        data = response.read()
        conn.close()
        return response.status, json.loads(data) if data else None

    def close(self) -> None:
        if self.upstream:  # remove every index the tests created on the live cluster
            for name in sorted(self.created):
                self.raw("DELETE", f"/{name}?ignore_unavailable=true")
        self.server.shutdown()
        self.server.server_close()

    # --- request handling ------------------------------------------------------------------------
    def handle(self, method: str, target: str, headers: dict, body: bytes) -> tuple[int, dict, bytes]:
        split = urlsplit(target)
        path, params = split.path, {k: v[-1] for k, v in parse_qs(split.query).items()}
        with self._lock:
            self.requests.append(Recorded(method, path, params, body))
            if method == "PUT" and re.fullmatch(r"/[^/_][^/]*", path):
                self.created.add(path[1:])
            hooks = [h for h in self._hooks if re.fullmatch(h[0], method) and re.fullmatch(h[1], path)]
            self._hooks = [h for h in self._hooks if h not in hooks]
        for _, _, action in hooks:
            action()
        with self._lock:
            for script in self._scripted:
                if re.fullmatch(script[0], method) and re.fullmatch(script[1], path):
                    script[4] -= 1
                    if not script[4]:
                        self._scripted.remove(script)
                    return script[2], dict(self.headers), json.dumps(script[3]).encode()
            if path.endswith("/_bulk") and any(f[2] > 0 for f in self._item_failures.values()):
                return self._bulk_with_failures(method, target, headers, body)
            return self._dispatch(method, target, headers, body)

    def _dispatch(self, method, target, headers, body) -> tuple[int, dict, bytes]:
        if self.upstream:
            return self._forward(method, target, headers, body)
        split = urlsplit(target)
        status, reply = self._model(method, split.path, {k: v[-1] for k, v in parse_qs(split.query).items()}, body)
        return status, dict(HEADERS), b"" if reply is None else json.dumps(reply).encode()

    def _bulk_with_failures(self, method, target, headers, body) -> tuple[int, dict, bytes]:
        """Answer the failing items here, send the others on (to the model or the live cluster) and merge the
        item results in request order."""
        lines, actions, i = body.decode().splitlines(), [], 0
        while i < len(lines):
            op, meta = next(iter(json.loads(lines[i]).items()))
            size = 2 if op in ("index", "create") else 1
            actions.append((op, meta, lines[i:i + size]))
            i += size
        failing = {n for n, (_, meta, _) in enumerate(actions) if self._item_failures.get(meta["_id"], [0, 0, 0])[2] > 0}
        passed = "".join(line + "\n" for n, (_, _, chunk) in enumerate(actions) if n not in failing for line in chunk)
        answered = iter(json.loads(self._dispatch(method, target, headers, passed.encode())[2])["items"] if passed else [])
        items = []
        for n, (op, meta, _) in enumerate(actions):
            if n in failing:
                failure = self._item_failures[meta["_id"]]
                failure[2] -= 1
                items.append({op: {"_index": meta.get("_index"), "_id": meta["_id"], "status": failure[0],
                                   "error": failure[1]}})
            else:
                items.append(next(answered))
        return 200, dict(self.headers), json.dumps({"errors": True, "took": 2, "items": items}).encode()

    def _forward(self, method, target, headers, body) -> tuple[int, dict, bytes]:
        up = self.upstream
        conn_class = http.client.HTTPSConnection if up.scheme == "https" else http.client.HTTPConnection
        conn = conn_class(up.hostname, up.port, timeout=60)
        sent = {k: v for k, v in headers.items() if k.lower() not in ("host", "content-length", "connection")}
        if self.index_body and method == "PUT" and body and re.fullmatch(r"/[^/_][^/?]*", urlsplit(target).path):
            body = json.dumps(self.index_body(json.loads(body))).encode()
        if up.username:
            sent["Authorization"] = "Basic " + base64.b64encode(f"{up.username}:{up.password or ''}".encode()).decode()
        conn.request(method, target, body=body or None, headers=sent)
        response = conn.getresponse()
        data = response.read()
        conn.close()
        kept = {k: v for k, v in response.getheaders() if k.lower() in ("content-type", "x-elastic-product")}
        if response.status == 200 and "content-type" in {k.lower() for k in kept}:
            self.headers = kept
        return response.status, kept, data

    # --- the in-memory model ---------------------------------------------------------------------
    def _model(self, method: str, path: str, params: dict, body: bytes) -> tuple[int, dict | None]:
        parts = [p for p in path.split("/") if p]
        request = json.loads(body) if body and not path.endswith("/_bulk") else {}
        if not parts:
            return 200, {"name": "fake-node", "cluster_name": "fake", "cluster_uuid": "f4k3", "version": {
                "number": "9.1.0", "build_flavor": "default", "lucene_version": "10.2.2",
                "minimum_wire_compatibility_version": "8.19.0",
                "minimum_index_compatibility_version": "8.0.0"}, "tagline": "You Know, for Search"}
        if parts[-1] == "_bulk":
            return self._bulk(body.decode(), parts[0] if len(parts) == 2 else None)
        if parts == ["_aliases"] and method == "POST":
            return self._update_aliases(request["actions"])
        if parts[0] == "_alias" and len(parts) == 2 and method == "GET":
            holders = {n: {"aliases": {parts[1]: {}}} for n in sorted(self.aliases.get(parts[1], ()))}
            return (200, holders) if holders else (404, {"error": f"alias [{parts[1]}] missing", "status": 404})
        if parts == ["_pit"] and method == "DELETE":
            freed = 1 if self.pits.pop(request["id"], None) is not None else 0
            return (200 if freed else 404), {"succeeded": True, "num_freed": freed}
        if parts == ["_search"] and "pit" in request:
            if request["pit"]["id"] not in self.pits:
                return es_error(404, "search_context_missing_exception", "No search context found for id [0]")
            return self._search(self.pits[request["pit"]["id"]], request, pit=request["pit"]["id"])
        if len(parts) == 1:
            return self._index_api(method, parts[0], params, body)
        names = self._targets(parts[0])
        if parts[1] == "_doc" and len(parts) == 3:
            return self._doc(method, parts[0], parts[2], request)
        if names is None:
            return self._no_index(parts[0])
        if parts[1] == "_refresh":
            for name in names:
                self.indices[name]["searchable"] = copy.deepcopy(self.indices[name]["docs"])
            return 200, {"_shards": {**SHARDS, "total": 2 * len(names), "successful": len(names)}}
        docs = {(name, k): v for name in names for k, v in self.indices[name]["searchable"].items()}
        if parts[1] == "_pit" and method == "POST":
            pit = base64.urlsafe_b64encode(f"pit-{len(self.pits)}-{parts[0]}".encode()).decode()
            self.pits[pit] = copy.deepcopy(docs)
            return 200, {"id": pit, "_shards": READ_SHARDS}
        if parts[1] == "_count":
            matching = [d for d in docs.values() if self._matches(d, request.get("query", {"match_all": {}}))]
            return 200, {"count": len(matching), "_shards": READ_SHARDS}
        if parts[1] == "_search":
            return self._search(docs, request)
        return es_error(400, "illegal_argument_exception", f"fake: unsupported {method} {path}")

    def _no_index(self, name: str) -> tuple[int, dict]:
        return es_error(404, "index_not_found_exception", f"no such index [{name}]", index=name,
                        **{"resource.type": "index_or_alias", "resource.id": name, "index_uuid": "_na_"})

    def _targets(self, expression: str) -> list[str] | None:
        """Index names behind a comma-separated list of indices and aliases; None if one is unknown."""
        names = []
        for name in expression.split(","):
            if name in self.indices:
                names.append(name)
            elif self.aliases.get(name):
                names.extend(sorted(self.aliases[name]))
            else:
                return None
        return names

    def _write_target(self, name: str) -> str:
        """The index a write to ``name`` goes to (an alias's only index); created on first write, as ES does."""
        if self.aliases.get(name):
            return next(iter(self.aliases[name]))
        self.indices.setdefault(name, self._new_index({}))
        return name

    @staticmethod
    def _new_index(spec: dict) -> dict:
        return {"mappings": spec.get("mappings", {}), "settings": spec.get("settings", {}),
                "docs": {}, "searchable": {}, "versions": {}}

    def _index_api(self, method: str, name: str, params: dict, body: bytes) -> tuple[int, dict | None]:
        if method == "HEAD":
            return (200 if name in self.indices or self.aliases.get(name) else 404), None
        if method == "PUT":
            if name in self.indices:
                return es_error(400, "resource_already_exists_exception", f"index [{name}/u1d] already exists",
                                index_uuid="u1d", index=name)
            if self.aliases.get(name):
                return es_error(400, "invalid_index_name_exception",
                                f"Invalid index name [{name}], already exists as alias", index=name)
            spec = json.loads(body) if body else {}
            self.indices[name] = self._new_index(spec)
            for alias in spec.get("aliases", {}):
                self.aliases.setdefault(alias, set()).add(name)
            return 200, {"acknowledged": True, "shards_acknowledged": True, "index": name}
        if method == "DELETE":
            if name not in self.indices:
                if params.get("ignore_unavailable") == "true":
                    return 200, {"acknowledged": True}
                return self._no_index(name)
            del self.indices[name]
            for holders in self.aliases.values():
                holders.discard(name)
            return 200, {"acknowledged": True}
        return es_error(400, "illegal_argument_exception", f"fake: unsupported {method} /{name}")

    def _update_aliases(self, actions: list[dict]) -> tuple[int, dict]:
        for action in actions:  # validate all first: the API applies all actions or none
            op, spec = next(iter(action.items()))
            if spec["index"] not in self.indices:
                return self._no_index(spec["index"])
            if spec["alias"] in self.indices:
                return es_error(400, "invalid_alias_name_exception", f"Invalid alias name [{spec['alias']}]: an "
                                "index or data stream exists with the same name as the alias")
            if op == "remove" and spec["index"] not in self.aliases.get(spec["alias"], ()):
                return es_error(404, "aliases_not_found_exception", f"aliases [{spec['alias']}] missing")
        for action in actions:
            op, spec = next(iter(action.items()))
            holders = self.aliases.setdefault(spec["alias"], set())
            (holders.add if op == "add" else holders.discard)(spec["index"])
        return 200, {"acknowledged": True, "errors": False}

    def _written(self, name: str, doc_id: str, result: str) -> dict:
        index = self.indices[name]
        version = index["versions"][doc_id] = index["versions"].get(doc_id, 0) + 1
        self._seq += 1
        return {"_index": name, "_id": doc_id, "_version": version, "result": result, "_shards": SHARDS,
                "_seq_no": self._seq, "_primary_term": 1}

    def _doc(self, method: str, target: str, doc_id: str, source: dict) -> tuple[int, dict]:
        if method == "PUT":
            name = self._write_target(target)
            docs = self.indices[name]["docs"]
            result = "updated" if doc_id in docs else "created"
            docs[doc_id] = source
            return (201 if result == "created" else 200), self._written(name, doc_id, result)
        names = self._targets(target)
        if names is None:
            return self._no_index(target)
        name = names[0]
        head = {"_index": name, "_id": doc_id}
        if doc_id not in self.indices[name]["docs"]:
            return 404, {**head, "found": False}
        version = self.indices[name]["versions"][doc_id]
        return 200, {**head, "_version": version, "_seq_no": self._seq, "_primary_term": 1, "found": True,
                     "_source": self.indices[name]["docs"][doc_id]}

    def _bulk(self, body: str, default_index: str | None) -> tuple[int, dict]:
        lines, items, i = body.splitlines(), [], 0
        while i < len(lines):
            op, meta = next(iter(json.loads(lines[i]).items()))
            if op not in ("index", "create", "delete"):
                raise AssertionError(f"fake: unsupported bulk action {op!r}")
            source = lines[i + 1] if op in ("index", "create") else None
            i += 1 if source is None else 2
            name = self._write_target(meta.get("_index", default_index))
            head = {"_index": name, "_id": meta["_id"]}
            docs = self.indices[name]["docs"]
            if op == "delete":
                found = docs.pop(meta["_id"], None) is not None
                answer = self._written(name, meta["_id"], "deleted" if found else "not_found")
                items.append({op: {**answer, "status": 200 if found else 404}})
                continue
            if op == "create" and meta["_id"] in docs:
                version = self.indices[name]["versions"][meta["_id"]]
                items.append({op: {**head, "status": 409, "error": {
                    "type": "version_conflict_engine_exception", "index_uuid": "u1d", "shard": "0", "index": name,
                    "reason": f"[{meta['_id']}]: version conflict, document already exists (current version [{version}])",
                }}})
                continue
            error = self._parse_error(name, meta["_id"], source)
            if error:
                items.append({op: {**head, "status": 400, "error": error}})
                continue
            created = meta["_id"] not in docs
            docs[meta["_id"]] = json.loads(source)
            answer = self._written(name, meta["_id"], "created" if created else "updated")
            items.append({op: {**answer, "status": 201 if created else 200}})
        errors = any("error" in next(iter(item.values())) for item in items)
        return 200, {"errors": errors, "took": 3, "items": items}

    def _parse_error(self, name: str, record_id: str, source: str) -> dict | None:
        """Like ES: a value that a strict ``date`` field of the mapping cannot parse fails the document."""
        try:
            doc = json.loads(source)
        except ValueError:
            return {"type": "document_parsing_exception", "reason": "[1:1] failed to parse"}
        for field, spec in self.indices[name]["mappings"].get("properties", {}).items():
            value = doc.get(field)
            if spec.get("type") != "date" or spec.get("ignore_malformed") or value is None:
                continue
            try:
                _millis(value)
            except ValueError:
                column = source.find(json.dumps(value)) + len(json.dumps(value))
                return {
                    "type": "document_parsing_exception",
                    "reason": f"[1:{column}] failed to parse field [{field}] of type [date] in document with id "
                              f"'{record_id}'. Preview of field's value: '{value}'",
                    "caused_by": {"type": "illegal_argument_exception", "reason": (
                        f"failed to parse date field [{value}] with format [strict_date_optional_time||epoch_millis]")},
                }
        return None

    def _is_date(self, field: str) -> bool:
        for index in self.indices.values():
            spec = index["mappings"]
            for name in field.split("."):
                spec = spec.get("properties", {}).get(name, {})
            if spec.get("type") == "date":
                return True
        return False

    def _value(self, doc: dict, field: str):
        value = _field(doc, field)
        return _millis(value) if value is not None and self._is_date(field) else value

    def _matches(self, doc: dict, query: dict) -> bool:
        ((kind, spec),) = query.items()
        if kind == "match_all":
            return True
        if kind == "simple_query_string":
            return _words(spec["query"]) <= _words(" ".join(_strings(doc)))
        if kind == "term":
            ((field, value),) = spec.items()
            return _field(doc, field) == (value["value"] if isinstance(value, dict) else value)
        if kind == "range":
            ((field, bounds),) = spec.items()
            value, date = _field(doc, field), self._is_date(field)
            if value is None:
                return False
            tests = {"gte": lambda a, b: a >= b, "gt": lambda a, b: a > b, "lte": lambda a, b: a <= b,
                     "lt": lambda a, b: a < b}
            convert = _millis if date else (lambda v: v)
            return all(tests[op](convert(value), convert(bound)) for op, bound in bounds.items())
        if kind == "bool":
            return all(self._matches(doc, q) for q in spec.get("filter", []) + spec.get("must", []))
        raise AssertionError(f"fake: unsupported query {query}")

    def _search(self, docs: dict, body: dict, pit: str | None = None) -> tuple[int, dict]:
        hits = {key: doc for key, doc in sorted(docs.items()) if self._matches(doc, body.get("query", {"match_all": {}}))}
        result = {"took": 1, "timed_out": False, "_shards": READ_SHARDS}
        if pit:
            result["pit_id"] = pit
        total = {"value": len(hits), "relation": "eq"}
        if body.get("track_total_hits") is False:
            total = None
        if "aggs" in body:
            result["aggregations"] = {}
            for name, spec in body["aggs"].items():
                ((kind, conf),) = spec.items()
                values = [self._value(d, conf["field"]) for d in hits.values() if _field(d, conf["field"]) is not None]
                value = (min if kind == "min" else max)(values) if values else None
                result["aggregations"][name] = {"value": None if value is None else float(value)}
                if value is not None and self._is_date(conf["field"]):
                    result["aggregations"][name]["value_as_string"] = _date_text(value)
        sort = [next(iter(s.items())) for s in body.get("sort", [])]
        descending = [(o if isinstance(o, str) else o.get("order", "asc")) == "desc" for _, o in sort]

        def compare(a: tuple, b: tuple) -> int:
            for x, y, desc in zip(a, b, descending, strict=True):
                if x != y:
                    return (1 if x > y else -1) * (-1 if desc else 1)
            return 0

        ranked = [((tuple(self._value(d, field) for field, _ in sort)), key, d) for key, d in hits.items()]
        ranked.sort(key=lambda r: cmp_to_key(compare)(r[0]))
        if body.get("search_after"):
            ranked = [r for r in ranked if compare(r[0], tuple(body["search_after"])) > 0]
        page = ranked[: body.get("size", 10)]
        result["hits"] = {
            **({"total": total} if total else {}),
            "max_score": None if sort or not page else 1.0,
            "hits": [{"_index": key[0], "_id": key[1], "_score": None if sort else 1.0, "_source": d,
                      **({"sort": list(values)} if sort else {})} for values, key, d in page],
        }
        return 200, result
