"""Linked-data harvest (GeoLink): VoID-driven imports of RDF dumps into per-provider named graphs.

:func:`open_triple_store` opens the triple store backend ``INGEST_TRIPLESTORE`` names."""

from __future__ import annotations

from ingest_assets.core.settings import SPARQL_MAX_REQUEST_BYTES
from ingest_assets.linked_data.triplestore import TripleStore


def open_triple_store(target: str, *, writable: bool, urls: tuple[str, str, str] | None = None,
                      timeout: tuple[float, float] = (5, 600),
                      max_request_bytes: int = SPARQL_MAX_REQUEST_BYTES) -> TripleStore:
    """``target`` a directory -> embedded Oxigraph: a snapshot of the moment, or with ``writable`` the writer, which
    holds the store's lock until closed. Else a SPARQL server: its base URL, prefixed with its product when its paths
    are not Oxigraph's (``fuseki+http://host:3030/ds``; see ``sparql_endpoint.LAYOUTS``), or any server through its
    three ``urls`` (query, update, Graph Store); bulk loads go in requests of at most ``max_request_bytes``. A new
    handle per call, for a ``with`` block. Only the chosen backend's library is imported."""
    if "://" not in target:
        from ingest_assets.linked_data.oxigraph import OxigraphStore

        return OxigraphStore(target, writable=writable)
    from ingest_assets.linked_data.sparql_endpoint import SparqlEndpointStore

    options = {"timeout": timeout, "max_request_bytes": max_request_bytes}
    if urls:
        return SparqlEndpointStore(*urls, **options)
    return SparqlEndpointStore.for_server(target, **options)
