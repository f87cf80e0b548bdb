"""Where a search index lives for record tests that run on both backends (``search_target``: an embedded
directory, or the URL of the one ``es`` endpoint of ``ingest_assets_tests/conftest.py``), and ``search``, the
index opened there."""

from __future__ import annotations

import pytest

from ingest_assets.records.indexing import DEFAULT_ALIAS, open_search_index


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
