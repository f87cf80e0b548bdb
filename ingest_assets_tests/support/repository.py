"""Fakes at the HTTP boundary of the repository tests, as WSGI apps: a TemplateParameterIndex, a Fedora 6 server
(stateful: LDP resources, tombstones, ``fcr:tx``; for the faults and states a test must set up, which a real Fedora
cannot be made to produce on cue) and a MediaWiki ``api.php``."""

from __future__ import annotations

import itertools
import json
import threading
from datetime import datetime, timezone
from http import HTTPStatus
from urllib.parse import parse_qs, unquote

from lxml import etree

CONFLICT = b"Unable to complete operation. Resource is being modified in another transaction"
FIXED = ("Harvested", "Modified", "TemplateName", "BaseURL", "PageName")


def _stamp(value: str) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None  # a broken record is served as is: the client must cope
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def _canon(name: str) -> str:
    return " ".join(name.replace("_", " ").split()).casefold()


class TemplateIndexApp:
    """WSGI TemplateParameterIndex over a list of record dicts; logs every query; can hold one query."""

    def __init__(self, records: list[dict[str, str]] | None = None):
        self.records = list(records or [])
        self.queries: list[dict[str, str]] = []
        self.hold_value: str | None = None  # a value1 whose query waits for `release`
        self.reached = threading.Event()
        self.release = threading.Event()

    def __call__(self, environ, start_response):
        query = {k: v[0] for k, v in parse_qs(environ.get("QUERY_STRING", "")).items()}
        self.queries.append(query)
        if self.hold_value is not None and query.get("value1") == self.hold_value:
            self.reached.set()
            self.release.wait(30)
        root = etree.Element("TemplateParameterIndex")
        wanted = {_canon(n) for n in query["parameternames"].split(";")} if "parameternames" in query else None
        for record in self.records:
            if _canon(record["TemplateName"]) != _canon(query.get("template", "")):
                continue
            modified = _stamp(record["Modified"])
            if modified and "from" in query and modified <= _stamp(query["from"]):
                continue
            if modified and "to" in query and modified > _stamp(query["to"]):
                continue
            if "parameter1" in query:
                values = {_canon(k): v for k, v in record.items()}
                if values.get(_canon(query["parameter1"])) != query.get("value1"):
                    continue
            element = etree.SubElement(root, "record")
            for name, value in record.items():
                if name in FIXED or wanted is None or _canon(name) in wanted:
                    etree.SubElement(element, name.replace(" ", "_")).text = value
        body = etree.tostring(root, xml_declaration=True, encoding="utf-8")
        start_response("200 OK", [("Content-Type", "application/xml"), ("Content-Length", str(len(body)))])
        return [body]

    def queries_for(self, **match) -> list[dict[str, str]]:
        return [q for q in self.queries if all(q.get(k) == v for k, v in match.items())]


class FakeFedora:
    """Stateful Fedora 6 fake: LDP resources, tombstones, fcr:tx with Atomic-ID; logs raw requests."""

    def __init__(self):
        self.base = ""
        self.resources: dict[str, dict] = {}
        self.tombstones: set[str] = set()
        self.transactions: dict[str, dict] = {}
        self.locks: dict[str, str] = {}
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.inject: dict[tuple[str, str], int] = {}  # (method, raw path) -> status to answer once
        self.etags = itertools.count(1)
        self.lock = threading.Lock()

    def expire(self, tx: str) -> None:
        """What Fedora does to a transaction nobody commits (Atomic-Expires passed): roll it back."""
        with self.lock:
            self.transactions[tx]["open"] = False
            for key in [k for k, v in self.locks.items() if v == tx]:
                del self.locks[key]

    def view(self, tx: str | None):
        if tx is None:
            return self.resources, self.tombstones
        state = self.transactions[tx]
        return state["resources"], state["tombstones"]

    def __call__(self, environ, start_response):
        """WSGI: the request as Fedora sees it (the raw, %-escaped target; the headers the client sends)."""
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        keep = ("Atomic-ID", "If-Match", "Link", "Content-Type", "Prefer", "Accept")
        sent = {name: environ.get("CONTENT_TYPE" if name == "Content-Type" else "HTTP_" + name.upper().replace("-", "_"))
                for name in keep}
        headers = {name: value for name, value in sent.items() if value}
        with self.lock:
            status, out, payload = self.handle(environ["REQUEST_METHOD"], environ["RAW_URI"], headers, body)
        start_response(f"{status} {HTTPStatus(status).phrase}",
                       [*out.items(), ("Content-Length", str(len(payload)))])
        return [b"" if environ["REQUEST_METHOD"] == "HEAD" else payload]

    def handle(self, method: str, raw_path: str, headers: dict[str, str], body: bytes):
        self.requests.append((method, raw_path, headers))
        if (method, raw_path) in self.inject:
            status = self.inject.pop((method, raw_path))
            texts = {409: CONFLICT,
                     412: b"", 500: b"Internal Server Error"}
            return status, {"Content-Type": "text/plain"}, texts.get(status, b"")
        path = unquote(raw_path)
        if path == "/rest/fcr:tx" and method == "POST":
            tx = f"{self.base}/rest/fcr:tx/{len(self.transactions) + 1}"
            self.transactions[tx] = {"resources": {k: dict(v) for k, v in self.resources.items()},
                                     "tombstones": set(self.tombstones), "open": True, "touched": set()}
            return 201, {"Location": tx, "Atomic-Expires": "Sun, 22 Nov 2026 03:00:00 GMT"}, b""
        if path.startswith("/rest/fcr:tx/"):
            tx = f"{self.base}{path}"
            state = self.transactions.get(tx)
            if state is None:
                return 404, {}, b""
            if not state["open"]:
                return 410, {}, b""
            if method == "PUT":
                self.resources, self.tombstones = state["resources"], state["tombstones"]
            if method in ("PUT", "DELETE"):
                state["open"] = False
                for key in [k for k, v in self.locks.items() if v == tx]:
                    del self.locks[key]
            return 204, {"Atomic-Expires": "Sun, 22 Nov 2026 03:00:00 GMT"}, b""
        tx = headers.get("Atomic-ID")
        if tx is not None and not self.transactions.get(tx, {}).get("open"):
            return 409, {}, b"Transaction is closed"
        resources, tombstones = self.view(tx)
        target = path.removesuffix("/fcr:tombstone")
        if method in ("PUT", "DELETE"):
            owner = self.locks.get(target)
            if owner is not None and owner != tx:
                return 409, {"Content-Type": "text/plain"}, CONFLICT
            if tx is not None:
                self.locks[target] = tx
        gone = {"Link": f'<{self.base}{raw_path}/fcr:tombstone>; rel="hasTombstone"'}
        if path.endswith("/fcr:tombstone"):
            if method != "DELETE":
                return 405, {}, b""
            if target not in tombstones:
                return 404, {}, b""
            tombstones.discard(target)
            return 204, {}, b""
        if target in tombstones:
            return 410, gone, b"Discovered tombstone resource at " + target.encode()
        found = resources.get(target)
        if method in ("GET", "HEAD"):
            if found is None:
                return 404, {}, b""
            payload = found["body"] if method == "GET" else b""
            return 200, {"ETag": found["etag"], "Content-Type": found["type"]}, payload
        if method == "PUT":
            if found is not None and headers.get("If-Match") not in (None, "*", found["etag"]):
                return 412, {}, b""
            resources[target] = {"etag": f'W/"{next(self.etags)}"', "body": body,
                                 "type": headers.get("Content-Type", ""), "link": headers.get("Link", "")}
            return (204 if found else 201), {"ETag": resources[target]["etag"]}, b""
        if method == "DELETE":
            if found is None:
                return 404, {}, b""
            for key in [k for k in resources if k == target or k.startswith(target + "/")]:
                del resources[key]
            tombstones.add(target)
            return 204, {}, b""
        return 405, {}, b""


