"""The triple store resource: embedded Oxigraph on disk (default) or a SPARQL 1.1 endpoint."""

from __future__ import annotations

import dagster as dg

from ingest_assets.core.settings import SPARQL_MAX_REQUEST_BYTES, Settings
from ingest_assets.linked_data import TripleStore, open_triple_store
from ingest_assets.linked_data.graphs import DEFAULT_BASE, ProviderGraphs


class TripleStoreResource(dg.ConfigurableResource):
    """``location``: a directory (embedded Oxigraph) or a SPARQL server: its base URL, prefixed with its product
    when its paths are not Oxigraph's (``fuseki+http://host:3030/ds``; see ``sparql_endpoint.LAYOUTS``), or any
    server through the three URLs (``query_url``, ``update_url``, ``graph_store_url``). Bulk loads are sent in
    requests of at most ``max_request_bytes``.
    """

    location: str
    query_url: str = ""
    update_url: str = ""
    graph_store_url: str = ""
    max_request_bytes: int = SPARQL_MAX_REQUEST_BYTES
    graph_base: str = DEFAULT_BASE

    @classmethod
    def from_settings(cls, settings: Settings) -> "TripleStoreResource":
        query, update, graph_store = settings.sparql_urls or ("", "", "")
        return cls(location=settings.triplestore, query_url=query, update_url=update, graph_store_url=graph_store,
                   max_request_bytes=settings.sparql_max_request_bytes)

    def get_client(self, *, writable: bool, timeout: tuple[float, float] = (5, 600)) -> TripleStore:
        """A new store handle per call, for a ``with`` block (not kept: an embedded reader is a snapshot of the
        moment, the embedded writer holds the store's lock until closed)."""
        urls = (self.query_url, self.update_url, self.graph_store_url)
        return open_triple_store(self.location, writable=writable, urls=urls if all(urls) else None, timeout=timeout,
                                 max_request_bytes=self.max_request_bytes)

    def graphs(self, provider: str) -> ProviderGraphs:
        return ProviderGraphs(provider, self.graph_base)
