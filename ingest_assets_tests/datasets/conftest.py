"""Dataset-ingest fixtures: the routed platform server (:class:`support.datasets.PlatformServer`) on a local
port and a ready IngestContext."""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import pytest

from ingest_assets.datasets.ingest import IngestContext
from ingest_assets.datasets.platforms import PlatformConfig
from ingest_assets.datasets.results import ResultStore
from ingest_assets.core.http import HttpClient
from ingest_assets.core.sql import make_engine
from ingest_assets_tests.support.datasets import PlatformServer


@pytest.fixture
def platform(http_server) -> PlatformServer:
    server = PlatformServer()
    server.base = http_server(app=server)
    return server


@pytest.fixture
def datasets_dir(shared_fixtures) -> Path:
    return shared_fixtures / "datasets"


@pytest.fixture
def make_ctx(platform, tmp_storage, tmp_path):
    """``make_ctx(**overrides)`` -> IngestContext against the local platform server and a SQLite store."""

    def build(database_url: str | None = None, **overrides) -> IngestContext:
        url = database_url or f"sqlite:///{tmp_path / 'results.sqlite3'}"
        options = dict(
            client=HttpClient(allow_private=True, retries=1, backoff=0.01, timeout=(2, 10)),
            storage=tmp_storage,
            store=ResultStore(make_engine(url)),
            platforms=PlatformConfig(figshare_api=f"{platform.base}/v2", figshare_bundle_base=platform.base),
            hosts={name: (platform.netloc,) for name in ("zenodo", "figshare", "archiveorg")},
            doi_resolver=f"{platform.base}/doi",
            workdir=tmp_path,
        )
        options.update(overrides)
        return IngestContext(**options)

    return build


@pytest.fixture
def zip_of():
    """``zip_of({name: bytes})`` -> zip bytes (a platform's "download all" bundle)."""

    def build(files: dict[str, bytes]) -> bytes:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, data in files.items():
                archive.writestr(name, data)
        return buffer.getvalue()

    return build


@pytest.fixture
def hashes():
    def compute(data: bytes) -> dict[str, str]:
        return {a: hashlib.new(a, data).hexdigest() for a in ("md5", "sha1", "sha256")}

    return compute
