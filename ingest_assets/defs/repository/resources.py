"""The repository resource: Fedora 6 when INGEST_REPOSITORY is an http(s) URL, else an OCFL root."""

from __future__ import annotations

import dagster as dg
from pydantic import PrivateAttr

from ingest_assets.http import HttpClient
from ingest_assets.repository.backends import open_repository
from ingest_assets.repository.store import Repository


class RepositoryResource(dg.ConfigurableResource):
    target: str
    allow_private_sources: bool = False  # only for sources on 127.0.0.1 in tests and demos
    _repository: Repository | None = PrivateAttr(default=None)

    def repository(self) -> Repository:
        if self._repository is None:
            self._repository = open_repository(self.target)
        return self._repository

    def source_http(self) -> HttpClient:
        """The client for provider-given URLs (template index, wiki API, verification)."""
        return HttpClient(allow_private=self.allow_private_sources)
