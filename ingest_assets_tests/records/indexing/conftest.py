"""Fixtures for indexing tests: a recording Elasticsearch HTTP server and MAPRecords built from DPLA fixtures.

``FakeElasticsearch`` answers like an Elasticsearch 9 node (product header, error bodies, bulk items) from an
in-memory model, or, when ELASTICSEARCH_URL is set for the "live" parameter, forwards every request to that
server. Either way it records the exact requests and can inject 429 rejections, so the same tests assert
the same request bodies against the model and against a real cluster.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import threading
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

ES_HEADERS = {
    "X-Elastic-Product": "Elasticsearch",
    "Content-Type": "application/vnd.elasticsearch+json;compatible-with=9",
}
SHARDS = {"total": 2, "successful": 1, "failed": 0}
REJECTED_ITEM_REASON = (
    "rejected execution of primary operation [coordinating_and_primary_bytes=0, replica_bytes=0, "
    "all_bytes=0, primary_operation_bytes=1024, max_coordinating_and_primary_bytes=53687091]"
)
REJECTED_REQUEST = {
    "error": {
        "root_cause": [{"type": "es_rejected_execution_exception", "reason": (
            "rejected execution of coordinating operation [coordinating_and_primary_bytes=53687000, "
            "replica_bytes=0, all_bytes=53687000, coordinating_operation_bytes=2048, "
            "max_coordinating_and_primary_bytes=53687091]")}],
        "type": "es_rejected_execution_exception",
        "reason": (
            "rejected execution of coordinating operation [coordinating_and_primary_bytes=53687000, "
            "replica_bytes=0, all_bytes=53687000, coordinating_operation_bytes=2048, "
            "max_coordinating_and_primary_bytes=53687091]"),
    },
    "status": 429,
}
BUILD_TIME = datetime(2026, 11, 22, 3, 0, 0, tzinfo=UTC)


@dataclass
class Recorded:
    method: str
    path: str
    params: dict
    body: bytes

    def json(self):
        return json.loads(self.body)


def es_error(status: int, error_type: str, reason: str, **extra) -> tuple[int, dict]:
    cause = {"type": error_type, "reason": reason, **extra}
    return status, {"error": {"root_cause": [cause], **cause}, "status": status}


def words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def strings_in(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in strings_in(item)]
    if isinstance(value, list):
        return [s for item in value for s in strings_in(item)]
    return []


class FakeElasticsearch:
    """Recording Elasticsearch endpoint on 127.0.0.1 (a model, or a proxy to ``upstream``)."""

    def __init__(self, upstream: str | None = None):
        self.upstream = urlsplit(upstream) if upstream else None
        self.requests: list[Recorded] = []
        self.indices: dict[str, dict] = {}
        self.aliases: dict[str, set[str]] = {}
        self._scripted: list[tuple[str, str, int, dict]] = []
        self._rejections: dict[str, int] = {}
        self._seq = 0
        self._lock = threading.Lock()
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
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    # --- test controls -------------------------------------------------------------------------
    def fail_next(self, method: str, path_pattern: str, status: int, body: dict) -> None:
        """Answer the next matching request with ``status``/``body`` instead of processing it."""
        self._scripted.append((method, path_pattern, status, body))

    def reject_items(self, ids, times: int = 1) -> None:
        """Answer bulk items for ``ids`` with a 429 es_rejected_execution_exception ``times`` times each."""
        for record_id in ids:
            self._rejections[record_id] = times

    def calls(self, method: str, pattern: str) -> list[Recorded]:
        """Recorded requests whose method and path fully match the regular expressions given."""
        return [r for r in self.requests if re.fullmatch(method, r.method) and re.fullmatch(pattern, r.path)]

    def raw(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict | None]:
        """A request to this server (so to the live cluster in proxy mode), for checks outside the client."""
        conn = http.client.HTTPConnection(self.server.server_address[0], self.server.server_address[1], timeout=10)
        payload = json.dumps(body).encode() if body is not None else None
        conn.request(method, path, body=payload, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        data = response.read()
        conn.close()
        return response.status, json.loads(data) if data else None

    def close(self) -> None:
        if self.upstream:  # remove every index the tests created on the live cluster
            for request in self.calls("PUT", r"/[^/_][^/]*"):
                self.raw("DELETE", request.path + "?ignore_unavailable=true")
        self.server.shutdown()
        self.server.server_close()

    # --- request handling ------------------------------------------------------------------------
    def handle(self, method: str, target: str, headers: dict, body: bytes) -> tuple[int, dict, bytes]:
        split = urlsplit(target)
        path, params = split.path, {k: v[-1] for k, v in parse_qs(split.query).items()}
        with self._lock:
            self.requests.append(Recorded(method, path, params, body))
            for i, (m, pattern, status, reply) in enumerate(self._scripted):
                if re.fullmatch(m, method) and re.fullmatch(pattern, path):
                    del self._scripted[i]
                    return status, dict(ES_HEADERS), json.dumps(reply).encode()
            if path.endswith("/_bulk") and self._rejections:
                return self._bulk_with_rejections(method, target, headers, body)
            return self._dispatch(method, target, headers, body)

    def _dispatch(self, method, target, headers, body) -> tuple[int, dict, bytes]:
        if self.upstream:
            return self._forward(method, target, headers, body)
        split = urlsplit(target)
        params = {k: v[-1] for k, v in parse_qs(split.query).items()}
        status, reply = self._model(method, split.path, params, body)
        return status, dict(ES_HEADERS), b"" if reply is None else json.dumps(reply).encode()

    def _forward(self, method, target, headers, body) -> tuple[int, dict, bytes]:
        up = self.upstream
        conn_class = http.client.HTTPSConnection if up.scheme == "https" else http.client.HTTPConnection
        conn = conn_class(up.hostname, up.port, timeout=60)
        sent = {k: v for k, v in headers.items() if k.lower() not in ("host", "content-length", "connection")}
        if up.username:
            import base64
            token = base64.b64encode(f"{up.username}:{up.password or ''}".encode()).decode()
            sent["Authorization"] = f"Basic {token}"
        conn.request(method, target, body=body or None, headers=sent)
        response = conn.getresponse()
        data = response.read()
        conn.close()
        kept = {k: v for k, v in response.getheaders() if k.lower() in ("content-type", "x-elastic-product")}
        return response.status, kept, data

    def _bulk_with_rejections(self, method, target, headers, body) -> tuple[int, dict, bytes]:
        """Split off the items to reject, process the rest, and merge the item results in request order."""
        lines = body.decode().splitlines()
        pairs, i = [], 0
        while i < len(lines):
            action = json.loads(lines[i])
            op, meta = next(iter(action.items()))
            size = 2 if op in ("index", "create", "update") else 1
            pairs.append((op, meta, lines[i:i + size]))
            i += size
        passed = [p for p in pairs if self._rejections.get(p[1]["_id"], 0) <= 0]
        items = []
        if passed:
            rest = "".join(line + "\n" for _, _, chunk in passed for line in chunk).encode()
            status, reply_headers, data = self._dispatch(method, target, headers, rest)
            items = json.loads(data)["items"]
        merged, passed_items = [], iter(items)
        for op, meta, _ in pairs:
            if self._rejections.get(meta["_id"], 0) > 0:
                self._rejections[meta["_id"]] -= 1
                merged.append({op: {"_index": meta["_index"], "_id": meta["_id"], "status": 429, "error": {
                    "type": "es_rejected_execution_exception", "reason": REJECTED_ITEM_REASON}}})
            else:
                merged.append(next(passed_items))
        reply = {"errors": True, "took": 2, "items": merged}
        return 200, dict(ES_HEADERS), json.dumps(reply).encode()

    # --- the in-memory model of the APIs the client uses -------------------------------------------------
    def _model(self, method: str, path: str, params: dict, body: bytes) -> tuple[int, dict | None]:
        parts = [p for p in path.split("/") if p]
        if not parts:
            return 200, {"name": "fake-node", "cluster_name": "fake", "cluster_uuid": "f4k3", "version": {
                "number": "9.1.0", "build_flavor": "default", "lucene_version": "10.2.2",
                "minimum_wire_compatibility_version": "8.19.0",
                "minimum_index_compatibility_version": "8.0.0"}, "tagline": "You Know, for Search"}
        if parts == ["_bulk"]:
            return self._bulk(body.decode())
        if parts == ["_aliases"] and method == "POST":
            return self._update_aliases(json.loads(body)["actions"])
        if parts[0] == "_alias" and len(parts) == 2 and method == "GET":
            holders = {n: {"aliases": {parts[1]: {}}} for n in self.aliases.get(parts[1], ())}
            return (200, holders) if holders else (404, {"error": f"alias [{parts[1]}] missing", "status": 404})
        if len(parts) == 2 and parts[1] in ("_refresh", "_count", "_search"):
            names = self._read_targets(parts[0])
            if names is None:
                return self._no_index(parts[0])
            if parts[1] == "_refresh":
                for name in names:
                    self.indices[name]["searchable"] = dict(self.indices[name]["docs"])
                return 200, {"_shards": SHARDS}
            docs = {k: v for name in names for k, v in self.indices[name]["searchable"].items()}
            if parts[1] == "_count":
                return 200, {"count": len(docs), "_shards": {"total": 3, "successful": 3, "skipped": 0, "failed": 0}}
            return self._search(names, docs, json.loads(body) if body else {})
        if len(parts) == 1:
            return self._index_api(method, parts[0], params, body)
        return es_error(400, "illegal_argument_exception", f"fake: unsupported {method} {path}")

    def _no_index(self, name: str) -> tuple[int, dict]:
        return es_error(404, "index_not_found_exception", f"no such index [{name}]", index=name,
                        **{"resource.type": "index_or_alias", "resource.id": name, "index_uuid": "_na_"})

    def _read_targets(self, name: str) -> list[str] | None:
        if name in self.indices:
            return [name]
        return sorted(self.aliases[name]) if self.aliases.get(name) else None

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
            self.indices[name] = {"body": spec, "docs": {}, "searchable": {}, "versions": {}}
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

    def _bulk(self, body: str) -> tuple[int, dict]:
        lines, items, i = body.splitlines(), [], 0
        while i < len(lines):
            op, meta = next(iter(json.loads(lines[i]).items()))
            source = lines[i + 1] if op == "index" else None
            i += 2 if op == "index" else 1
            name = meta["_index"]
            if self.aliases.get(name):
                name = next(iter(self.aliases[name]))
            index = self.indices.setdefault(name, {"body": {}, "docs": {}, "searchable": {}, "versions": {}})
            self._seq += 1
            head = {"_index": name, "_id": meta["_id"]}
            if op == "delete":
                found = index["docs"].pop(meta["_id"], None) is not None
                version = index["versions"][meta["_id"]] = index["versions"].get(meta["_id"], 0) + 1
                items.append({"delete": {**head, "_version": version, "result": "deleted" if found else "not_found",
                                         "_shards": SHARDS, "_seq_no": self._seq, "_primary_term": 1,
                                         "status": 200 if found else 404}})
                continue
            error = self._parse_error(index, meta["_id"], source)
            if error:
                items.append({"index": {**head, "status": 400, "error": error}})
                continue
            created = meta["_id"] not in index["docs"]
            index["docs"][meta["_id"]] = json.loads(source)
            version = index["versions"][meta["_id"]] = index["versions"].get(meta["_id"], 0) + 1
            items.append({"index": {**head, "_version": version, "result": "created" if created else "updated",
                                    "_shards": SHARDS, "_seq_no": self._seq, "_primary_term": 1,
                                    "status": 201 if created else 200}})
        errors = any("error" in next(iter(item.values())) for item in items)
        return 200, {"errors": errors, "took": 3, "items": items}

    def _parse_error(self, index: dict, record_id: str, source: str) -> dict | None:
        """Like ES: a value that a strict ``date`` field of the mapping cannot parse fails the document."""
        try:
            doc = json.loads(source)
        except ValueError:
            return {"type": "document_parsing_exception", "reason": "[1:1] failed to parse"}
        properties = index["body"].get("mappings", {}).get("properties", {})
        for field, spec in properties.items():
            value = doc.get(field)
            if spec.get("type") != "date" or spec.get("ignore_malformed") or value is None:
                continue
            try:
                datetime.fromisoformat(str(value).replace("Z", "+00:00"))
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

    def _search(self, names: list[str], docs: dict, body: dict) -> tuple[int, dict]:
        query = body.get("query", {"match_all": {}})
        if "simple_query_string" in query:
            wanted = words(query["simple_query_string"]["query"])
            docs = {k: d for k, d in docs.items() if wanted <= words(" ".join(strings_in(d)))}
        hits = [{"_index": names[0], "_id": k, "_score": 1.0, "_source": docs[k]}
                for k in sorted(docs)[: body.get("size", 10)]]
        return 200, {"took": 1, "timed_out": False, "_shards": {"total": 3, "successful": 3, "skipped": 0,
                     "failed": 0}, "hits": {"total": {"value": len(docs), "relation": "eq"},
                                            "max_score": 1.0 if hits else None, "hits": hits}}


@pytest.fixture(params=["fake", "live"])
def es(request):
    """A recording Elasticsearch endpoint: the in-memory model, or a proxy to ELASTICSEARCH_URL."""
    upstream = os.environ.get("ELASTICSEARCH_URL")
    if request.param == "live" and not upstream:
        pytest.skip("ELASTICSEARCH_URL is not set")
    fake = FakeElasticsearch(upstream if request.param == "live" else None)
    yield fake
    fake.close()


@pytest.fixture
def rejected_request() -> dict:
    """The body of a 429 whole-request rejection (indexing pressure), as Elasticsearch sends it."""
    return REJECTED_REQUEST


@pytest.fixture
def alias() -> str:
    """A fresh alias per test, so runs against a live cluster never collide."""
    return f"ingest-test-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def build_clock():
    """A clock fixed at BUILD_TIME: physical index names are predictable."""
    return lambda: BUILD_TIME


@pytest.fixture(scope="session")
def mapping_file() -> Path:
    return Path(__file__).resolve().parents[3] / "ingest_assets" / "schemas" / "search-dpla-map4-mapping.json"


# --- MAPRecords (the MAP4_x Avro shape) built from DPLA's own Elasticsearch documents -----------------

def _as_list(value) -> list:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _agent(label: str) -> dict:
    return {"name": label, "providedLabel": label, "note": None, "inScheme": None, "exactMatch": None,
            "closeMatch": None}


def map_record_from_es(source: dict) -> dict:
    """The MAPRecord an aggregator would have held for a DPLA ES item document (legacy or current)."""
    sr = source["sourceResource"]
    ingest = datetime.fromisoformat(source["ingestDate"].replace("Z", "+00:00"))
    named = lambda v: v["name"] if isinstance(v, dict) else v  # noqa: E731
    return {
        "id": source["id"],
        "ingestType": source.get("ingestType", "item"),
        "ingestDate": int(ingest.timestamp() * 1000),  # milliseconds, as DPLA's ES dates carry them
        "dataProvider": named(source["dataProvider"]),
        "hasView": None,
        "intermediateProvider": None,
        "isShownAt": source["isShownAt"],
        "object": source.get("object"),
        "originalRecord": json.dumps(source.get("originalRecord")),
        "preview": source.get("object") or "",
        "provider": source["provider"]["name"],
        "rightsStatement": None,
        "sourceResource": {
            "alternative": None,
            "collection": [{"title": c.get("title"), "description": None} for c in _as_list(sr.get("collection"))],
            "contributor": None,
            "creator": [_agent(c) for c in _as_list(sr.get("creator"))],
            "date": [{"providedLabel": [d["displayDate"]], "begin": d.get("begin"), "end": d.get("end")}
                     for d in _as_list(sr.get("date"))],
            "description": _as_list(sr.get("description")),
            "extent": _as_list(sr.get("extent")),
            "format": _as_list(sr.get("format")),
            "genre": None,
            "identifier": _as_list(sr.get("identifier")),
            "language": [lang["name"] for lang in _as_list(sr.get("language"))],
            "spatial": [{"name": p["name"], "city": None, "county": None, "state": None, "country": None,
                         "region": None, "coordinates": None} for p in _as_list(sr.get("spatial"))],
            "publisher": [_agent(p) for p in _as_list(sr.get("publisher"))],
            "relation": _as_list(sr.get("relation")),
            "isReplacedBy": None,
            "replaces": None,
            "rights": _as_list(sr.get("rights")),
            "rightsHolder": None,
            "subject": [{**_agent(s["name"]), "inScheme": s.get("scheme")} for s in _as_list(sr.get("subject"))],
            "temporal": [{"providedLabel": [t["displayDate"]], "begin": None, "end": None}
                         for t in _as_list(sr.get("temporal"))],
            "title": _as_list(sr.get("title")),
            "type": _as_list(sr.get("type")),
        },
        "title": None,
    }


@pytest.fixture(scope="session")
def dpla_sources(shared_fixtures) -> list[dict]:
    """``_source`` of the DPLA API search hits and of the legacy Kentucky document (read in place)."""
    api = json.loads((shared_fixtures / "dpla" / "dpla-api-es-item-search-list.json").read_text("utf-8"))
    legacy = json.loads((shared_fixtures / "dpla" / "dpla-legacy-map-es-doc-kentucky-retcon.json").read_text("utf-8"))
    return [hit["_source"] for hit in api["hits"]["hits"]] + [legacy["_source"]]


@pytest.fixture(scope="session")
def map_records(dpla_sources) -> list[dict]:
    return [map_record_from_es(source) for source in dpla_sources]
