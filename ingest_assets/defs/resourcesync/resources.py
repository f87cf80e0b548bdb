"""The ResourceSync resource: which resource index backend (Elasticsearch or embedded SQL) and the
publishing parameters; defaults come from :class:`ingest_assets.settings.Settings`."""

from __future__ import annotations

from datetime import timedelta

import dagster as dg
from pydantic import PrivateAttr

from ingest_assets.registry import Registry
from ingest_assets.resourcesync.config import DEFAULT_BASE_URL, open_resource_index, resource_sets
from ingest_assets.resourcesync.documents import SITEMAP_LIMIT
from ingest_assets.resourcesync.index import ResourceIndex
from ingest_assets.resourcesync.model import ResourceSet
from ingest_assets.resourcesync.publish import Publisher
from ingest_assets.settings import Settings
from ingest_assets.storage import Storage


class ResourceSyncResource(dg.ConfigurableResource):
    """``search`` http(s) -> Elasticsearch indices ``<index_prefix>-resource/-change``, else the embedded
    tables in ``database_url``; documents are published for ``base_url`` (where the server runs)."""

    search: str
    database_url: str
    base_url: str
    index_prefix: str = "resourcesync"
    change_interval_hours: int = 24
    resource_list_limit: int = SITEMAP_LIMIT
    _index: ResourceIndex | None = PrivateAttr(default=None)

    @classmethod
    def from_settings(cls, settings: Settings) -> "ResourceSyncResource":
        return cls(search=settings.search, database_url=settings.database_url, base_url=settings.resourcesync_url or DEFAULT_BASE_URL)

    def index(self) -> ResourceIndex:
        if self._index is None:
            self._index = open_resource_index(self.search, self.database_url, self.index_prefix)
        return self._index

    def sets(self, registry: Registry) -> list[ResourceSet]:
        return resource_sets(registry, self.base_url)

    def publisher(self, storage: Storage) -> Publisher:
        return Publisher(
            self.index(),
            storage,
            self.base_url,
            interval=timedelta(hours=self.change_interval_hours),
            limit=self.resource_list_limit,
        )
