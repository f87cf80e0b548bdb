"""Resource sets from the registry: every provider with a ``resourcesync:`` block is one set.

    myprovider:
      resourcesync:
        url_prefix: https://data.example.org/myprovider/   # optional, default <base_url>/<name>/resources/
        root: /srv/files/myprovider                          # optional: directory or storage URL of its files
        publish_outputs: true                                # optional: also its record activity outputs

A set without ``root`` keeps its files in the storage under ``_resourcesync/<name>/resources/``: a record
provider's set needs nothing more (``resourcesync: {}``), its item documents are written there (:mod:`.feed`).

Each capability publishing through a change feed (``INGEST_RESOURCESYNC_CAPABILITIES``, all by default)
adds one set, named so that no provider can be (the registry refuses these names): :data:`CAPABILITY_SETS`.

The base URL the documents are published under comes from ``INGEST_RESOURCESYNC_URL``
(default ``http://127.0.0.1:8080``, the server's default address).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from ingest_assets.core.registry import Registry
from ingest_assets.core.settings import is_search_server
from ingest_assets.resourcesync.index import ResourceIndex
from ingest_assets.resourcesync.model import ResourceSet

if TYPE_CHECKING:
    from sqlalchemy import Engine

DEFAULT_BASE_URL = "http://127.0.0.1:8080"
CAPABILITY_SETS = {"repository": "repository-objects", "datasets": "dataset-files", "linked_data": "linked-data"}


def open_resource_index(search: str, engine: Callable[[], Engine], prefix: str = "resourcesync") -> ResourceIndex:
    """``search`` a search server's URL -> Elasticsearch/OpenSearch indices ``<prefix>-resource/-change``, else the
    embedded tables in the database of ``engine()`` (called only then). Only the chosen backend's client library
    is imported."""
    if is_search_server(search):
        from ingest_assets.resourcesync.es_index import ElasticsearchResourceIndex

        return ElasticsearchResourceIndex(search, prefix=prefix)
    from ingest_assets.resourcesync.sql_index import SqlResourceIndex

    return SqlResourceIndex(engine())


def resource_sets(registry: Registry, base: str | None = None, capabilities: Iterable[str] = ()) -> list[ResourceSet]:
    """The record providers' sets, then the sets of ``capabilities`` (keys of :data:`CAPABILITY_SETS`)."""
    base = (base or DEFAULT_BASE_URL).rstrip("/")
    sets = []
    for entry in registry.providers_with("resourcesync"):
        block = entry.require("resourcesync")
        url_prefix = block.url_prefix or f"{base}/{entry.name}/resources/"
        sets.append(ResourceSet(entry.name, url_prefix, block.root, block.publish_outputs))
    return sets + [capability_set(capability, base) for capability in capabilities]


def capability_set(capability: str, base: str | None = None) -> ResourceSet:
    """The set a capability publishes its files in: ``<base>/<set>/resources/``, kept in the storage."""
    name = CAPABILITY_SETS[capability]
    return ResourceSet(name, f"{(base or DEFAULT_BASE_URL).rstrip('/')}/{name}/resources/")
