"""Where a search index lives for record tests that run on both backends (``search_target``: an embedded
directory, or the URL of the one ``es`` endpoint of ``ingest_assets_tests/conftest.py``), and ``search``, the
index opened there; and MAPRecords built from DPLA's documents in ``../shared/fixtures/dpla`` (read in place)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from ingest_assets.records.indexing import DEFAULT_ALIAS, open_search_index
from ingest_assets_tests.support.dpla import map_record_from_es
from ingest_assets_tests.support.servers.search import SEARCH_SERVERS


@pytest.hookimpl(tryfirst=True)  # before the fixture's own params are applied
def pytest_generate_tests(metafunc) -> None:
    """A test on ``search_target`` runs on the embedded backend too, unless it takes ``es`` (a server's fault). A
    whole pipeline scenario (``pipeline``: minutes of Dagster runs) runs on the embedded index and one server,
    OpenSearch: what it asks of a server is the SearchIndex API, whose index, promotion and rollback tests run on
    both servers."""
    chosen = any("search_backend" in m.args[0] for m in metafunc.definition.iter_markers("parametrize"))
    if "search_target" in metafunc.fixturenames and "es" not in metafunc.fixturenames and not chosen:
        servers = SEARCH_SERVERS[:1] if "pipeline" in metafunc.fixturenames else SEARCH_SERVERS
        metafunc.parametrize("search_backend", ["embedded", *servers])


@pytest.fixture
def search_target(request, search_backend, tmp_path) -> Iterator[str]:
    """``INGEST_SEARCH`` for a test on every backend: a directory (embedded), or the URL of ``es`` (the live
    server behind the recording proxy), the index names under the default alias to this test alone among the
    run's processes (they are fixed)."""
    if search_backend == "embedded":
        yield str(tmp_path / "search")
        return
    es = request.getfixturevalue("es")
    with request.getfixturevalue("live_servers").exclusive(f"{search_backend}-fixed-names"):
        yield es.url
        es.close()  # its indices deleted before another process may create them


@pytest.fixture
def search(search_target, clock):
    """The search index at ``search_target`` whose build times come from ``clock``; afterwards every index of the
    default alias is dropped (a live cluster keeps nothing of the test)."""
    index = open_search_index(search_target, clock=clock)
    yield index
    for physical in index.indices(DEFAULT_ALIAS):
        index.drop(physical.name)
    index.close()


@pytest.fixture(scope="session")
def dpla_sources(shared_fixtures) -> list[dict]:
    """``_source`` of the DPLA API search hits and of the legacy Kentucky document (read in place)."""
    api = json.loads((shared_fixtures / "dpla" / "dpla-api-es-item-search-list.json").read_text("utf-8"))
    legacy = json.loads((shared_fixtures / "dpla" / "dpla-legacy-map-es-doc-kentucky-retcon.json").read_text("utf-8"))
    return [hit["_source"] for hit in api["hits"]["hits"]] + [legacy["_source"]]


@pytest.fixture(scope="session")
def map_records(dpla_sources) -> list[dict]:
    return [map_record_from_es(source) for source in dpla_sources]
