"""Shared resources: each selects an embedded default or a server backend from its configuration.

Every resource that hands out a backend does it as Dagster's own resources do (``S3Resource.get_client()``):
``get_client()`` opens it on first use (importing its library only then) and keeps it for the run; the triple
store's opens a new handle per call (a snapshot, or the writer's lock)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

import dagster as dg
from pydantic import Field, PrivateAttr
from ingest_assets.core.registry import Registry, load_registry
from ingest_assets.core.settings import Settings
from ingest_assets.defs.s3 import storage_opener
from ingest_assets.storage import Storage, StoredText
from ingest_assets.storage.layout import registry_copy_key

if TYPE_CHECKING:
    from sqlalchemy import Engine


class StorageResource(dg.ConfigurableResource):
    """Object storage: a local directory or ``s3://bucket/prefix``, whose client is dagster-aws's
    ``S3Resource(**s3)`` (``endpoint_url``, ``region_name``, ``profile_name``...; unset values come from
    boto3's ``AWS_*`` environment). A plain mapping, not a nested resource, so sensors can use this one."""

    url: str
    s3: dict[str, Any] = Field(default_factory=lambda: {"max_attempts": 5})
    _storage: Storage | None = PrivateAttr(default=None)

    def get_client(self) -> Storage:
        if self._storage is None:
            self._storage = self.opener()()
        return self._storage

    def opener(self) -> Callable[[], Storage]:
        """Opens this storage in any process (picklable: Spark executors call it)."""
        return storage_opener(self.url, self.s3)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        """At each run's start: remove staging that killed writes left behind (a day untouched)."""
        removed = self.get_client().clean_stale_staging()
        if removed and context.log:
            context.log.info(f"removed {len(removed)} stale staging folder(s) of killed writes: {removed[:5]}")


class SqlResource(dg.ConfigurableResource):
    """Transactional tables: ``sqlite:///path`` by default, ``postgresql://...`` in production."""

    url: str
    _engine: "Engine | None" = PrivateAttr(default=None)

    def get_client(self) -> "Engine":
        if self._engine is None:
            from ingest_assets.core.sql import make_engine  # SQLAlchemy loads with the first run that needs it

            self._engine = make_engine(self.url)
        return self._engine


class RegistryResource(dg.ConfigurableResource):
    """The provider registry YAML file, re-read by every ``load()`` so edits apply without a restart. With
    ``last_good_in`` (the platform storage's URL and S3 settings, plain values so that sensors can use this
    resource), each file that loads is kept there, and a file that no longer loads keeps the hub running on that
    copy (``Registry.stale`` says why; the registry check shows it red). A loaded registry's mapping profiles and
    rules are compiled before anything uses it: an entry with an unknown profile or a bad rule is refused, naming
    entry and file (``records.mapping.check_registry``)."""

    path: str
    last_good_in: str | None = None
    last_good_s3: dict[str, Any] = Field(default_factory=dict)

    def load(self) -> Registry:
        from ingest_assets.records.mapping import check_registry  # the profiles load with the first registry

        kept = None
        if self.last_good_in:
            kept = StoredText(storage_opener(self.last_good_in, self.last_good_s3)(), registry_copy_key())
        registry = load_registry(self.path, kept)
        check_registry(registry)
        return registry

    @classmethod
    def keeping_copies_in(cls, path: str, storage: StorageResource) -> "RegistryResource":
        return cls(path=path, last_good_in=storage.url, last_good_s3=storage.s3)


@cache
def _shared(settings: Settings) -> tuple[StorageResource, SqlResource, RegistryResource]:
    storage = StorageResource(url=settings.storage_url)
    return storage, SqlResource(url=settings.database_url), RegistryResource.keeping_copies_in(str(settings.registry_path), storage)


def shared_resources(settings: Settings) -> dict[str, dg.ConfigurableResource]:
    """``storage``, ``sql`` and ``registry``: made once per settings, bound once (by :mod:`ingest_assets.defs.shared`).
    A capability whose own resource nests one of them takes it from here: the same object, one resource."""
    storage, sql, registry = _shared(settings)
    return {"storage": storage, "sql": sql, "registry": registry}
