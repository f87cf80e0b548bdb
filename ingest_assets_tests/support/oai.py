"""OAI-PMH test servers as WSGI apps: a real OAI-PMH server (``oaipmh`` 4.0.0) over real fixture records, whose
answers a test can break on cue (statuses, cut pages, expired tokens: faults a real provider does not produce on
demand), and a replay server answering exact queries with fixture files read in place."""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from urllib.parse import parse_qs

from lxml import etree
from oaipmh import common, error
from oaipmh.metadata import MetadataRegistry
from oaipmh.server import Server, decodeResumptionToken

OAI = "http://www.openarchives.org/OAI/2.0/"
NS = {"oai": OAI}


class ReplayApp:
    """Answers a request whose query equals a route's query with that route's file (read at request time)."""

    def __init__(self):
        self.routes: list[tuple[dict, Path, str, Callable[[bytes], bytes] | None]] = []
        self.requests: list[dict] = []

    def add(self, query: dict, path: Path, *, content_type="text/xml; charset=utf-8", transform=None) -> None:
        self.routes.append((query, path, content_type, transform))

    def __call__(self, environ, start_response):
        query = {k: v[0] for k, v in parse_qs(environ["QUERY_STRING"], keep_blank_values=True).items()}
        self.requests.append(query)
        for route, path, content_type, transform in self.routes:
            if route == query:
                body = path.read_bytes()
                body = transform(body) if transform else body
                start_response("200 OK", [("Content-Type", content_type), ("Content-Length", str(len(body)))])
                return [body]
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"no such route"]


Item = tuple[common.Header, "common.Metadata | None", "str | None"]  # header, metadata, its prefix (None: deleted)


class Repository:
    """An ``oaipmh`` IOAI repository over ``items``, each answered in its own metadata prefix (a deleted record in
    every prefix), filtered by set and datestamp."""

    def __init__(self, items: list[Item], granularity: str):
        self.items, self.granularity = items, granularity
        self.base_url = ""

    @property
    def prefixes(self) -> set[str]:
        return {prefix for _h, _m, prefix in self.items if prefix}

    def identify(self):
        return common.Identify(
            "Fixture repository", self.base_url, "2.0", ["admin@example.org"], datetime(2001, 1, 1),
            "persistent", self.granularity, ["identity"],
        )

    def listSets(self):
        specs = dict.fromkeys(spec for header, _m, _p in self.items for spec in header.setSpec())
        return [(spec, f"Set {spec}", None) for spec in specs]

    def listRecords(self, metadataPrefix, set=None, from_=None, until=None):
        if metadataPrefix not in self.prefixes:
            raise error.CannotDisseminateFormatError(metadataPrefix)
        return [
            (header, metadata, None)
            for header, metadata, prefix in self.items
            if (prefix in (None, metadataPrefix))
            and (set is None or set in header.setSpec())
            and (from_ is None or header.datestamp() >= from_)
            and (until is None or header.datestamp() <= until)
        ]

    def expected_ids(self, prefix: str, *, set=None, day: int | None = None) -> list[str]:
        return [
            h.identifier()
            for h, _m, p in self.items
            if p in (None, prefix) and (set is None or set in h.setSpec()) and (day is None or h.datestamp().day == day)
        ]


class FixtureRepository(Repository):
    """Real records: the 10 MODS records of Harvard's page (set ``botanicals``), the 7 oai_dc records of Zenodo's
    page and Erasmus' deleted record. Their datestamps are assigned here (the originals are not all ISO 8601):
    record i of a page gets 2024-03-(1 + i % 3) 12:i:00, the deleted record 2024-03-02 08:00:00."""

    def __init__(self, oai_fixtures: Path, granularity: str):
        items: list[Item] = []
        for name, prefix in (("harvard-librarycloud-listrecords-mods-resumption.xml", "mods"),
                             ("zenodo-listrecords-oai_dc.xml", "oai_dc")):
            root = etree.parse(str(oai_fixtures / name)).getroot()
            for i, record in enumerate(root.iterfind("oai:ListRecords/oai:record", NS)):
                header = record.find("oai:header", NS)
                sets = [s.text for s in header.iterfind("oai:setSpec", NS)] or ["botanicals"]
                stamp = datetime(2024, 3, 1 + i % 3, 12, i)
                identifier = header.findtext("oai:identifier", namespaces=NS)
                metadata = common.Metadata(record.find("oai:metadata", NS)[0], {})
                items.append((common.Header(None, identifier, stamp, sets, False), metadata, prefix))
        deleted = etree.parse(str(oai_fixtures / "erasmus-getrecord-deleted.xml")).getroot().find(".//oai:header", NS)
        sets = [s.text for s in deleted.iterfind("oai:setSpec", NS)]
        identifier = deleted.findtext("oai:identifier", namespaces=NS)
        items.append((common.Header(None, identifier, datetime(2024, 3, 2, 8), sets, True), None, None))
        super().__init__(items, granularity)


def hub_repository(records: list[tuple[str, etree._Element | None, list[str]]], prefix: str) -> Repository:
    """One hub's records in ``prefix``: (identifier, metadata element, or None for a deleted record, sets), the
    n-th datestamped 2026-01-(1 + n % 28)."""
    items: list[Item] = []
    for n, (identifier, metadata, sets) in enumerate(records):
        header = common.Header(None, identifier, datetime(2026, 1, 1 + n % 28), sets, metadata is None)
        items.append((header, None if metadata is None else common.Metadata(metadata, {}),
                      None if metadata is None else prefix))
    return Repository(items, "YYYY-MM-DD")


class OaiServerApp:
    """WSGI front of the oaipmh server. ``before(query)`` may return an HTTP status to answer with, ``"drop"``
    (the page is cut short: its Content-Length promises more than is sent before the connection closes),
    or a (changed) query - the way tests expire tokens or break pages; ``requests`` logs every query."""

    def __init__(self, repository: Repository, batch_size: int):
        registry = MetadataRegistry()
        for prefix in repository.prefixes:
            registry.registerWriter(prefix, lambda element, metadata: element.append(copy.deepcopy(metadata.element())))
        self.repository = repository
        self.server = Server(repository, registry, resumption_batch_size=batch_size)
        self.requests: list[dict] = []
        self.before: Callable[[dict], dict | int] | None = None

    @staticmethod
    def cursor(query: dict) -> int | None:
        token = query.get("resumptionToken")
        return decodeResumptionToken(token)[1] if token and token != "expired" else None

    def __call__(self, environ, start_response):
        query = {k: v[0] for k, v in parse_qs(environ["QUERY_STRING"], keep_blank_values=True).items()}
        self.requests.append(query)
        outcome = self.before(dict(query)) if self.before else query
        if isinstance(outcome, int):
            start_response(f"{outcome} Injected", [("Content-Type", "text/plain")])
            return [b"injected failure"]
        body = self.server.handleRequest(query if outcome == "drop" else outcome)
        length = len(body)
        if outcome == "drop":
            body = body[: length // 2]
        start_response("200 OK", [("Content-Type", "text/xml; charset=utf-8"), ("Content-Length", str(length))])
        return [body]
