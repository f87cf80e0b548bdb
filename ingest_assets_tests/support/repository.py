"""The TemplateParameterIndex the repository ingest reads, as a WSGI app over record dicts (a fake: no public server
exists to run; it can hold one query so a test can act while the ingest waits)."""

from __future__ import annotations

import threading
from datetime import datetime, timezone
from urllib.parse import parse_qs

from lxml import etree

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
