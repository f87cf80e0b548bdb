"""Record pipeline wiring (DPLA Ingestion 3 style), built on the record partitions of the settings: the record
assets and their IO manager, quality checks, the search index, the Parquet export, the refresh sensor, and the
engine and search resources."""

import dagster as dg

from ingest_assets.defs.records.assets import RECORDS, record_assets
from ingest_assets.defs.records.checks import quality_checks
from ingest_assets.defs.records.counts import record_counts
from ingest_assets.defs.records.io_managers import RecordIOManager
from ingest_assets.defs.records.parquet import parquet_asset
from ingest_assets.defs.records.partitions import record_partitions
from ingest_assets.defs.records.refresh import refresh_sensor
from ingest_assets.defs.records.resources import RecordEngineResource, SearchIndexResource
from ingest_assets.defs.records.search import search_assets
from ingest_assets.defs.resources import shared_resources
from ingest_assets.core.settings import Settings, is_search_server


def build_defs(settings: Settings) -> dg.Definitions:
    partitions = record_partitions(settings.partition_start)
    job = dg.define_asset_job(
        "record_pipeline",
        selection=dg.AssetSelection.groups(RECORDS),
        description="Harvest, map, enrich and index one provider for one day.",
    )
    search_kind = "elasticsearch" if is_search_server(settings.search) else "sqlite"
    return dg.Definitions(
        assets=[*record_assets(partitions), *search_assets(partitions, search_kind), parquet_asset(partitions), record_counts],
        asset_checks=quality_checks(partitions),
        sensors=[refresh_sensor(job.name, settings.partition_start)],
        jobs=[job],
        resources={
            "record_io_manager": RecordIOManager(storage=shared_resources(settings)["storage"]),
            "record_engine": RecordEngineResource.from_settings(settings),
            "search": SearchIndexResource(target=settings.search),
        },
    )