THALICTRUM = {
    "Harvested": "2010-01-25 00:07:43",
    "Modified": "2010-01-24 00:12:39",
    "TemplateName": "Key Start",
    "BaseURL": "http://www.keytonature.eu/wiki/",
    "PageName": "Thalictrum in Mitteleuropa",
    "title": "Thalictrum in Mitteleuropa",
    "creators": "Ralf Hand",
    "description": '"*" = siehe separate Schlüssel für Unterarten',
    "audience": "Experten, Interessierte",
    "collaboration_limited_to": "Ralf Hand",
}


class MediaWikiApiApp:
    """WSGI ``api.php``: generator=embeddedin + revisions (with continuation), tokens, login, edit."""

    def __init__(self, pages, *, user: str = "Bot@ingest", password: str = "secret"):
        self.pages = list(pages)
        self.user, self.password = user, password
        self.edits: dict[str, str] = {}
        self.queries: list[dict[str, str]] = []
        self.logged_in = False

    def __call__(self, environ, start_response):
        query = {k: v[0] for k, v in parse_qs(environ.get("QUERY_STRING", "")).items()}
        if environ["REQUEST_METHOD"] == "POST":
            length = int(environ.get("CONTENT_LENGTH") or 0)
            query.update({k: v[0] for k, v in parse_qs(environ["wsgi.input"].read(length).decode()).items()})
        self.queries.append(query)
        body = json.dumps(self.answer(query)).encode()
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
        return [body]

    def answer(self, query):
        action = query.get("action")
        if action == "query" and query.get("meta") == "tokens":
            kind = query["type"]
            return {"query": {"tokens": {f"{kind}token": f"{kind}-token+\\\\"}}}
        if action == "login":
            ok = (query.get("lgname"), query.get("lgpassword"), query.get("lgtoken")) == \
                (self.user, self.password, "login-token+\\\\")
            self.logged_in = ok
            return {"login": {"result": "Success" if ok else "Failed", "reason": "wrong password"}}
        if action == "edit":
            if not self.logged_in or query.get("token") != "csrf-token+\\\\":
                return {"error": {"code": "badtoken", "info": "Invalid CSRF token."}}
            self.edits[query["title"]] = query["text"]
            return {"edit": {"result": "Success", "title": query["title"]}}
        template = query["geititle"].removeprefix("Template:")
        names = {template, template.replace(" ", "_"), template[:1].lower() + template[1:]}
        embedding = [p for p in self.pages if any("{{" + n in p.text for n in names)]
        start, size = int(query.get("geicontinue", "0")), int(query.get("geilimit", "50"))
        data = {"query": {"pages": [
            {"pageid": i, "ns": p.namespace, "title": p.title,
             "revisions": [{"revid": p.revision_id, "timestamp": p.timestamp.isoformat().replace("+00:00", "Z"),
                            "slots": {"main": {"contentmodel": "wikitext", "content": p.text}}}]}
            for i, p in enumerate(embedding[start:start + size], start)]}}
        if start + size < len(embedding):
            data["continue"] = {"geicontinue": str(start + size), "continue": "gcontinue||"}
        return data
