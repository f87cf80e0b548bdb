"""Shared fixtures: real servers on 127.0.0.1 (moto S3, PostgreSQL, HTTP; OpenSearch, Elasticsearch, Fedora and
Fuseki from Maven Central, once per test run) and the shared fixtures folder."""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ingest_assets.core.wsgi import WsgiServer
from ingest_assets.records.engines.spark_avro import SPARK_AVRO_PACKAGE
from ingest_assets.storage import LocalStorage
from ingest_assets_tests.support import SHARED_FIXTURES, SHARED_MISSING, free_port, require, shared_skips_line
from ingest_assets_tests.support.budget import Budget
from ingest_assets_tests.support.daemon import DaemonProcess
from ingest_assets_tests.support.elasticsearch import SearchProxy
from ingest_assets_tests.support.once import once_per_run, worker_id
from ingest_assets_tests.support.postgres import PostgresServer, pg_bindir, remove_cluster
from ingest_assets_tests.support.repository import TemplateIndexApp
from ingest_assets_tests.support.replay import Replay
from ingest_assets_tests.support.servers import Server, Unavailable, maven
from ingest_assets_tests.support.servers.fedora import start_fedora
from ingest_assets_tests.support.servers.fuseki import start_fuseki
from ingest_assets_tests.support.servers.search import (
    SEARCH_SERVERS,
    start_elasticsearch,
    start_opensearch,
    without_asciifolding,
)
from ingest_assets_tests.support.servers.session import LiveServers, close_run, open_run, recorded, run_folder
from ingest_assets_tests.support.static import static_files

# slow or server-heavy groups a developer can deselect: pytest -m "not browser and not spark"
GROUPS = {
    "browser": "headless Chromium against dagster-webserver",
    "spark": "Spark sessions and a standalone cluster (a JVM)",
    "postgres": "a private PostgreSQL server",
    "property": "Hypothesis property tests",
    "packaging": "installs the project into fresh environments: install.py, a fresh clone's walkthrough, the wheel",
    "dg": "Dagster's dg CLI loading the project in subprocesses (check, list, launch)",
    "daemon": "the Dagster daemon on PostgreSQL refreshing and backfilling by itself, and killed mid-backfill",
    "hostile": "the reliability suite (ingest_assets_tests/hostile/): SIGKILLed writers, memory-capped workers",
    "faults": "fault injection and load against real servers (ingest_assets_tests/faults/)",
    "pipeline": "the record pipeline run day by day on a Dagster instance, then the publishing commands",
    "live": "real servers from Maven Central (OpenSearch, Elasticsearch, Fedora, Fuseki) and the spark-avro jar",
}
# the live servers by name
STARTERS = {"opensearch": start_opensearch, "elasticsearch": start_elasticsearch, "fedora": start_fedora,
            "fuseki": start_fuseki}
# a test is ``live`` when it uses a live server's fixture or a Maven Central artifact, or is a parametrization
# naming a live server (``search_backend``, or fixtures that pick their server with request.getfixturevalue)
LIVE_FIXTURES = {"live_servers", "es", "spark_avro_jar", *(f"{name}_server" for name in STARTERS)}
LIVE_RUN = pytest.StashKey[Path]()  # the run's live-server folder, in the process that owns the run


def pytest_configure(config) -> None:
    for name, what in GROUPS.items():
        config.addinivalue_line("markers", f"{name}: {what}")
    if not hasattr(config, "workerinput"):  # the process that owns the run (not an xdist worker)
        config.stash[LIVE_RUN] = open_run()
    config.pluginmanager.register(Budget(GROUPS), "budget")  # the run's time budget, at its end (support/budget.py)


def pytest_sessionfinish(session, exitstatus) -> None:
    """The servers this process is still starting: waited for, so that the run's owner knows and stops them (another
    worker may be waiting for one), or stopped at once when the run was interrupted (Ctrl-C)."""
    if _RUN_SERVERS:
        if exitstatus == pytest.ExitCode.INTERRUPTED:
            _RUN_SERVERS[0].abandon_starting()
        else:
            _RUN_SERVERS[0].wait_started()


