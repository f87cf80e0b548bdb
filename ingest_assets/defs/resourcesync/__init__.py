"""ResourceSync wiring: the publishing asset, an hourly schedule, and each record partition's changes."""

import dagster as dg

from ingest_assets.defs.resourcesync.assets import RESOURCESYNC, changes_asset, feed_indexed_records, resourcesync_documents


def build_defs(partitions: dg.MultiPartitionsDefinition) -> dg.Definitions:
    publish = dg.define_asset_job(
        "resourcesync_publish",
        selection=dg.AssetSelection.groups(RESOURCESYNC),
        description="Regenerate the ResourceSync documents from the resource index.",
    )
    return dg.Definitions(
        assets=[resourcesync_documents, changes_asset(partitions)],
        jobs=[publish],
        schedules=[
            dg.ScheduleDefinition(job=publish, cron_schedule="0 * * * *", default_status=dg.DefaultScheduleStatus.RUNNING)
        ],
    )


__all__ = ["build_defs", "feed_indexed_records"]
