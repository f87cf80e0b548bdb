"""ResourceSync wiring: the publishing asset, an hourly schedule and the resource index resource."""

import dagster as dg

from ingest_assets.defs.resourcesync.assets import RESOURCESYNC, feed_indexed_records, resourcesync_changes, resourcesync_documents

resourcesync_publish_job = dg.define_asset_job(
    "resourcesync_publish",
    selection=dg.AssetSelection.groups(RESOURCESYNC),
    description="Regenerate the ResourceSync documents from the resource index.",
)

defs = dg.Definitions(
    assets=[resourcesync_documents, resourcesync_changes],
    jobs=[resourcesync_publish_job],
    schedules=[
        dg.ScheduleDefinition(
            job=resourcesync_publish_job, cron_schedule="0 * * * *", default_status=dg.DefaultScheduleStatus.RUNNING
        )
    ],
)

__all__ = ["defs", "feed_indexed_records"]
