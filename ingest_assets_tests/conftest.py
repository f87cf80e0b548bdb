"""Shared fixtures: real servers on 127.0.0.1 (moto S3, PostgreSQL, HTTP) and the shared fixtures folder."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import pytest

from ingest_assets.storage import LocalStorage
from ingest_assets_tests.support import SHARED_FIXTURES, free_port, require

# slow or server-heavy groups a developer can deselect: pytest -m "not browser and not spark"
GROUPS = {
    "browser": "headless Chromium against dagster-webserver",
    "spark": "Spark sessions and a standalone cluster (a JVM)",
    "postgres": "a private PostgreSQL server",
    "property": "Hypothesis property tests",
    "packaging": "builds the wheel and installs it into a fresh environment",
    "faults": "fault injection and load against real servers (ingest_assets_tests/faults/)",
}


def pytest_configure(config) -> None:
    for name, what in GROUPS.items():
        config.addinivalue_line("markers", f"{name}: {what}")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """``item.failed`` after a failed test body, for fixtures that save evidence (screenshots) on failure."""
    report = yield
    if report.when == "call" and report.failed:
        item.failed = True
    return report


def pytest_collection_modifyitems(items) -> None:
    """Each test gets the markers of the groups it belongs to, by folder, file or fixture."""
    for item in items:
        names = set(item.fixturenames)
        marks = {
            "browser": item.path.name == "test_ui.py",
            "spark": "spark" in item.path.parts or bool(names & {"spark", "spark_cluster"}),
            "postgres": "pg_url" in names,
            "property": getattr(getattr(item, "obj", None), "is_hypothesis_test", False),
            "packaging": item.path.name == "test_wheel.py",
            "faults": "faults" in item.path.parts,
        }
        for name, applies in marks.items():
            if applies:
                item.add_marker(name)


@pytest.fixture(scope="session")
def shared_fixtures() -> Path:
    """``../shared/fixtures`` (third-party files: read in place, never copied)."""
    require(SHARED_FIXTURES.is_dir(), f"{SHARED_FIXTURES} not found (a clone without ../shared)")
    return SHARED_FIXTURES


@pytest.fixture
def tmp_storage(tmp_path) -> LocalStorage:
    return LocalStorage(tmp_path / "storage")


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """moto's S3 server over real HTTP (not the in-process mock)."""
    from moto.server import ThreadedMotoServer

    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        os.environ.setdefault(key, value)
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """A private PostgreSQL server (:class:`support.postgres.PostgresServer`), as a SQLAlchemy URL."""
    from ingest_assets_tests.support.postgres import PostgresServer

    server = PostgresServer()
    try:
        yield server.url
    finally:
        server.remove()


class _QuietWSGIHandler(WSGIRequestHandler):
    def log_message(self, *args) -> None:
        pass


class _QuietFileHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


class _ThreadingWSGIServer(WSGIServer):
    daemon_threads = True

    def process_request(self, request, client_address):
        threading.Thread(target=self._handle, args=(request, client_address), daemon=True).start()

    def _handle(self, request, client_address):
        try:
            self.finish_request(request, client_address)
        finally:
            self.shutdown_request(request)


@pytest.fixture
def http_server() -> Iterator[Callable[..., str]]:
    """Factory: ``http_server(directory=...)`` or ``http_server(app=wsgi_app)`` -> base URL on 127.0.0.1."""
    servers = []

    def start(*, directory: str | Path | None = None, app=None) -> str:
        if (directory is None) == (app is None):
            raise ValueError("give exactly one of directory or app")
        if app is not None:
            server = make_server("127.0.0.1", 0, app, server_class=_ThreadingWSGIServer, handler_class=_QuietWSGIHandler)
        else:
            server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_QuietFileHandler, directory=str(directory)))
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def template_index(http_server):
    """``(app, url)``: a TemplateParameterIndex (:class:`support.repository.TemplateIndexApp`) on 127.0.0.1."""
    from ingest_assets_tests.support.repository import TemplateIndexApp

    app = TemplateIndexApp()
    yield app, http_server(app=app) + "/TemplateParameterIndex"
    app.release.set()
