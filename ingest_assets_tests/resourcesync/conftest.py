"""ResourceSync fixtures: a source world (files + index + server + publisher) and a fake Elasticsearch.

The fake speaks the HTTP API the official client uses (real response shapes and headers, including
``X-Elastic-Product``), evaluates exactly the query shapes the backend sends, and records every request
so tests can assert bodies and mappings.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import parse_qs

import pytest

from ingest_assets.events import record_event
from ingest_assets.resourcesync.model import ResourceSet
from ingest_assets.resourcesync.publish import Publisher
from ingest_assets.resourcesync.server import ResourceSyncApp
from ingest_assets.resourcesync.sql_index import SqlResourceIndex
from ingest_assets.sql import make_engine
from ingest_assets.storage import LocalStorage

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
ES_HEADERS = [
    ("X-Elastic-Product", "Elasticsearch"),
    ("Content-Type", "application/vnd.elasticsearch+json;compatible-with=9"),
]


class Source:
    """Files under ``root`` whose every change is recorded as an event and published for ``base``."""

    def __init__(self, tmp: Path, base: str, index, name: str = "set1", clock=None, **publisher):
        self.root = tmp / f"{name}-root"
        self.root.mkdir(parents=True, exist_ok=True)
        self.index = index
        self.storage = LocalStorage(tmp / "storage")
        self.base = base
        self.set = ResourceSet(name, f"{base}/{name}/resources/", str(self.root))
        self.publisher = Publisher(index, self.storage, base, **({"clock": clock} if clock else {}), **publisher)

    def put(self, rel: str, data: bytes, when: datetime, links=(), recorded: datetime | None = None) -> None:
        path = self.root / rel
        change = "updated" if path.exists() else "created"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        record_event(
            self.index,
            self.set,
            str(path),
            change,
            when,
            when,
            length=len(data),
            md5=hashlib.md5(data).hexdigest(),
            sha256=hashlib.sha256(data).hexdigest(),
            mime="text/plain",
            links=links,
            timestamp=recorded,
        )

    def delete(self, rel: str, when: datetime, recorded: datetime | None = None) -> None:
        (self.root / rel).unlink()
        record_event(self.index, self.set, rel, "deleted", None, when, timestamp=recorded)

    def publish(self) -> dict:
        return self.publisher.publish([self.set])[self.set.name]

    def state(self) -> dict:
        return json.loads(self.storage.read_bytes(f"_resourcesync/{self.set.name}/changelists.json"))


@pytest.fixture
def source(tmp_path, http_server):
    """A published source with an embedded (SQLite) index, served over HTTP on 127.0.0.1."""

    def make(name: str = "set1", index=None, **publisher) -> Source:
        holder = {}
        app = _LateApp(holder)
        base = http_server(app=app)
        src = Source(
            tmp_path,
            base,
            index or SqlResourceIndex(make_engine(f"sqlite:///{tmp_path}/index.sqlite3")),
            name,
            **publisher,
        )
        holder["app"] = ResourceSyncApp(src.storage, [src.set])
        return src

    return make


class _LateApp:
    """The server starts before the source exists (its URL is part of the documents)."""

    def __init__(self, holder):
        self.holder = holder

    def __call__(self, environ, start_response):
        return self.holder["app"](environ, start_response)


# -- the reference client ------------------------------------------------------------------------------

RESYNC_SYNC = Path(sys.executable).with_name("resync-sync")


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _resync(workdir: Path, *args: str) -> str:
    """Run ``resync-sync`` in ``workdir`` (where it keeps its state file); fail on any error it reports."""
    workdir.mkdir(exist_ok=True)
    done = subprocess.run([str(RESYNC_SYNC), *args], cwd=workdir, capture_output=True, text=True, timeout=60)
    output = done.stdout + done.stderr
    assert done.returncode == 0 and "Error" not in output, output
    return output


@pytest.fixture
def tree():
    """``tree(folder)`` -> {relative path: bytes} of every file below ``folder``."""
    return _tree


@pytest.fixture
def resync():
    """``resync(workdir, *args)`` runs the resync package's ``resync-sync`` client and returns its output."""
    return _resync


# -- fake Elasticsearch -------------------------------------------------------------------------------


