"""Harvest test fixtures: the servers of :mod:`ingest_assets_tests.support.oai` (a real OAI-PMH server over real
fixture records, a replay server) on 127.0.0.1, checkpoints and HTTP clients."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from functools import partial
from pathlib import Path

import boto3
import pytest

from ingest_assets.core.http import HttpClient
from ingest_assets.core.wsgi import WsgiServer
from ingest_assets.records.harvest import StorageCheckpoint
from ingest_assets.core.registry import ProviderEntry
from ingest_assets.storage.layout import provider_state_key
from ingest_assets_tests.support.deliveries import upload_folder
from ingest_assets_tests.support.hub_deliveries import Mounts, Place
from ingest_assets_tests.support.oai import FixtureRepository, OaiServerApp, ReplayApp

SECONDS = "YYYY-MM-DDThh:mm:ssZ"


@pytest.fixture
def oai_fixtures(shared_fixtures) -> Path:
    return shared_fixtures / "oai-pmh"


@pytest.fixture
def http() -> HttpClient:
    return HttpClient(timeout=(2, 10), retries=2, backoff=0.01, allow_private=True)


@pytest.fixture
def started() -> datetime:
    return datetime(2026, 11, 22, 3, 4, 5, tzinfo=timezone.utc)


@pytest.fixture
def provider() -> Callable[..., ProviderEntry]:
    def make(harvest: dict, name: str = "testprov") -> ProviderEntry:
        return ProviderEntry(name, {"harvest": harvest})

    return make


@pytest.fixture
def checkpoint(tmp_storage) -> StorageCheckpoint:
    return StorageCheckpoint(tmp_storage, "testprov")


@pytest.fixture
def spool_files(tmp_storage) -> Callable[[], list[str]]:
    """The harvest spool of ``testprov`` as ``<request digest>/<page>.avro`` names."""
    folder = provider_state_key("testprov", "harvest-spool")
    return lambda: [key.removeprefix(f"{folder}/") for key in tmp_storage.list_keys(folder)]


@pytest.fixture
def replay(http_server) -> Callable[[], tuple[ReplayApp, str]]:
    def start() -> tuple[ReplayApp, str]:
        app = ReplayApp()
        return app, http_server(app=app) + "/oai"

    return start


@pytest.fixture
def oai_server(http_server, oai_fixtures) -> Callable[..., OaiServerApp]:
    def start(*, granularity: str = SECONDS, batch_size: int = 3) -> OaiServerApp:
        repository = FixtureRepository(oai_fixtures, granularity)
        app = OaiServerApp(repository, batch_size)
        app.url = http_server(app=app) + "/oai"
        repository.base_url = app.url
        return app

    return start


@pytest.fixture(scope="session")
def hub_server() -> Iterator[tuple[Mounts, str]]:
    """One server for every hub's delivery of the session (each app mounted at its own path)."""
    mounts = Mounts()
    server = WsgiServer().start(mounts)
    yield mounts, server.url
    server.shutdown()


@pytest.fixture
def hub_place(tmp_path, hub_server, s3_endpoint) -> Place:
    """Where a hub's delivery goes: a folder, the session's hub server, moto's S3 (see support/hub_deliveries.py)."""
    mounts, url = hub_server
    client = partial(boto3.client, "s3", endpoint_url=s3_endpoint)

    def upload(folder: Path, bucket: str) -> str:
        upload_folder(client(), bucket, "delivery", folder)
        return f"s3://{bucket}/delivery"

    return Place(tmp_path / "delivery", lambda app: url + mounts.mount(app), upload, client)
