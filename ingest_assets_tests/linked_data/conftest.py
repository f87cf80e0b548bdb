"""Linked-data fixtures: a provider web site serving the shared fixture files in place, and both stores
(embedded Oxigraph, and a real ``oxigraph serve`` process on 127.0.0.1)."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from ingest_assets.core.http import HttpClient
from ingest_assets.core.wsgi import WsgiServer
from ingest_assets.linked_data.oxigraph import OxigraphStore
from ingest_assets.linked_data.sparql_endpoint import SparqlEndpointStore
from ingest_assets.linked_data.triplestore import TripleStore
from ingest_assets_tests.support import free_port, stop_group
from ingest_assets_tests.support.linked_data import ProviderSite, StoreCase


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
