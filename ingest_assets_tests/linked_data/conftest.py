"""Linked-data fixtures: a provider web site serving the shared fixture files in place, and both stores
(embedded Oxigraph, and a real ``oxigraph serve`` process on 127.0.0.1)."""

from __future__ import annotations

import gzip
import mimetypes
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from wsgiref.simple_server import WSGIRequestHandler, make_server

import pytest
import requests

from ingest_assets.core.http import HttpClient
from ingest_assets.linked_data.graphs import ProviderGraphs
from ingest_assets.linked_data.oxigraph import OxigraphStore
from ingest_assets.linked_data.sparql_endpoint import SparqlEndpointStore
from ingest_assets.linked_data.triplestore import TripleStore
from ingest_assets_tests.support import free_port, stop_group
from ingest_assets_tests.support.linked_data import FULL

CONTENT_TYPES = {".ttl": "text/turtle", ".nt": "application/n-triples", ".rdf": "application/rdf+xml"}


class ProviderSite:
    """WSGI app. ``/f/<tag>/<path>`` serves ``<fixtures>/void/<path>`` read in place (``<tag>`` only orders
    URLs; ``.gz`` appended means gzip on the fly); other paths serve documents a test ``put``.
    ``requested`` lists the paths asked for."""

    def __init__(self, void_fixtures: Path):
        self.root = void_fixtures
        self.documents: dict[str, tuple[bytes, str | None]] = {}
        self.requested: list[str] = []
        self.base = ""

    def __call__(self, environ, start_response):
        path = environ["PATH_INFO"]
        self.requested.append(path)
        found = self.documents.get(path)
        if found is None and path.startswith("/f/"):
            relative = path.split("/", 3)[3]
            compressed = relative.endswith(".gz")
            file = (self.root / relative.removesuffix(".gz")).resolve()
            if file.is_relative_to(self.root) and file.is_file():
                body = file.read_bytes()
                found = (gzip.compress(body), "application/gzip") if compressed else (
                    body, CONTENT_TYPES.get(file.suffix) or mimetypes.guess_type(file.name)[0])
        if found is None:
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"not found"]
        body, content_type = found
        start_response("200 OK", [("Content-Type", content_type or "application/octet-stream")])
        return [body]

    def fixture(self, relative: str, tag: str = "1") -> str:
        return f"{self.base}/f/{tag}/{relative}"

    def put(self, path: str, body: str | bytes, content_type: str | None = "text/turtle") -> str:
        self.documents[path] = (body.encode() if isinstance(body, str) else body, content_type)
        return self.base + path

    def void(self, path: str, modified: str, dumps: list[str], feature: str = FULL) -> str:
        """Publish a GeoLink VoID (``modified`` is a Turtle literal, e.g. ``"2015-11-05"^^xsd:date``)."""
        text = (
            "@prefix void: <http://rdfs.org/ns/void#> .\n"
            "@prefix dcterms: <http://purl.org/dc/terms/> .\n"
            "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
            f"<#dataset> a void:Dataset ;\n  void:feature <{feature}> , <http://www.w3.org/ns/formats/Turtle> ;\n"
            f"  dcterms:modified {modified} ;\n"
            f"  void:dataDump {', '.join(f'<{d}>' for d in dumps)} .\n"
        )
        return self.put(path, text)


class _Quiet(WSGIRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="session")
def void_fixtures(shared_fixtures) -> Path:
    return (shared_fixtures / "void").resolve()


@pytest.fixture(scope="session")
def site_server(void_fixtures) -> Iterator[ProviderSite]:
    """One site for the session (the shared ``http_server`` is per test and takes 0.5 s to stop)."""
    app = ProviderSite(void_fixtures)
    server = make_server("127.0.0.1", 0, app, handler_class=_Quiet)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    app.base = f"http://127.0.0.1:{server.server_address[1]}"
    yield app
    server.shutdown()
    server.server_close()


@pytest.fixture
def site(site_server) -> ProviderSite:
    site_server.documents.clear()
    site_server.requested.clear()
    return site_server


@pytest.fixture
def http() -> HttpClient:
    return HttpClient(allow_private=True, retries=0, timeout=(2, 10))


@pytest.fixture(scope="session")
def oxigraph_server(tmp_path_factory) -> str:
    """``oxigraph serve`` (the locked PyPI package) on 127.0.0.1; stopped by process group."""
    binary = Path(sys.executable).parent / "oxigraph"
    if not binary.exists():
        pytest.fail(f"{binary} missing: run uv sync --locked (test group)")
    location = tmp_path_factory.mktemp("oxigraph-server")
    port = free_port()
    log = (location.parent / "oxigraph-serve.log").open("wb")
    process = subprocess.Popen(
        [str(binary), "serve", "--location", str(location / "data"), "--bind", f"127.0.0.1:{port}"],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if requests.get(f"{url}/query", params={"query": "ASK {}"}, timeout=1).ok:
                    break
            except requests.ConnectionError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"oxigraph serve did not start (see {log.name})")
            time.sleep(0.1)
        yield url
    finally:
        stop_group(process, timeout=10)
        log.close()


@dataclass
class StoreCase:
    store: TripleStore
    base: str

    def graphs(self, provider: str) -> ProviderGraphs:
        return ProviderGraphs(provider, self.base)

    def current_triples(self, provider: str) -> set[str]:
        current = self.graphs(provider).read_state(self.store).current
        return {str(t) for t in self.store.triples(current)} if current else set()


@pytest.fixture(params=["embedded", "endpoint", "fuseki"])
def store_case(request, tmp_path) -> StoreCase:
    """Each backend: embedded Oxigraph, ``oxigraph serve`` and the live Fuseki (named ``fuseki+<dataset URL>``,
    bulk loads cut into requests of at most 4 KB so that every load is a bounded one). Servers are shared, so
    each test gets its own graph base."""
    if request.param == "embedded":
        store: TripleStore = OxigraphStore(tmp_path / "oxigraph", writable=True)
    elif request.param == "endpoint":
        store = SparqlEndpointStore.for_server(request.getfixturevalue("oxigraph_server"))
    else:
        fuseki = request.getfixturevalue("fuseki_server")
        store = SparqlEndpointStore.for_server(f"fuseki+{fuseki.url}", max_request_bytes=4096)
    with store:
        yield StoreCase(store, f"urn:x-test:{uuid.uuid4().hex}:")
