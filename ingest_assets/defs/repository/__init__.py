"""Repository ingest wiring (issue 6): ingest + verification assets, their sensors, the repository resource."""

import dagster as dg

from ingest_assets.defs.repository.assets import repository_collections, repository_verification
from ingest_assets.defs.repository.sensors import (
    repository_harvesting_sensor,
    repository_ingest_job,
    repository_verification_job,
    repository_verification_sensor,
)

defs = dg.Definitions(
    assets=[repository_collections, repository_verification],
    sensors=[repository_harvesting_sensor, repository_verification_sensor],
    jobs=[repository_ingest_job, repository_verification_job],
)
