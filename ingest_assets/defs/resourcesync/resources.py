"""The ResourceSync resource: which resource index backend (Elasticsearch or the embedded tables of the
``sql`` resource) and the publishing parameters; defaults come from :class:`ingest_assets.core.settings.Settings`."""

from __future__ import annotations

from datetime import timedelta

import dagster as dg
from pydantic import PrivateAttr

from ingest_assets.defs.resources import SqlResource
from ingest_assets.core.registry import Registry
from ingest_assets.resourcesync import open_resource_index
from ingest_assets.resourcesync.config import DEFAULT_BASE_URL, capability_set, resource_sets
from ingest_assets.resourcesync.documents import SITEMAP_LIMIT
from ingest_assets.resourcesync.feed import ChangeFeed
from ingest_assets.resourcesync.index import ResourceIndex
from ingest_assets.resourcesync.model import ResourceSet
from ingest_assets.resourcesync.publish import Publisher
from ingest_assets.core.settings import CHANGE_FEED_CAPABILITIES, Settings
from ingest_assets.storage import Storage


class ResourceSyncResource(dg.ConfigurableResource):
    """``search`` http(s) -> Elasticsearch indices ``<index_prefix>-resource/-change``, else the embedded
    tables in the ``sql`` resource's database; documents are published for ``base_url`` (where the server runs)."""

    search: str
    sql: SqlResource
    base_url: str
    index_prefix: str = "resourcesync"
    change_interval_hours: int = 24
    resource_list_limit: int = SITEMAP_LIMIT
    capabilities: list[str] = list(CHANGE_FEED_CAPABILITIES)  # whose change feeds are published
    _index: ResourceIndex | None = PrivateAttr(default=None)

    @classmethod
    def from_settings(cls, settings: Settings, sql: SqlResource) -> "ResourceSyncResource":
        return cls(
            search=settings.search,
            sql=sql,
            base_url=settings.resourcesync_url or DEFAULT_BASE_URL,
            capabilities=list(settings.resourcesync_capabilities),
        )

    def get_client(self) -> ResourceIndex:
        if self._index is None:
            self._index = open_resource_index(self.search, self.sql.get_client, self.index_prefix)
        return self._index

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        if self._index is not None:
            self._index.close()

    def sets(self, registry: Registry) -> list[ResourceSet]:
        return resource_sets(registry, self.base_url, self.capabilities)

    def feed(self, storage: Storage, resource_set: ResourceSet) -> ChangeFeed:
        return ChangeFeed(self.get_client(), storage, resource_set)

    def capability_feed(self, capability: str, storage: Storage) -> ChangeFeed | None:
        """The change feed of ``capability``'s set; None when its feed is not published."""
        if capability not in self.capabilities:
            return None
        return self.feed(storage, capability_set(capability, self.base_url))

    def publisher(self, storage: Storage) -> Publisher:
        return Publisher(
            self.get_client(),
            storage,
            self.base_url,
            interval=timedelta(hours=self.change_interval_hours),
            limit=self.resource_list_limit,
        )
