"""Indexing: IndexRecord (MAP4_0) documents and the search index they go to (Elasticsearch or embedded).

    index = open_search_index(settings.search)
    stats = index.full_build("dpla-map4", (index_record(r) for r in map_records))
    index.update_alias("dpla-map4", add=[new], remove=[old])   # one atomic flip naming what it replaces

A full harvest's absences (what the provider's previous state held and it no longer does) are index deletions
too: :mod:`.absences`.
"""

from __future__ import annotations

import os

from ingest_assets.core.settings import is_search_server
from ingest_assets.records.indexing.documents import deletion_record, index_record
from ingest_assets.records.indexing.embedded_index import EmbeddedSearchIndex
from ingest_assets.records.indexing.results import IndexBuildRefused, IndexStats, Reconciliation
from ingest_assets.records.indexing.search_index import AliasChanged, IndexHealth, PhysicalIndex, SearchIndex

DEFAULT_ALIAS = "dpla-map4"

__all__ = [
    "DEFAULT_ALIAS", "AliasChanged", "EmbeddedSearchIndex", "IndexBuildRefused", "IndexHealth", "IndexStats",
    "PhysicalIndex", "Reconciliation", "SearchIndex", "deletion_record", "index_record", "open_search_index",
]


def open_search_index(target: str | os.PathLike, **options) -> SearchIndex:
    """A search server's URL (Elasticsearch or OpenSearch: ``core.settings.is_search_server``) -> ElasticsearchIndex;
    anything else -> EmbeddedSearchIndex in that directory. ``options`` go to the backend's constructor. The
    client libraries are imported only when used."""
    target = os.fspath(target)
    if is_search_server(target):
        from ingest_assets.records.indexing.es_index import ElasticsearchIndex

        return ElasticsearchIndex(target, **options)
    return EmbeddedSearchIndex(target, **options)
