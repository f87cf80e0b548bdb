"""Linked-data fixtures: a provider web site serving the shared fixture files in place, and both stores
(embedded Oxigraph, and a real ``oxigraph serve`` process on 127.0.0.1)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from ingest_assets.core.http import HttpClient
from ingest_assets.core.wsgi import WsgiServer
from ingest_assets.linked_data.oxigraph import OxigraphStore
from ingest_assets.linked_data.sparql_endpoint import SparqlEndpointStore
from ingest_assets.linked_data.triplestore import TripleStore
from ingest_assets_tests.support import stop_pid
from ingest_assets_tests.support.once import once_per_run
from ingest_assets_tests.support.linked_data import ProviderSite, StoreCase
from ingest_assets_tests.support.oxigraph import OxigraphProcess


@pytest.fixture(scope="session")
def void_fixtures(shared_fixtures) -> Path:
    return (shared_fixtures / "void").resolve()


@pytest.fixture(scope="session")
def site_server(void_fixtures) -> Iterator[ProviderSite]:
    """One site for the session (its documents are cleared per test by ``site``)."""
    app = ProviderSite(void_fixtures)
    with WsgiServer() as server:
        app.base = server.url
        server.start(app)
        yield app


@pytest.fixture
def site(site_server) -> ProviderSite:
    site_server.documents.clear()
    site_server.requested.clear()
    return site_server


@pytest.fixture
def http() -> HttpClient:
    return HttpClient(allow_private=True, retries=0, timeout=(2, 10))


def _start_oxigraph(folder: Path) -> dict:
    server = OxigraphProcess(folder / "data")
    server.start()
    return {"url": server.url, "pid": server.process.pid}


@pytest.fixture(scope="session")
def oxigraph_server(tmp_path_factory) -> Iterator[str]:
    """``oxigraph serve`` (:class:`support.oxigraph.OxigraphProcess`) on 127.0.0.1, one for the run (each test
    writes graphs of its own); stopped by process group."""
    with once_per_run("oxigraph", tmp_path_factory, _start_oxigraph, lambda server: stop_pid(server["pid"], timeout=10)) as server:
        yield server["url"]


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
