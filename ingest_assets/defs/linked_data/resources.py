"""The triple store resource: embedded Oxigraph on disk (default) or a SPARQL 1.1 endpoint."""

from __future__ import annotations

from typing import TYPE_CHECKING

import dagster as dg

from ingest_assets.linked_data.graphs import DEFAULT_BASE, ProviderGraphs

if TYPE_CHECKING:
    from ingest_assets.linked_data.triplestore import TripleStore


class TripleStoreResource(dg.ConfigurableResource):
    """``location``: a directory (embedded Oxigraph) or an ``http(s)://`` SPARQL server base URL.

    For a server, the Oxigraph layout (``/query``, ``/update``, ``/store``) is assumed unless the three
    URLs are given (e.g. Virtuoso: ``/sparql``, ``/sparql``, ``/sparql-graph-crud``).
    """

    location: str
    query_url: str = ""
    update_url: str = ""
    graph_store_url: str = ""
    graph_base: str = DEFAULT_BASE

    @property
    def is_endpoint(self) -> bool:
        return self.location.startswith(("http://", "https://"))

    def get_client(self, *, writable: bool, timeout: tuple[float, float] = (5, 600)) -> TripleStore:
        """A new store handle per call, for a ``with`` block (not kept: an embedded reader is a snapshot of the
        moment, the embedded writer holds the store's lock until closed)."""
        if not self.is_endpoint:
            from ingest_assets.linked_data.oxigraph import OxigraphStore

            return OxigraphStore(self.location, writable=writable)
        from ingest_assets.linked_data.sparql_endpoint import SparqlEndpointStore

        if self.query_url and self.update_url and self.graph_store_url:
            return SparqlEndpointStore(self.query_url, self.update_url, self.graph_store_url, timeout=timeout)
        return SparqlEndpointStore.for_oxigraph(self.location, timeout=timeout)

    def graphs(self, provider: str) -> ProviderGraphs:
        return ProviderGraphs(provider, self.graph_base)
