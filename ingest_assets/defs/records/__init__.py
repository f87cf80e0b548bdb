"""Record pipeline wiring (DPLA Ingestion 3 style), built on the record partitions of the settings: the record
assets and their IO manager, quality checks, publishing (report, review gate, gated promotion of each provider's
index, the rebuild, their checks and the review sensor), the Parquet and JSON-L exports, the Wikimedia and tag sitemap
exports and the sensor running them after a publication, the refresh sensor, and the engine, search and publishing
resources."""

from functools import partial

import dagster as dg

from ingest_assets.defs.records.assets import PIPELINE_JOB, RECORDS, record_assets, retry_policy
from ingest_assets.defs.records.automation import after_publication, exports_sensor
from ingest_assets.defs.records.checks import quality_checks
from ingest_assets.defs.records.counts import record_counts
from ingest_assets.defs.records.io_managers import RecordIOManager
from ingest_assets.defs.records.jsonl import jsonl_asset, jsonl_storage
from ingest_assets.defs.records.parquet import parquet_asset
from ingest_assets.defs.records.partitions import record_partitions
from ingest_assets.defs.records.publishing import PublishingResource, publishing_assets, publishing_checks, review_sensor
from ingest_assets.defs.records.refresh import refresh_sensor
from ingest_assets.defs.records.relaunch import range_relaunch_sensor
from ingest_assets.defs.records.resources import RecordEngineResource, SearchIndexResource
from ingest_assets.defs.records.wikimedia_tags import wikimedia_tags_assets
from ingest_assets.defs.resources import shared_resources
from ingest_assets.core.settings import Settings, is_search_server


def build_defs(settings: Settings) -> dg.Definitions:
    partitions = record_partitions(settings.partition_start)
    shared = shared_resources(settings)
    job = dg.define_asset_job(
        PIPELINE_JOB,
        selection=dg.AssetSelection.groups(RECORDS),
        description="Harvest, map, enrich, report, review and publish one provider for one day.",
    )
    publish = dg.define_asset_job(
        "record_publish",
        selection=dg.AssetSelection.assets("review_gate").downstream() & dg.AssetSelection.groups(RECORDS),
        description="Publish a provider's day from its review gate on (for days approved after their run).",
    )
    search_kind = "elasticsearch" if is_search_server(settings.search) else "sqlite"
    retry = retry_policy(settings)
    automation = partial(after_publication, settings=settings, sql=shared["sql"])
    return dg.Definitions(
        assets=[*record_assets(partitions, retry), *publishing_assets(partitions, search_kind, RECORDS, retry),
                parquet_asset(partitions), jsonl_asset(partitions, retry, automation("jsonl_export")), record_counts,
                *wikimedia_tags_assets(partitions, settings, retry, automation)],
        asset_checks=[*quality_checks(partitions, settings.ui_url), *publishing_checks(partitions)],
        sensors=[refresh_sensor(job.name, settings.partition_start), review_sensor(publish.name),
                 range_relaunch_sensor(job), *([exports_sensor()] if settings.auto_exports else [])],
        jobs=[job, publish],
        resources={
            "record_io_manager": RecordIOManager(storage=shared["storage"]),
            "record_engine": RecordEngineResource.from_settings(settings),
            "search": SearchIndexResource(target=settings.search),
            "publishing": PublishingResource.from_settings(settings, shared["sql"]),
            "jsonl_storage": jsonl_storage(settings, shared["storage"]),
        },
    )
