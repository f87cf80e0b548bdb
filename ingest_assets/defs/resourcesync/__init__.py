"""ResourceSync wiring: the publishing asset, an hourly schedule, each record partition's changes, and the
ResourceSync resource every capability's change feed uses (its index in the shared ``sql`` database)."""

import dagster as dg

from ingest_assets.core.settings import Settings
from ingest_assets.defs.records.partitions import record_partitions
from ingest_assets.defs.resources import shared_resources
from ingest_assets.defs.resourcesync.assets import RESOURCESYNC, changes_asset, feed_indexed_records, resourcesync_documents
from ingest_assets.defs.resourcesync.resources import ResourceSyncResource


def build_defs(settings: Settings) -> dg.Definitions:
    partitions = record_partitions(settings.partition_start)
    publish = dg.define_asset_job(
        "resourcesync_publish",
        selection=dg.AssetSelection.groups(RESOURCESYNC),
        description="Regenerate the ResourceSync documents from the resource index.",
    )
    return dg.Definitions(
        assets=[resourcesync_documents, changes_asset(partitions)],
        resources={"resourcesync": ResourceSyncResource.from_settings(settings, shared_resources(settings)["sql"])},
        jobs=[publish],
        schedules=[
            dg.ScheduleDefinition(job=publish, cron_schedule="0 * * * *", default_status=dg.DefaultScheduleStatus.RUNNING)
        ],
    )


__all__ = ["build_defs", "feed_indexed_records"]
