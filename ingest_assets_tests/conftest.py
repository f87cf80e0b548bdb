"""Shared fixtures: real servers on 127.0.0.1 (moto S3, PostgreSQL, HTTP) and the shared fixtures folder."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ingest_assets.core.wsgi import WsgiServer
from ingest_assets.storage import LocalStorage
from ingest_assets_tests.support.daemon import DaemonProcess
from ingest_assets_tests.support.elasticsearch import FakeElasticsearch
from ingest_assets_tests.support.postgres import PostgresServer
from ingest_assets_tests.support.repository import TemplateIndexApp
from ingest_assets_tests.support.static import static_files
from ingest_assets_tests.support import SHARED_FIXTURES, free_port, require
from ingest_assets_tests.support.replay import Replay

# slow or server-heavy groups a developer can deselect: pytest -m "not browser and not spark"
GROUPS = {
    "browser": "headless Chromium against dagster-webserver",
    "spark": "Spark sessions and a standalone cluster (a JVM)",
    "postgres": "a private PostgreSQL server",
    "property": "Hypothesis property tests",
    "packaging": "builds the wheel and installs it into a fresh environment",
    "dg": "Dagster's dg CLI loading the project in subprocesses (check, list, launch)",
    "hostile": "the reliability suite (ingest_assets_tests/hostile/): SIGKILLed writers, memory-capped workers",
    "faults": "fault injection and load against real servers (ingest_assets_tests/faults/)",
    "pipeline": "the record pipeline run day by day on a Dagster instance, then the publishing commands",
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
            "hostile": "hostile" in item.path.parts,
            "dg": item.path.name == "test_dg.py",
            "faults": "faults" in item.path.parts,
            "pipeline": "pipeline" in names,
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
    server = PostgresServer()
    try:
        yield server.url
    finally:
        server.remove()


@pytest.fixture(params=["fake", "live"])
def es(request):
    """The one Elasticsearch endpoint of the tests, recording every request: the in-memory model
    (:class:`support.elasticsearch.FakeElasticsearch`), or a proxy to ``ELASTICSEARCH_URL`` (skipped when it is
    unset). A test that inspects the model itself takes the fake alone: ``@pytest.mark.parametrize("es", ["fake"],
    indirect=True)``."""
    upstream = os.environ.get("ELASTICSEARCH_URL")
    if request.param == "live" and not upstream:
        pytest.skip("ELASTICSEARCH_URL is not set")
    fake = FakeElasticsearch(upstream if request.param == "live" else None)
    yield fake
    fake.close()


@pytest.fixture
def http_server() -> Iterator[Callable[..., str]]:
    """Factory: ``http_server(directory=...)`` or ``http_server(app=wsgi_app)`` -> base URL on 127.0.0.1."""
    servers = []

    def start(*, directory: str | Path | None = None, app=None) -> str:
        if (directory is None) == (app is None):
            raise ValueError("give exactly one of directory or app")
        server = WsgiServer().start(app if app is not None else static_files(directory))
        servers.append(server)
        return server.url

    yield start
    for server in servers:
        server.shutdown()


@pytest.fixture
def template_index(http_server):
    """``(app, url)``: a fake TemplateParameterIndex (:class:`support.repository.TemplateIndexApp`) on 127.0.0.1
    (the repository tests' and the faults suite's)."""
    app = TemplateIndexApp()
    yield app, http_server(app=app) + "/TemplateParameterIndex"
    app.release.set()


@pytest.fixture
def dagster_daemon(tmp_path, pg_url) -> Iterator[Callable[[Path, str], DaemonProcess]]:
    """``dagster_daemon(registry, partition_start)``: a :class:`DaemonProcess` (started), stopped after the test;
    DAGSTER_POSTGRES_URL is set here meanwhile, so ``dg.DagsterInstance.from_config(daemon.home)`` reaches it."""
    import dagster as dg

    made: list[DaemonProcess] = []

    def start(registry: Path, partition_start: str) -> DaemonProcess:
        daemon = DaemonProcess(tmp_path, pg_url, registry, partition_start)
        os.environ["DAGSTER_POSTGRES_URL"] = daemon.env["DAGSTER_POSTGRES_URL"]
        daemon.start()
        daemon.instance = dg.DagsterInstance.from_config(str(daemon.home))
        made.append(daemon)
        return daemon

    yield start
    os.environ.pop("DAGSTER_POSTGRES_URL", None)
    for daemon in made:
        daemon.stop()
        daemon.instance.dispose()


@pytest.fixture
def replay_source(http_server, shared_fixtures) -> Callable[[str], Replay]:
    """``replay_source("pucrio")`` -> a :class:`Replay` of ``../shared/fixtures/replays/pucrio`` on 127.0.0.1."""

    def start(name: str) -> Replay:
        app = Replay(shared_fixtures / "replays" / name)
        app.base = http_server(app=app)
        return app

    return start
