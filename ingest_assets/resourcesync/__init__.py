"""ResourceSync publishing: a resource index and change log (embedded SQL or Elasticsearch), the v1.1
documents generated from it as static files, and a small server (``ingest-assets serve-resourcesync``).
:func:`open_resource_index` opens the resource index backend the search setting (``INGEST_SEARCH``) names."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ingest_assets.core.settings import is_search_server
from ingest_assets.resourcesync.index import ResourceIndex

if TYPE_CHECKING:
    from sqlalchemy import Engine


def open_resource_index(target: str, engine: Callable[[], Engine], prefix: str = "resourcesync") -> ResourceIndex:
    """``target`` (``INGEST_SEARCH``) a search server's URL -> Elasticsearch/OpenSearch indices
    ``<prefix>-resource/-change``, else the embedded tables in the database of ``engine()`` (called only then). Only
    the chosen backend's client library is imported."""
    if is_search_server(target):
        from ingest_assets.resourcesync.es_index import ElasticsearchResourceIndex

        return ElasticsearchResourceIndex(target, prefix=prefix)
    from ingest_assets.resourcesync.sql_index import SqlResourceIndex

    return SqlResourceIndex(engine())
