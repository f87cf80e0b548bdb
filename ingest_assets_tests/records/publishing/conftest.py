"""A publisher on a test database and the search index of ``search_target`` (embedded or Elasticsearch)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from ingest_assets.core.sql import make_engine
from ingest_assets.records.publishing.journal import Journal
from ingest_assets.records.publishing.promotion import Publisher
from ingest_assets.records.publishing.review import Ledger
from ingest_assets.records.publishing.takedowns import Takedowns

ALIAS = "dpla-map4"


class Clock:
    """A clock that moves one second per reading: each build gets its own index name."""

    def __init__(self):
        self.now = datetime(2026, 1, 15, 3, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def engine(tmp_path):
    return make_engine(f"sqlite:///{tmp_path / 'ingest.sqlite3'}")


@pytest.fixture
def publisher(search, engine, clock):
    return Publisher(search, ALIAS, Journal(engine), Ledger(engine), Takedowns(engine), retain=2, clock=clock)


@pytest.fixture
def pipeline(tmp_path, search_target, monkeypatch):
    """A hub whose record pipeline runs on ``search_target`` (embedded or Elasticsearch), with ``DAGSTER_HOME``
    and the settings every command reads pointing at the test's folders."""
    import dagster as dg

    from ingest_assets.core.settings import Settings
    from ingest_assets_tests.support.publishing import PipelineHub

    home = tmp_path / "dagster"
    home.mkdir()
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    registry = tmp_path / "registry.yaml"
    settings = Settings.from_env({"INGEST_HOME": str(tmp_path / "home"), "INGEST_REGISTRY": str(registry),
                                  "INGEST_SEARCH": search_target})
    with dg.DagsterInstance.get() as instance:
        hub = PipelineHub(settings, instance, registry)
        monkeypatch.setattr(Settings, "current", staticmethod(lambda: hub.settings))  # what the commands read
        yield hub
        hub.close()
