"""Repository ingest wiring: ingest + verification assets, their sensors (interval from the settings) and the
repository resource (Fedora 6 or OCFL)."""

import dagster as dg

from ingest_assets.defs.repository.assets import repository_assets
from ingest_assets.defs.repository.resources import RepositoryResource
from ingest_assets.defs.repository.sensors import harvesting_sensor, verification_sensor
from ingest_assets.core.settings import Settings


def build_defs(settings: Settings) -> dg.Definitions:
    repository_collections, repository_verification = repository_assets(settings)
    ingest = dg.define_asset_job("repository_ingest", selection=[repository_collections])
    verification = dg.define_asset_job("repository_verification_run", selection=[repository_verification])
    return dg.Definitions(
        assets=[repository_collections, repository_verification],
        sensors=[harvesting_sensor(ingest.name, settings.repository_harvesting_interval), verification_sensor(verification.name)],
        jobs=[ingest, verification],
        resources={"repository": RepositoryResource.from_settings(settings)},
    )
