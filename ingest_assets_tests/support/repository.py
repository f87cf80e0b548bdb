"""Fakes at the HTTP boundary of the repository tests, as WSGI apps, for services with no distribution to run: a
TemplateParameterIndex and a MediaWiki ``api.php`` (Fedora is the live server of :mod:`.servers.fedora`)."""

from __future__ import annotations

import json
import threading
from datetime import datetime, timezone
from urllib.parse import parse_qs

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
