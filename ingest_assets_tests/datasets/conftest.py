"""Dataset-ingest test helpers: a routed WSGI "platform" server and a ready IngestContext.

The platform API documents come from ``../shared/fixtures/datasets`` (read in place). Their absolute
production URLs (zenodo.org, ndownloader.figshare.com...) are rewritten to the local server when served,
because tests have no network; any other adaptation is made (and explained) in the test that needs it.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ingest_assets.datasets.ingest import IngestContext
from ingest_assets.datasets.platforms import PlatformConfig
from ingest_assets.datasets.results import ResultStore
from ingest_assets.core.http import HttpClient
from ingest_assets.core.sql import make_engine


@dataclass
class Route:
    body: bytes | Callable[[], bytes]
    status: int = 200
    content_type: str = "application/json"
    headers: list[tuple[str, str]] = field(default_factory=list)


class PlatformServer:
    """Serves registered routes (path with query string) and counts hits per route."""

    def __init__(self):
        self.routes: dict[str, Route] = {}
        self.hits: Counter[str] = Counter()
        self.base = ""

    @property
    def netloc(self) -> str:
        return self.base.split("://", 1)[1]

    def route(self, path: str, body, status: int = 200, content_type: str = "application/json", headers=()):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        elif isinstance(body, str):
            body = body.encode()
        self.routes[path] = Route(body, status, content_type, list(headers))

    def redirect(self, path: str, target: str, status: int = 302):
        self.route(path, b"", status, "text/plain", [("Location", target)])

    def fixture_json(self, path: Path, replace: dict[str, str] | None = None):
        """A fixture document with production hosts pointed at this server."""
        text = path.read_text(encoding="utf-8")
        hosts = {"https://zenodo.org": self.base, "https://ndownloader.figshare.com": self.base, **(replace or {})}
        for old, new in hosts.items():
            text = text.replace(old, new)
        return json.loads(text)

    def __call__(self, environ, start_response):
        path = environ["PATH_INFO"]
        if environ.get("QUERY_STRING"):
            path += "?" + environ["QUERY_STRING"]
        self.hits[path] += 1
        route = self.routes.get(path)
        if route is None:
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"not found"]
        body = route.body() if callable(route.body) else route.body
        reason = {200: "OK", 301: "Moved", 302: "Found", 403: "Forbidden", 404: "Not Found", 503: "Unavailable"}
        headers = [("Content-Type", route.content_type), ("Content-Length", str(len(body))), *route.headers]
        start_response(f"{route.status} {reason.get(route.status, 'X')}", headers)
        return [body]


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
