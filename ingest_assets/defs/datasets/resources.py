"""The dataset-ingest resource: strategy thresholds, platform endpoints and archive.org credentials."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import dagster as dg
from pydantic import Field

from ingest_assets.core.registry import ProviderEntry
from ingest_assets.datasets.platforms import PlatformConfig
from ingest_assets.datasets.strategy import Thresholds
from ingest_assets.storage import Storage

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from ingest_assets.datasets.ingest import IngestContext
    from ingest_assets.resourcesync.feed import ChangeFeed

_DEFAULTS = Thresholds()
_PLATFORMS = PlatformConfig()


class DatasetIngestResource(dg.ConfigurableResource):
    """Configuration of dataset ingest; the archive.org upload runs only when both IA keys are set
    (bind them with ``dg.EnvVar("IA_ACCESS_KEY")`` / ``dg.EnvVar("IA_SECRET_KEY")``)."""

    web_max_file_size: int = Field(default=_DEFAULTS.web_max_file_size, description="bytes; larger -> archiveorg-*")
    max_total_size: int = Field(default=_DEFAULTS.max_total_size, description="bytes; larger -> too-large-size")
    max_files: int = Field(default=_DEFAULTS.max_files, description="more files (no bundle) -> too-many-files")
    bundle_min_files: int = Field(default=_DEFAULTS.bundle_min_files, description="use a download-all bundle from")
    max_bundle_files: int = _DEFAULTS.max_bundle_files
    doi_resolver: str = "https://doi.org"
    figshare_api: str = _PLATFORMS.figshare_api
    figshare_bundle_base: str = _PLATFORMS.figshare_bundle_base
    archiveorg_collection: str = _PLATFORMS.archiveorg_collection
    extra_hosts: dict[str, list[str]] = Field(default_factory=dict, description="platform -> more host names")
    allow_private: bool = Field(default=False, description="allow loopback/private addresses (tests only)")
    ia_access_key: str | None = None
    ia_secret_key: str | None = None

    def context(self, storage: Storage, engine: "Engine", feed: "ChangeFeed | None" = None,
                registry: Iterable[ProviderEntry] = ()) -> "IngestContext":
        """The ingest context; ``feed`` publishes the stored files; the ``datasets:`` blocks of the ``registry``
        entries add platform hosts beside ``extra_hosts``."""
        from ingest_assets.datasets.detect import PlatformHosts
        from ingest_assets.datasets.ingest import make_context

        extra = {name: tuple(hosts) for name, hosts in self.extra_hosts.items()}
        return make_context(
            storage,
            engine,
            allow_private=self.allow_private,
            platform_hosts=PlatformHosts.of(registry, extra),
            ia_access_key=self.ia_access_key,
            ia_secret_key=self.ia_secret_key,
            thresholds=Thresholds(
                web_max_file_size=self.web_max_file_size,
                max_total_size=self.max_total_size,
                max_files=self.max_files,
                bundle_min_files=self.bundle_min_files,
                max_bundle_files=self.max_bundle_files,
            ),
            platforms=PlatformConfig(
                figshare_api=self.figshare_api,
                figshare_bundle_base=self.figshare_bundle_base,
                archiveorg_collection=self.archiveorg_collection,
            ),
            doi_resolver=self.doi_resolver,
            feed=feed,
        )