def pytest_unconfigure(config) -> None:
    if LIVE_RUN in config.stash:
        close_run(config.stash[LIVE_RUN])


def pytest_terminal_summary(terminalreporter, config) -> None:
    """Why tests were skipped for want of ``../shared`` (one line); how long each live server took to be ready
    (download included when it was not cached)."""
    if line := shared_skips_line(terminalreporter.stats.get("skipped", [])):
        terminalreporter.write_line(line, yellow=True)
    if LIVE_RUN not in config.stash:
        return
    for name, record in recorded(config.stash[LIVE_RUN]).items():
        if "pid" in record:
            facts = record["facts"]
            terminalreporter.write_line(f"live {name} {facts.get('version', '')}: ready in {facts.get('seconds')} s "
                                        f"({facts.get('cpu_seconds')} CPU-s) at {record['url']}")
        else:
            terminalreporter.write_line(f"live {name}: unavailable: {record['error'].splitlines()[0]}")



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
            "packaging": item.path.name in ("test_wheel.py", "test_install.py", "test_walkthrough.py"),
            "hostile": "hostile" in item.path.parts,
            "dg": item.path.name == "test_dg.py",
            "faults": "faults" in item.path.parts,
            "daemon": "dagster_daemon" in names,
            "pipeline": "pipeline" in names,
            "live": bool(names & LIVE_FIXTURES or _servers_of(item)),
        }
        for name, applies in marks.items():
            if applies:
                item.add_marker(name)
                if name in ONE_WORKER:
                    item.add_marker(pytest.mark.xdist_group(name))
        if server := _fixed_names(item):
            item.add_marker(pytest.mark.xdist_group(f"{server}-fixed-names"))
    yield  # pytest's own reordering (by session parameters) and xdist's reading of the groups
    if "PYTEST_XDIST_WORKER" in os.environ:  # every worker sorts alike (a stable sort: the order within a group stays)
        ungrouped = [item.nodeid for item in items if item.get_closest_marker("xdist_group") and "@" not in item.nodeid]
        if ungrouped and config.getvalue("loadgroup"):  # xdist marks a group in the node id; pytest 9.2 ignores that
            raise pytest.UsageError(f"xdist did not group {ungrouped[0]} (pytest-xdist#1386): keep pytest below 9.2")
        items.sort(key=_long_first)


def _fixed_names(item) -> str | None:
    """The search server whose fixed index names (the default alias, ResourceSync's indices, the demo's) the test
    uses. Such tests hold that server's lock of the run (``live_servers.exclusive``), so they run on one xdist
    worker one after another, instead of one worker idling on the lock while the other holds it."""
    if item.path.name == "test_demo_live.py":
        return "opensearch"
    callspec = getattr(item, "callspec", None)
    server = callspec.params.get("search_backend") if callspec else None
    names = set(item.fixturenames)
    fixed = "search_target" in names or ("resourcesync" in item.path.parts and "es" in names)
    return server if server in SEARCH_SERVERS and fixed else None


def _long_first(item) -> int:
    return min((LONG_FIRST.index(mark.name) for mark in item.iter_markers() if mark.name in LONG_FIRST), default=len(LONG_FIRST))


def pytest_collection_finish(session) -> None:
    """The live servers the selected tests need (after ``-m``/``-k``) start now, in the background: their
    downloads and JVM start-ups overlap the tests that need no server (each xdist worker asks; the first starts)."""
    SERVERS_NEEDED.update(name for item in session.items for name in _servers_of(item))
    if SERVERS_NEEDED and not session.config.option.collectonly:
        _run_servers().start(*sorted(SERVERS_NEEDED))


SERVERS_NEEDED: set[str] = set()
_RUN_SERVERS: list[LiveServers] = []  # this process's view of the run's live servers (made on first use)


def _run_servers() -> LiveServers:
    if not _RUN_SERVERS:
        _RUN_SERVERS.append(LiveServers(run_folder(), STARTERS))
    return _RUN_SERVERS[0]


