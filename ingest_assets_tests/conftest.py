"""Shared fixtures: real servers on 127.0.0.1 (moto S3, PostgreSQL, HTTP) and the shared fixtures folder."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ingest_assets.core.wsgi import WsgiServer
from ingest_assets.storage import LocalStorage
from ingest_assets_tests.support.daemon import DaemonProcess
from ingest_assets_tests.support.elasticsearch import FakeElasticsearch
from ingest_assets_tests.support.postgres import PostgresServer, pg_bindir, remove_cluster
from ingest_assets_tests.support.repository import TemplateIndexApp
from ingest_assets_tests.support.static import static_files
from ingest_assets_tests.support import SHARED_FIXTURES, free_port, require
from ingest_assets_tests.support.once import once_per_run, worker_id
from ingest_assets_tests.support.replay import Replay

# slow or server-heavy groups a developer can deselect: pytest -m "not browser and not spark"
GROUPS = {
    "browser": "headless Chromium against dagster-webserver",
    "spark": "Spark sessions and a standalone cluster (a JVM)",
    "postgres": "a private PostgreSQL server",
    "property": "Hypothesis property tests",
    "packaging": "builds the wheel and installs it into a fresh environment",
    "dg": "Dagster's dg CLI loading the project in subprocesses (check, list, launch)",
    "daemon": "the Dagster daemon on PostgreSQL refreshing and backfilling by itself, and killed mid-backfill",
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


# groups whose tests run one after another on one xdist worker (``--dist loadgroup``): they share a costly
# session (a Spark cluster, ``dagster dev``) or would starve each other of the 2 cores if run twice at once (two
# daemons, each with its code server and run workers)
ONE_WORKER = ("browser", "spark", "daemon")
# xdist hands out the groups first (most tests first); of the single tests, these long ones are put first too, so
# that no worker is left alone with one of them at the end of the run
LONG_FIRST = ("packaging", "dg")


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config, items):
    """Each test gets the markers of the groups it belongs to, by folder, file or fixture (and the xdist_group of
    the ONE_WORKER groups); under xdist the LONG_FIRST ones are then moved to the front."""
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
            "daemon": "dagster_daemon" in names,
            "pipeline": "pipeline" in names,
        }
        for name, applies in marks.items():
            if applies:
                item.add_marker(name)
                if name in ONE_WORKER:
                    item.add_marker(pytest.mark.xdist_group(name))
    yield  # pytest's own reordering (by session parameters) and xdist's reading of the groups
    if "PYTEST_XDIST_WORKER" in os.environ:  # every worker sorts alike (a stable sort: the order within a group stays)
        ungrouped = [item.nodeid for item in items if item.get_closest_marker("xdist_group") and "@" not in item.nodeid]
        if ungrouped and config.getvalue("loadgroup"):  # xdist marks a group in the node id; pytest 9.2 ignores that
            raise pytest.UsageError(f"xdist did not group {ungrouped[0]} (pytest-xdist#1386): keep pytest below 9.2")
        items.sort(key=_long_first)


def _long_first(item) -> int:
    return min((LONG_FIRST.index(mark.name) for mark in item.iter_markers() if mark.name in LONG_FIRST), default=len(LONG_FIRST))


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


def _start_postgres(_folder: Path) -> dict:
    server = PostgresServer()
    return {"bindir": str(server.bindir), "base": str(server.base), "port": server.port, "as_user": server.as_user}


@pytest.fixture(scope="session")
def pg_url(tmp_path_factory) -> Iterator[str]:
    """A private PostgreSQL server (:class:`support.postgres.PostgresServer`, one per run, shared by the xdist
    workers), a database of this worker's own, as a SQLAlchemy URL (the faults suite restarts servers of its own)."""
    require(pg_bindir() is not None, "PostgreSQL server binaries not installed (.ci/run installs them)")
    with once_per_run("postgres", tmp_path_factory, _start_postgres, remove_cluster) as server:
        database = f"ingest_{worker_id()}"
        subprocess.run(
            [str(Path(server["bindir"]) / "createdb"), "-h", "127.0.0.1", "-p", str(server["port"]), "-U", "ingest", database],
            check=True,
            capture_output=True,
        )
        yield f"postgresql+psycopg://ingest@127.0.0.1:{server['port']}/{database}"


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
def dagster_daemon(tmp_path, pg_url) -> Iterator[Callable[..., DaemonProcess]]:
    """``dagster_daemon(registry, partition_start, start=True)``: a :class:`DaemonProcess` with its instance handle
    (started unless ``start=False``: a test may first submit what the daemon finds on its first iteration), stopped
    after the test; DAGSTER_POSTGRES_URL is set here meanwhile, so ``dg.DagsterInstance.from_config(daemon.home)``
    reaches it."""
    import dagster as dg

    made: list[DaemonProcess] = []

    def make(registry: Path, partition_start: str, start: bool = True) -> DaemonProcess:
        daemon = DaemonProcess(tmp_path, pg_url, registry, partition_start)
        os.environ["DAGSTER_POSTGRES_URL"] = daemon.env["DAGSTER_POSTGRES_URL"]
        daemon.instance = dg.DagsterInstance.from_config(str(daemon.home))
        made.append(daemon)
        if start:
            daemon.start()
        return daemon

    yield make
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
