"""Shared fixtures: real servers on 127.0.0.1 (moto S3, PostgreSQL, HTTP; OpenSearch, Elasticsearch, Fedora and
Fuseki from Maven Central, once per session) and the shared fixtures folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import pytest

from ingest_assets.records.engines.spark_avro import SPARK_AVRO_PACKAGE
from ingest_assets.storage import LocalStorage
from ingest_assets_tests.support import SHARED_FIXTURES, free_port, require
from ingest_assets_tests.support.elasticsearch import SearchProxy
from ingest_assets_tests.support.servers import LiveServers, Server, Unavailable, maven
from ingest_assets_tests.support.servers.fedora import start_fedora
from ingest_assets_tests.support.servers.fuseki import start_fuseki
from ingest_assets_tests.support.servers.search import start_elasticsearch, start_opensearch, without_asciifolding

# slow or server-heavy groups a developer can deselect: pytest -m "not browser and not spark"
GROUPS = {
    "browser": "headless Chromium against dagster-webserver",
    "spark": "Spark sessions and a standalone cluster (a JVM)",
    "postgres": "a private PostgreSQL server",
    "property": "Hypothesis property tests",
    "packaging": "builds the wheel and installs it into a fresh environment",
    "live": "real servers from Maven Central (OpenSearch, Elasticsearch, Fedora, Fuseki) and the spark-avro jar",
}
# a test is marked ``live`` when it uses one of these fixtures (a live server or a Maven Central artifact), or is
# a parametrization naming a live server (fixtures that pick their server with request.getfixturevalue)
LIVE_FIXTURES = {"live_servers", "opensearch_server", "elasticsearch_server", "fedora_server", "fuseki_server",
                 "search_server", "spark_avro_jar"}
LIVE_PARAMS = {"opensearch", "elasticsearch", "fedora", "fuseki"}
SEARCH_SERVERS = ("opensearch", "elasticsearch")


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
            "live": bool(names & LIVE_FIXTURES) or bool(LIVE_PARAMS & set(_params(item))),
        }
        SERVERS_NEEDED.update(_servers_of(item, names))
        for name, applies in marks.items():
            if applies:
                item.add_marker(name)


SERVERS_NEEDED: set[str] = set()  # the live servers the collected tests use: started together, in the background


def _servers_of(item, names: set[str]) -> set[str]:
    needed = {n.removesuffix("_server") for n in names if n.endswith("_server") and n != "search_server"}
    if "search_server" in names:
        needed.update(p for p in _params(item) if p in SEARCH_SERVERS)
    return (needed | (LIVE_PARAMS & set(_params(item)))) & {"opensearch", "elasticsearch", "fedora", "fuseki"}


def _params(item) -> list:
    callspec = getattr(item, "callspec", None)
    return [v for v in callspec.params.values() if isinstance(v, str)] if callspec else []


@pytest.fixture(scope="session")
def live_servers() -> Iterator[LiveServers]:
    """Every live server of the session, started when a test first needs it, stopped at the end."""
    servers = LiveServers({"opensearch": start_opensearch, "elasticsearch": start_elasticsearch,
                           "fedora": start_fedora, "fuseki": start_fuseki})
    servers.start(*sorted(SERVERS_NEEDED))  # every server the selected tests need, at once
    yield servers
    servers.stop_all()


def _live(servers: LiveServers, name: str) -> Server:
    """The running server, or a skip (a failure in CI) saying why it could not be fetched or started."""
    try:
        return servers.get(name)
    except Unavailable as err:
        require(False, f"live {name} server unavailable: {err}")
        raise


@pytest.fixture(scope="session")
def opensearch_server(live_servers) -> Server:
    return _live(live_servers, "opensearch")


@pytest.fixture(scope="session")
def elasticsearch_server(live_servers) -> Server:
    return _live(live_servers, "elasticsearch")


@pytest.fixture(scope="session")
def fedora_server(live_servers) -> Server:
    """Fedora 6.1: ``url`` is the REST root; ``facts["user"]``/``facts["password"]`` a ``fedoraAdmin``."""
    return _live(live_servers, "fedora")


@pytest.fixture(scope="session")
def fuseki_server(live_servers) -> Server:
    """Fuseki 5.6: ``url`` is the TDB2 dataset ``/ds`` (query, update, Graph Store at ``/ds/data``)."""
    return _live(live_servers, "fuseki")


@pytest.fixture(params=SEARCH_SERVERS)
def search_server(request) -> Iterator[SearchProxy]:
    """Each live search server behind the recording proxy (``.url`` to connect to; ``.calls``, ``.fail_next``,
    ``.fail_items``, ``.before_next`` and ``.raw`` to assert and inject); indices the test created are deleted
    after it. On Elasticsearch the proxy takes ``asciifolding`` out of created indices' analyzers: its test
    distribution lacks the module that provides it (the one difference from what the project sends)."""
    server = request.getfixturevalue(f"{request.param}_server")
    proxy = SearchProxy(server.url, index_body=without_asciifolding if request.param == "elasticsearch" else None)
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
