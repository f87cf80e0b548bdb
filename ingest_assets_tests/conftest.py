"""Shared fixtures: real servers on 127.0.0.1 (moto S3, PostgreSQL, HTTP; OpenSearch, Elasticsearch, Fedora and
Fuseki from Maven Central, once per test run) and the shared fixtures folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ingest_assets.core.wsgi import WsgiServer
from ingest_assets.records.engines.spark_avro import SPARK_AVRO_PACKAGE
from ingest_assets.storage import LocalStorage
from ingest_assets_tests.support import SHARED_FIXTURES, free_port, require
from ingest_assets_tests.support.elasticsearch import SearchProxy
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
    "packaging": "builds the wheel and installs it into a fresh environment",
    "dg": "Dagster's dg CLI loading the project in subprocesses (check, list, launch)",
    "hostile": "the reliability suite (ingest_assets_tests/hostile/): SIGKILLed writers, memory-capped workers",
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


def pytest_unconfigure(config) -> None:
    if LIVE_RUN in config.stash:
        close_run(config.stash[LIVE_RUN])


def pytest_terminal_summary(terminalreporter, config) -> None:
    """How long each live server took to be ready (download included when it was not cached)."""
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
            "pipeline": "pipeline" in names,
            "live": bool(names & LIVE_FIXTURES or _servers_of(item)),
        }
        for name, applies in marks.items():
            if applies:
                item.add_marker(name)


def pytest_collection_finish(session) -> None:
    """The live servers the selected tests need (after ``-m``/``-k``), to start together with the first of them."""
    SERVERS_NEEDED.update(name for item in session.items for name in _servers_of(item))


SERVERS_NEEDED: set[str] = set()


def _servers_of(item) -> set[str]:
    names = {n.removesuffix("_server") for n in item.fixturenames if n.endswith("_server")}
    callspec = getattr(item, "callspec", None)
    params = {v for v in callspec.params.values() if isinstance(v, str)} if callspec else set()
    return (names | params) & set(STARTERS)


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


def _pg_bindir() -> Path | None:
    for candidate in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (candidate / "initdb").exists():
            return candidate
    found = shutil.which("initdb")
    return Path(found).parent if found else None


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """A private PostgreSQL server (initdb + pg_ctl on a free port), as a SQLAlchemy URL."""
    bindir = _pg_bindir()
    require(bindir is not None, "PostgreSQL server binaries not installed (.ci/run installs them)")
    base = Path(tempfile.mkdtemp(prefix="ingest-pg-"))  # outside pytest's 0700 tree: postgres must reach it
    data, sockets = base / "data", base / "sock"
    sockets.mkdir()
    port = free_port()
    as_user: list[str] = []
    if os.geteuid() == 0:  # initdb refuses to run as root
        subprocess.run(["chown", "-R", "postgres", str(base)], check=True)
        as_user = ["runuser", "-u", "postgres", "--"]
    subprocess.run(
        [*as_user, str(bindir / "initdb"), "-D", str(data), "-U", "ingest", "--auth=trust", "-E", "UTF8"],
        check=True,
        capture_output=True,
    )
    options = f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run(
        [*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(data / "log"), "-w", "start"],
        check=True,
        capture_output=True,
    )
    try:
        subprocess.run(
            [str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "ingest", "ingest"],
            check=True,
            capture_output=True,
        )
        yield f"postgresql+psycopg://ingest@127.0.0.1:{port}/ingest"
    finally:
        subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "stop"], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def live_servers() -> LiveServers:
    """The run's live servers (shared by the xdist workers), started when a test first needs one: then every
    server the selected tests need starts at once. The run's owner stops them (``pytest_unconfigure``)."""
    servers = LiveServers(run_folder(), STARTERS)
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
def replay_source(http_server, shared_fixtures) -> Callable[[str], Replay]:
    """``replay_source("pucrio")`` -> a :class:`Replay` of ``../shared/fixtures/replays/pucrio`` on 127.0.0.1."""

    def start(name: str) -> Replay:
        app = Replay(shared_fixtures / "replays" / name)
        app.base = http_server(app=app)
        return app

    return start
