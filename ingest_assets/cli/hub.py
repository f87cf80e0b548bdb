"""What the publishing commands share: the hub as the settings describe it (registry, storage, search index,
database, change feeds) and the person at the keyboard. A command reports a problem by raising (``cli/main.py``
prints it as one line)."""

from __future__ import annotations

import getpass
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property

from ingest_assets.core.errors import ConfigError
from ingest_assets.core.registry import Registry, load_registry
from ingest_assets.core.settings import Settings
from ingest_assets.records.indexing import DEFAULT_ALIAS, SearchIndex, open_search_index


@dataclass
class Hub:
    settings: Settings
    alias: str = DEFAULT_ALIAS

    @cached_property
    def registry(self) -> Registry:
        """The registry as the hub runs on it: a file that no longer loads yields its last good copy in the storage
        (:attr:`Registry.stale` says why), as the ``registry`` resource does. A file that is not there at all is a
        mistake in this command's environment (``INGEST_REGISTRY`` unset or wrong), not the hub's state: refused."""
        from ingest_assets.cli.demo import demo_registry_path
        from ingest_assets.storage import StoredText
        from ingest_assets.storage.layout import registry_copy_key

        path = self.settings.registry_path
        if not path.exists():
            demo = demo_registry_path(self.settings)
            raise ConfigError("registry file not found", file=str(path), hint="set INGEST_REGISTRY to the registry file"
                              + (f" (the demo's: INGEST_REGISTRY={demo})" if demo.is_file() else ""))
        return load_registry(path, StoredText(self.storage, registry_copy_key()))

    @cached_property
    def storage(self):
        from ingest_assets.storage import open_storage

        return open_storage(self.settings.storage_url)

    @cached_property
    def index(self) -> SearchIndex:
        return open_search_index(self.settings.search)

    @cached_property
    def engine(self):
        from ingest_assets.core.sql import make_engine

        return make_engine(self.settings.database_url)

    @cached_property
    def resource_index(self):
        from ingest_assets.resourcesync import open_resource_index

        return open_resource_index(self.settings.search, lambda: self.engine)

    def feed_of(self, provider: str):
        """The change feed of ``provider``'s resource set (None: the provider publishes none)."""
        from ingest_assets.resourcesync.config import resource_sets
        from ingest_assets.resourcesync.feed import ChangeFeed

        sets = {s.name: s for s in resource_sets(self.registry, self.settings.resourcesync_url)}
        return ChangeFeed(self.resource_index, self.storage, sets[provider]) if provider in sets else None

    def publisher(self):
        from ingest_assets.records.publishing.journal import Journal
        from ingest_assets.records.publishing.promotion import Publisher
        from ingest_assets.records.publishing.review import Ledger
        from ingest_assets.records.publishing.takedowns import Takedowns

        return Publisher(self.index, self.alias, Journal(self.engine), Ledger(self.engine), Takedowns(self.engine),
                         retain=self.settings.index_retain)

    def record_provider(self, name: str) -> str:
        """``name`` if the registry has it with a ``harvest:`` block, else a ConfigError naming the file."""
        self.registry[name]
        if name not in self.registry.providers_of("records"):
            raise ConfigError(f"provider {name!r} has no 'harvest:' block in {self.registry.source}", provider=name)
        return name

    def close(self) -> None:
        for name in ("index", "resource_index"):
            if name in self.__dict__:
                self.__dict__[name].close()


def who() -> str:
    """The person at the command line (kept with decisions and takedowns)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


@contextmanager
def open_hub(alias: str = DEFAULT_ALIAS) -> Iterator[Hub]:
    """The hub of the current settings, its connections closed afterwards."""
    hub = Hub(Settings.current(), alias)
    try:
        yield hub
    finally:
        hub.close()
