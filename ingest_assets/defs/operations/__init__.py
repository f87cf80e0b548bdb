"""Operations wiring: the registry's health as a check, the hub status asset (its table in the UI, its page beside
the ResourceSync documents) refreshed after runs, the sensor that records and announces failed runs, and the one that
fails runs whose worker died (so the instance's run retries take them up again)."""

import dagster as dg

from ingest_assets.core.settings import Settings
from ingest_assets.defs.operations.failures import failure_sensor
from ingest_assets.defs.operations.orphans import orphaned_runs_sensor
from ingest_assets.defs.operations.registry import entries_load, provider_registry, registry_health_sensor
from ingest_assets.defs.operations.status import hub_status, hub_status_job, hub_status_sensor
from ingest_assets.operations.notify import notifiers


def build_defs(settings: Settings) -> dg.Definitions:
    channels = notifiers(settings)
    return dg.Definitions(
        assets=[provider_registry, hub_status],
        asset_checks=[entries_load],
        jobs=[hub_status_job],
        sensors=[registry_health_sensor(channels, settings.ui_url), hub_status_sensor,
                 failure_sensor(channels, settings.ui_url), orphaned_runs_sensor],
    )
