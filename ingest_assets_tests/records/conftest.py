"""Search endpoints for the record tests: the recording fake Elasticsearch (or a proxy to ELASTICSEARCH_URL, so the
same tests assert the same request bodies against a real cluster), and ``search_target``, where a search index
lives for tests that run on both backends: an embedded directory or that endpoint's URL."""

from __future__ import annotations

import os

import pytest

from ingest_assets.records.indexing import DEFAULT_ALIAS, open_search_index
from ingest_assets_tests.support.elasticsearch import FakeElasticsearch


@pytest.fixture(params=["fake", "live"])
def es(request):
    """A recording Elasticsearch endpoint: the in-memory model, or a proxy to ELASTICSEARCH_URL."""
    upstream = os.environ.get("ELASTICSEARCH_URL")
    if request.param == "live" and not upstream:
        pytest.skip("ELASTICSEARCH_URL is not set")
    fake = FakeElasticsearch(upstream if request.param == "live" else None)
    yield fake
    fake.close()


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