def _servers_of(item) -> set[str]:
    names = {n.removesuffix("_server") for n in item.fixturenames if n.endswith("_server")}
    callspec = getattr(item, "callspec", None)
    params = {v for v in callspec.params.values() if isinstance(v, str)} if callspec else set()
    return (names | params) & set(STARTERS)


@pytest.fixture(scope="session")
def shared_fixtures() -> Path:
    """``../shared/fixtures`` (third-party files: read in place, never copied)."""
    require(SHARED_FIXTURES.is_dir(), SHARED_MISSING)
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


@pytest.fixture
def s3_bucket(s3_endpoint) -> str:
    """A new bucket on the session's moto S3 server."""
    import boto3

    name = f"bucket-{uuid.uuid4().hex[:12]}"
    boto3.client("s3", endpoint_url=s3_endpoint).create_bucket(Bucket=name)
    return name


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


@pytest.fixture(scope="session")
def live_servers() -> LiveServers:
    """The run's live servers (shared by the xdist workers), started in the background after collection (every
    server the selected tests need). The run's owner stops them (``pytest_unconfigure``)."""
    servers = _run_servers()
    servers.start(*sorted(SERVERS_NEEDED))
    return servers


def _live(servers: LiveServers, name: str) -> Server:
    """The running server, or a skip (a failure in CI) saying why it could not be fetched or started."""
    try:
        return servers.get(name)
    except Unavailable as err:
        require(False, f"live {name} server unavailable: {err}")
        raise


def _server_fixture(name: str, about: str):
    """The session fixture ``<name>_server``: that live server of the run (a skip, a failure in CI, when it is
    unavailable)."""

    @pytest.fixture(scope="session", name=f"{name}_server")
    def server(live_servers) -> Server:
        return _live(live_servers, name)

    server.__doc__ = about
    return server


opensearch_server = _server_fixture("opensearch", "OpenSearch 2.19 (``url``: its HTTP root; with ``analysis-common``).")
elasticsearch_server = _server_fixture("elasticsearch", "Elasticsearch 8.19 (``url``: its HTTP root; security off; "
                                                         "no ``analysis-common``).")
fedora_server = _server_fixture("fedora", "Fedora 6.1: ``url`` is the REST root; ``facts['user']``/"
                                          "``facts['password']`` a ``fedoraAdmin``.")
fuseki_server = _server_fixture("fuseki", "Fuseki 5.6: ``url`` is the TDB2 dataset ``/ds`` (query, update, Graph "
                                          "Store at ``/ds/data``).")


@pytest.fixture(params=SEARCH_SERVERS)
def search_backend(request) -> str:
    """Which search server a test runs on: each of :data:`SEARCH_SERVERS`. A conftest may override it with more
    params (e.g. ``"embedded"`` for tests on both backends: ``es`` then skips), a test may pick one with
    ``@pytest.mark.parametrize("search_backend", ["opensearch"])``."""
    return request.param


@pytest.fixture
def es(request, search_backend) -> Iterator[SearchProxy]:
    """The one search endpoint of the tests: the live ``search_backend`` behind the recording proxy (``.url`` to
    connect to; ``.requests`` and ``.calls`` to assert; ``.fail_next``, ``.fail_items`` and ``.before_next`` to
    inject what a server cannot produce on cue; ``.raw`` to ask the server directly). The indices the test
    created are deleted after it. On Elasticsearch the proxy takes ``asciifolding`` out of created indices'
    analyzers: its test distribution lacks the module that provides it (the one difference from what the project
    sends)."""
    if search_backend not in SEARCH_SERVERS:
        pytest.skip(f"no search server in front of the {search_backend} backend")
    server = request.getfixturevalue(f"{search_backend}_server")
    proxy = SearchProxy(server.url, index_body=without_asciifolding if search_backend == "elasticsearch" else None)
    yield proxy
    proxy.close()


@pytest.fixture(scope="session")
def spark_avro_jar() -> Path:
    """spark-avro from Maven Central (for Spark's ``avro`` data source)."""
    try:
        return maven(SPARK_AVRO_PACKAGE)
    except Unavailable as err:
        require(False, f"spark-avro unavailable: {err}")
        raise


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
