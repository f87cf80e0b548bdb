"""All definitions: shared resources chosen from the environment, plus each capability's defs."""

from __future__ import annotations

import warnings

import dagster as dg

from ingest_assets.defs import datasets, linked_data, operations, records, repository, resourcesync
from ingest_assets.defs.records.io_managers import RecordIOManager
from ingest_assets.defs.providers import registry_partitions_sensor
from ingest_assets.defs.records.partitions import record_partitions
from ingest_assets.defs.linked_data.resources import TripleStoreResource
from ingest_assets.defs.records.resources import RecordEngineResource, SearchIndexResource
from ingest_assets.defs.repository.resources import RepositoryResource
from ingest_assets.defs.resourcesync.resources import ResourceSyncResource
from ingest_assets.defs.resources import RegistryResource, SqlResource, StorageResource
from ingest_assets.core.settings import Settings


def shared_resources(settings: Settings) -> dict[str, dg.ConfigurableResource]:
    storage = StorageResource(url=settings.storage_url)
    sql = SqlResource(url=settings.database_url)
    return {
        "storage": storage,
        "sql": sql,
        "registry": RegistryResource.keeping_copies_in(str(settings.registry_path), storage),
        "record_io_manager": RecordIOManager(storage=storage),
        "record_engine": RecordEngineResource.from_settings(settings),
        "search": SearchIndexResource(target=settings.search),
        "triplestore": TripleStoreResource.from_settings(settings),
        "repository": RepositoryResource.from_settings(settings),
        "resourcesync": ResourceSyncResource.from_settings(settings, sql),
    }


# Declarative automation (the linked-data export follows its graph) runs without anyone turning it on.
automation_sensor = dg.AutomationConditionSensorDefinition(
    "default_automation_condition_sensor",
    target=dg.AssetSelection.all(),
    default_status=dg.DefaultSensorStatus.RUNNING,
)


def build_definitions(settings: Settings | None = None) -> dg.Definitions:
    """Every capability's definitions; runs execute their steps in one process (a step's work is far cheaper than a
    subprocess that imports the code location)."""
    settings = settings or Settings.current()
    partitions = record_partitions(settings.partition_start)
    shared = dg.Definitions(
        resources=shared_resources(settings),
        sensors=[automation_sensor, registry_partitions_sensor],
        executor=dg.in_process_executor,
    )
    with warnings.catch_warnings():
        # features of the pinned Dagster we use on purpose: backfill policies (beta), partitioned checks (preview)
        warnings.simplefilter("ignore", dg.BetaWarning)
        warnings.simplefilter("ignore", dg.PreviewWarning)
        return dg.Definitions.merge(
            shared,
            records.build_defs(settings, partitions),
            linked_data.defs,
            repository.build_defs(settings),
            datasets.build_defs(settings),
            resourcesync.build_defs(partitions),
            operations.build_defs(settings),
        )


defs = build_definitions()
