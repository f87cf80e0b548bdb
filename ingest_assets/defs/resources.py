"""Shared resources: each selects an embedded default or a server backend from its configuration."""

from __future__ import annotations

import dagster as dg
from pydantic import PrivateAttr
from sqlalchemy import Engine

from ingest_assets.registry import Registry, load_registry
from ingest_assets.sql import make_engine
from ingest_assets.storage import Storage, open_storage


class StorageResource(dg.ConfigurableResource):
    """Object storage: a local directory or ``s3://bucket/prefix`` (``AWS_ENDPOINT_URL`` for other S3s)."""

    url: str
    _storage: Storage | None = PrivateAttr(default=None)

    @property
    def storage(self) -> Storage:
        if self._storage is None:
            self._storage = open_storage(self.url)
        return self._storage


class SqlResource(dg.ConfigurableResource):
    """Transactional tables: ``sqlite:///path`` by default, ``postgresql://...`` in production."""

    url: str
    _engine: Engine | None = PrivateAttr(default=None)

    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = make_engine(self.url)
        return self._engine


class RegistryResource(dg.ConfigurableResource):
    """The provider registry YAML file (re-read on every call, so edits apply without a restart)."""

    path: str

    def load(self) -> Registry:
        return load_registry(self.path)
