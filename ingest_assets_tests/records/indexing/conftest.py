"""Fixtures for indexing tests (the search servers are the one ``es`` fixture of ``ingest_assets_tests/conftest.py``:
the tests assert the request bodies while OpenSearch and Elasticsearch answer; where an index lives and the
MAPRecords built from DPLA's documents, ``records/conftest.py``)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ingest_assets_tests.support.elasticsearch import REJECTED_REQUEST

BUILD_TIME = datetime(2026, 11, 22, 3, 0, 0, tzinfo=UTC)


@pytest.fixture
def rejected_request() -> dict:
    """The body of a 429 whole-request rejection (indexing pressure), as Elasticsearch sends it."""
    return REJECTED_REQUEST


@pytest.fixture
def alias() -> str:
    """A fresh alias per test, so runs against a live cluster never collide."""
    return f"ingest-test-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def build_clock():
    """A clock fixed at BUILD_TIME: physical index names are predictable."""
    return lambda: BUILD_TIME


@pytest.fixture
def clock(build_clock):
    """The clock of the ``search`` fixture's index."""
    return build_clock


@pytest.fixture(scope="session")
def mapping_file() -> Path:
    return Path(__file__).resolve().parents[3] / "ingest_assets" / "schemas" / "search-dpla-map4-mapping.json"
