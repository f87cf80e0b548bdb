"""Repository ingest wiring: ingest + verification assets and their sensors (interval from the settings)."""

import dagster as dg

from ingest_assets.defs.repository.assets import repository_collections, repository_verification
from ingest_assets.defs.repository.sensors import harvesting_sensor, verification_sensor
from ingest_assets.core.settings import Settings


def build_defs(settings: Settings) -> dg.Definitions:
    ingest = dg.define_asset_job("repository_ingest", selection=[repository_collections])
    verification = dg.define_asset_job("repository_verification_run", selection=[repository_verification])
    return dg.Definitions(
        assets=[repository_collections, repository_verification],
        sensors=[harvesting_sensor(ingest.name, settings.repository_harvesting_interval), verification_sensor(verification.name)],
        jobs=[ingest, verification],
    )
