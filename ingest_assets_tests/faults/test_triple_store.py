"""``oxigraph serve`` killed (SIGKILL) while a provider's new version is being loaded into it: the import fails with a
typed error naming the provider, the provider's old graph is whole when the server is back, and the rerun is exact
(the half-loaded version graph dropped by cleanup, recorded before the load began)."""

from __future__ import annotations

import threading
import time

import pytest

from ingest_assets.core.errors import IngestError
from ingest_assets.core.http import HttpClient
from ingest_assets.demo.site import lod_dump, lod_void
from ingest_assets.linked_data.graphs import ProviderGraphs
from ingest_assets.linked_data.importer import ProviderSource, cleanup, import_update
from ingest_assets.linked_data.sparql_endpoint import SparqlEndpointStore
from ingest_assets_tests.support.faults import FaultProxy

NEW_TRIPLES = 100_000


def _graphs(store: SparqlEndpointStore) -> set[str]:
    return {row["g"].value for row in store.select("SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }")}


def test_oxigraph_killed_mid_import_keeps_the_old_graph_and_the_rerun_is_exact(oxigraph, http_server, figures):
    versions = {"modified": "2026-01-10", "dump": b""}

    def site(environ, start_response):
        if environ["PATH_INFO"] == "/lod/void.ttl":
            body = lod_void(base).replace(b"2026-01-10", versions["modified"].encode())
        else:
            body = versions["dump"] or lod_dump(base)
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
        return [body]

    base = http_server(app=site)
    source, graphs = ProviderSource("lod", f"{base}/lod/void.ttl", allow_private=True), ProviderGraphs("lod")
    http = HttpClient(allow_private=True)
    store = SparqlEndpointStore.for_server(oxigraph.url)
    assert import_update(source, store, http, graphs).strategy == "replace"
    old = graphs.read_state(store).current
    old_triples = {str(t) for t in store.triples(old)}
    assert len(old_triples) == 29

    versions["modified"] = "2026-02-01"
    versions["dump"] = "".join(f"<http://x.example/s{n}> <http://x.example/p> \"v{n}\" .\n" for n in range(NEW_TRIPLES)).encode()
    killed = threading.Event()

    def kill_during_the_load(number, method, path, headers):
        if method == "POST" and path.startswith("/store") and not killed.is_set():
            killed.set()
            threading.Timer(0.5, oxigraph.kill).start()  # the body is on its way to the server then
        return None

    proxy = FaultProxy(oxigraph.url, kill_during_the_load)
    try:
        with pytest.raises(IngestError) as caught:
            import_update(source, SparqlEndpointStore.for_server(proxy.url), http, graphs)
    finally:
        proxy.close()
    assert killed.is_set() and oxigraph.process.poll() is not None
    assert caught.value.provider == "lod" and "while applying the update to the triple store" in str(caught.value)
    assert caught.value.file.startswith(proxy.url) and caught.value.retryable

    restart_seconds = oxigraph.start()
    state = graphs.read_state(store)
    assert state.current == old and {str(t) for t in store.triples(old)} == old_triples  # the old version, whole
    assert len(state.discard) == 1  # the killed import's version, recorded before its load began

    began = time.monotonic()
    rerun = import_update(source, store, http, graphs)
    dropped = cleanup(store, graphs)
    rerun_seconds = time.monotonic() - began
    assert rerun.strategy == "replace" and store.count(graphs.read_state(store).current) == NEW_TRIPLES
    assert state.discard[0] in dropped and old in dropped
    assert _graphs(store) == {graphs.meta, graphs.read_state(store).current}  # nothing half-loaded left
    figures(restart_seconds=round(restart_seconds, 2), rerun_import_seconds=round(rerun_seconds, 1), triples=NEW_TRIPLES)
