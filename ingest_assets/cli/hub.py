"""What the publishing commands share: the hub as the settings describe it (registry, storage, search index,
database), the person at the keyboard, and the one way a command fails (one line on stderr, a non-zero exit)."""

from __future__ import annotations

import getpass
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from functools import cached_property

from ingest_assets.core.errors import ConfigError, IngestError
from ingest_assets.core.registry import Registry, load_registry
from ingest_assets.core.settings import Settings
from ingest_assets.records.indexing import DEFAULT_ALIAS, SearchIndex, open_search_index


class CommandError(Exception):
    """A mistake on the command line or a state that forbids the command: one line, exit 1."""


@dataclass
class Hub:
    settings: Settings
    alias: str = DEFAULT_ALIAS

    @cached_property
    def registry(self) -> Registry:
        return load_registry(self.settings.registry_path)

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
        from ingest_assets.resourcesync.config import open_resource_index

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


def yesterday() -> date:
    return datetime.now(timezone.utc).date() - timedelta(days=1)


def run(prog: str, body: Callable[[Hub], int], alias: str = DEFAULT_ALIAS) -> int:
    """Run ``body`` on the hub; an IngestError, a CommandError or a database error is one line on stderr, exit 1."""
    hub = Hub(Settings.current(), alias)
    try:
        with _one_line(prog):
            return body(hub)
    except _Failed:
        return 1
    finally:
        hub.close()


class _Failed(Exception):
    pass


@contextmanager
def _one_line(prog: str) -> Iterator[None]:
    from sqlalchemy.exc import SQLAlchemyError  # loads with the database

    try:
        yield
    except (IngestError, CommandError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        raise _Failed from exc
    except SQLAlchemyError as exc:
        print(f"{prog}: database error: {str(exc).splitlines()[0]}", file=sys.stderr)
        raise _Failed from exc
