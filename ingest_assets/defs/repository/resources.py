"""The repository resource: Fedora 6 when INGEST_REPOSITORY is an http(s) URL, else an OCFL root."""

from __future__ import annotations

import dagster as dg
from pydantic import PrivateAttr

from ingest_assets.core.http import HttpClient
from ingest_assets.repository import open_repository
from ingest_assets.repository.backend import Repository
from ingest_assets.core.settings import Settings


class RepositoryResource(dg.ConfigurableResource):
    target: str
    allow_private_sources: bool = False  # only for sources on 127.0.0.1 in tests and demos
    fedora_user: str | None = None
    fedora_password: str | None = None  # bound as dg.EnvVar("FEDORA_PASSWORD"), so the UI never shows it
    removal_misses: int = 3
    removal_grace_days: float = 7.0
    _repository: Repository | None = PrivateAttr(default=None)

    def get_client(self) -> Repository:
        if self._repository is None:
            self._repository = open_repository(
                self.target, auth=(self.fedora_user, self.fedora_password or "") if self.fedora_user else None
            )
        return self._repository

    def source_http(self) -> HttpClient:
        """The client for provider-given URLs (template index, wiki API, verification)."""
        return HttpClient(allow_private=self.allow_private_sources)

    @classmethod
    def from_settings(cls, settings: Settings) -> "RepositoryResource":
        return cls(
            target=settings.repository,
            fedora_user=settings.fedora_user,
            fedora_password=dg.EnvVar("FEDORA_PASSWORD") if settings.secret("FEDORA_PASSWORD") else None,
            removal_misses=settings.repository_removal_misses,
            removal_grace_days=settings.repository_removal_grace_days,
        )
