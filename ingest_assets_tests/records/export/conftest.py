"""A provider published without Dagster for the JSON-L export's tests: Zenodo's recorded OAI-PMH page (7 records,
read in place) harvested from its file, mapped with oai_dc, enriched, indexed and published day by day through the
gates on an embedded index."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from ingest_assets.core.http import HttpClient
from ingest_assets.core.registry import ProviderEntry
from ingest_assets.core.sql import make_engine
from ingest_assets.records.harvest import StorageCheckpoint, harvest_records
from ingest_assets.records.indexing import EmbeddedSearchIndex
from ingest_assets.records.publishing.journal import Journal
from ingest_assets.records.publishing.promotion import Publisher
from ingest_assets.records.publishing.review import Ledger
from ingest_assets.records.publishing.takedowns import Takedowns
from ingest_assets.storage import LocalStorage
from ingest_assets_tests.support.jsonl import DayClock

OAI = "http://www.openarchives.org/OAI/2.0/"


@pytest.fixture
def zenodo_entry(shared_fixtures) -> ProviderEntry:
    return ProviderEntry("zenodo", {
        "mapping": "oai_dc", "label": "Zenodo", "mapping_overrides": {"dataProvider": {"default": "Zenodo"}},
        "harvest": {"type": "file", "format": "xml", "path": str(shared_fixtures / "oai-pmh" / "zenodo-listrecords-oai_dc.xml"),
                    "record_xpath": "//oai:record", "id_xpath": "oai:header/oai:identifier", "namespaces": {"oai": OAI}}})


@pytest.fixture
def zenodo_records(zenodo_entry, tmp_path) -> list[dict]:
    """The 7 OriginalRecords of the page, as the file harvest reads them."""
    run = harvest_records(zenodo_entry, started=datetime(2026, 3, 1, 2, tzinfo=timezone.utc), window=None,
                          http=HttpClient(), checkpoint=StorageCheckpoint(LocalStorage(tmp_path / "checkpoints"), "zenodo"))
    return list(run)


@pytest.fixture
def storage(tmp_path) -> LocalStorage:
    return LocalStorage(tmp_path / "storage")


@pytest.fixture
def publisher(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'ingest.sqlite3'}")
    clock = DayClock(datetime(2026, 3, 1, 3, tzinfo=timezone.utc))
    index = EmbeddedSearchIndex(tmp_path / "search", clock=clock)
    yield Publisher(index, "dpla-map4", Journal(engine), Ledger(engine), Takedowns(engine), clock=clock)
    index.close()
    engine.dispose()


@pytest.fixture
def recorded_s3(s3_endpoint):
    """moto's S3 behind a proxy that logs every request (method, path) in order."""
    from ingest_assets_tests.support.faults import FaultProxy

    proxy = FaultProxy(s3_endpoint)
    yield proxy
    proxy.close()


@pytest.fixture
def jsonl_hub(tmp_path, monkeypatch):
    """A hub whose record pipeline runs on Dagster (demo OAI-PMH endpoints, the embedded index), exporting JSON-L to
    a root of its own (``INGEST_JSONL_ROOT``)."""
    import dagster as dg

    from ingest_assets.core.settings import Settings
    from ingest_assets_tests.support.publishing import PipelineHub

    (tmp_path / "dagster").mkdir()
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    registry = tmp_path / "registry.yaml"
    settings = Settings.from_env({"INGEST_HOME": str(tmp_path / "home"), "INGEST_REGISTRY": str(registry),
                                  "INGEST_SEARCH": str(tmp_path / "search"),
                                  "INGEST_JSONL_ROOT": str(tmp_path / "master-dataset")})
    with dg.DagsterInstance.get() as instance:
        hub = PipelineHub(settings, instance, registry)
        yield hub
        hub.close()