def _ms(value: str) -> int:
    moment = datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    return (moment - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(milliseconds=1)


def _error(status: int, kind: str, reason: str, **extra) -> tuple[int, dict]:
    cause = {"type": kind, "reason": reason, **extra}
    return status, {"error": {"root_cause": [cause], **cause}, "status": status}


@dataclass
class FakeElasticsearch:
    """In-memory indices behind the ES REST API; ``requests`` holds (method, path, query, body)."""

    indices: dict[str, dict] = field(default_factory=dict)
    pits: dict[str, dict] = field(default_factory=dict)
    requests: list[tuple[str, str, dict, object]] = field(default_factory=list)
    failures: list[tuple[str, int, dict]] = field(default_factory=list)
    url: str = ""

    def fail(self, path_pattern: str, status: int, body: dict, times: int = 1) -> None:
        self.failures += [(path_pattern, status, body)] * times

    def __call__(self, environ, start_response):
        method, path = environ["REQUEST_METHOD"], environ["PATH_INFO"]
        query = {k: v[0] for k, v in parse_qs(environ.get("QUERY_STRING", "")).items()}
        raw = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0)).decode()
        if path.endswith("/_bulk"):
            body = [json.loads(line) for line in raw.splitlines() if line.strip()]
        else:
            body = json.loads(raw) if raw else None
        self.requests.append((method, path, query, body))
        failure = next((f for f in self.failures if re.search(f[0], path)), None)
        if failure:
            self.failures.remove(failure)
            status, payload = failure[1:]
        else:
            status, payload = self.handle(method, path, body)
        data = b"" if method == "HEAD" else json.dumps(payload).encode()
        reasons = {
            200: "OK",
            201: "Created",
            400: "Bad Request",
            404: "Not Found",
            429: "Too Many Requests",
            503: "Service Unavailable",
        }
        start_response(f"{status} {reasons.get(status, 'Error')}", [*ES_HEADERS, ("Content-Length", str(len(data)))])
        return [data]

    def handle(self, method: str, path: str, body):
        parts = path.strip("/").split("/")
        if parts == ["_bulk"]:
            return 200, self.bulk(body)
        if method == "HEAD" and len(parts) == 1:
            return (200 if parts[0] in self.indices else 404), {}
        if method == "PUT" and len(parts) == 1:
            if parts[0] in self.indices:
                return _error(
                    400, "resource_already_exists_exception", f"index [{parts[0]}/x] already exists", index=parts[0]
                )
            self.indices[parts[0]] = {"mappings": body["mappings"], "docs": {}}
            return 200, {"acknowledged": True, "shards_acknowledged": True, "index": parts[0]}
        if len(parts) == 2 and parts[1] == "_pit":
            pit = f"pit-{len(self.pits)}"
            self.pits[pit] = {"index": parts[0], "docs": copy.deepcopy(self.indices[parts[0]]["docs"])}
            return 200, {"id": pit}
        if parts == ["_pit"] and method == "DELETE":
            freed = 1 if self.pits.pop(body["id"], None) else 0
            return 200, {"succeeded": True, "num_freed": freed}
        if parts == ["_search"]:
            return 200, self.search(self.pits[body["pit"]["id"]]["docs"], body, pit=body["pit"]["id"])
        if len(parts) == 2 and parts[1] == "_search":
            return 200, self.search(self.indices[parts[0]]["docs"], body)
        if len(parts) == 2 and parts[1] == "_count":
            docs = [d for d in self.indices[parts[0]]["docs"].values() if _matches(d, body["query"])]
            return 200, {"count": len(docs), "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0}}
        if len(parts) == 2 and parts[1] == "_refresh":
            return 200, {"_shards": {"total": 2, "successful": 2, "failed": 0}}
        if len(parts) == 3 and parts[1] == "_doc" and method == "PUT":
            docs = self.indices[parts[0]]["docs"]
            result = "updated" if parts[2] in docs else "created"
            docs[parts[2]] = body
            shards = {"total": 2, "successful": 1, "failed": 0}
            answer = {"_index": parts[0], "_id": parts[2], "_version": 1, "result": result, "_shards": shards}
            return (201 if result == "created" else 200), {**answer, "_seq_no": 0, "_primary_term": 1}
        if len(parts) == 3 and parts[1] == "_doc":
            doc = self.indices[parts[0]]["docs"].get(parts[2])
            head = {"_index": parts[0], "_id": parts[2]}
            return (200, {**head, "found": True, "_source": doc}) if doc else (404, {**head, "found": False})
        return _error(400, "illegal_argument_exception", f"fake does not handle {method} {path}")

    def bulk(self, lines: list[dict]) -> dict:
        items, errors, i = [], False, 0
        while i < len(lines):
            ((op, meta),) = lines[i].items()
            docs = self.indices[meta["_index"]]["docs"]
            head = {"_index": meta["_index"], "_id": meta["_id"]}
            if op == "delete":
                found = docs.pop(meta["_id"], None) is not None
                items.append(
                    {op: {**head, "result": "deleted" if found else "not_found", "status": 200 if found else 404}}
                )
                i += 1
                continue
            source = lines[i + 1]
            i += 2
            if op == "create" and meta["_id"] in docs:
                errors = True
                items.append(
                    {
                        op: {
                            **head,
                            "status": 409,
                            "error": {
                                "type": "version_conflict_engine_exception",
                                "reason": f"[{meta['_id']}]: version conflict, document already exists "
                                "(current version [1])",
                            },
                        }
                    }
                )
                continue
            docs[meta["_id"]] = source
            items.append({op: {**head, "result": "created", "status": 201}})
        return {"took": 3, "errors": errors, "items": items}

    def search(self, docs: dict, body: dict, pit: str | None = None) -> dict:
        hits = [d for d in docs.values() if _matches(d, body["query"])]
        if "aggs" in body:
            aggs = {}
            for name, spec in body["aggs"].items():
                ((kind, conf),) = spec.items()
                values = [_ms(d[conf["field"]]) for d in hits]
                value = (min if kind == "min" else max)(values) if values else None
                aggs[name] = {"value": None if value is None else float(value)}
                if value is not None:
                    aggs[name]["value_as_string"] = datetime.fromtimestamp(value / 1000, timezone.utc).isoformat()
            return {
                "took": 1,
                "timed_out": False,
                "hits": {"total": {"value": len(hits), "relation": "eq"}, "max_score": None, "hits": []},
                "aggregations": aggs,
            }
        keys = [_sort_value_getter(s) for s in body["sort"]]
        ranked = sorted(((tuple(k(d) for k in keys), d) for d in hits), key=lambda pair: pair[0])
        if body.get("search_after"):
            after = tuple(body["search_after"])
            ranked = [pair for pair in ranked if pair[0] > after]
        page = ranked[: body["size"]]
        result = {
            "took": 1,
            "timed_out": False,
            "hits": {
                "max_score": None,
                "hits": [{"_index": "x", "_id": "x", "_score": None, "_source": d, "sort": list(s)} for s, d in page],
            },
        }
        if pit:
            result["pit_id"] = pit
        return result


def _matches(doc: dict, query: dict) -> bool:
    ((kind, spec),) = query.items()
    if kind == "term":
        ((name, value),) = spec.items()
        return doc[name] == value
    if kind == "range":
        ((name, bounds),) = spec.items()
        ops = {"gte": lambda a, b: a >= b, "gt": lambda a, b: a > b, "lt": lambda a, b: a < b}
        return all(ops[op](_ms(doc[name]), _ms(bound)) for op, bound in bounds.items())
    if kind == "bool":
        return all(_matches(doc, q) for q in spec["filter"])
    raise AssertionError(f"unexpected query {query}")


def _sort_value_getter(spec: dict):
    ((name, conf),) = spec.items()
    if isinstance(conf, dict) and "nested" in conf:
        outer, inner = name.split(".")
        return lambda d: d[outer][inner]
    if name in ("datetime", "listed", "timestamp"):
        return lambda d: _ms(d[name])
    return lambda d: d[name]


@pytest.fixture
def fake_es(http_server) -> FakeElasticsearch:
    fake = FakeElasticsearch()
    fake.url = http_server(app=fake)
    return fake


@pytest.fixture
def t0() -> datetime:
    return T0


@pytest.fixture
def fixed_clock():
    """A clock that advances one second per call, from 2026-01-06 12:00 UTC."""
    state = {"now": datetime(2026, 1, 6, 12, 0, tzinfo=timezone.utc)}

    def clock() -> datetime:
        state["now"] += timedelta(seconds=1)
        return state["now"]

    return SimpleNamespace(clock=clock, state=state)
