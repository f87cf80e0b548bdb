"""Where a search index lives for record tests that run on both backends (``search_target``: an embedded
directory, or the URL of the one ``es`` endpoint of ``ingest_assets_tests/conftest.py``), and ``search``, the
index opened there; and MAPRecords built from DPLA's documents in ``../shared/fixtures/dpla`` (read in place)."""

from __future__ import annotations

import json

import pytest

from ingest_assets.records.indexing import DEFAULT_ALIAS, open_search_index
from ingest_assets_tests.support.dpla import map_record_from_es


@pytest.fixture(params=["embedded", "elasticsearch"])
def search_target(request, es, tmp_path) -> str:
    """``INGEST_SEARCH`` for a test on both backends: a directory (embedded), or the URL of ``es``."""
    if request.param == "embedded":
        if es.upstream:
            pytest.skip("the embedded index runs once, beside the fake")
        return str(tmp_path / "search")
    return es.url


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
