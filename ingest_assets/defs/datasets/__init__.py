"""Dataset ingest wiring: request files -> sensor -> one run per file -> results asset.

Uses the shared ``storage`` and ``sql`` resources (bound in :mod:`ingest_assets.defs.shared`) and binds its own
``dataset_ingest`` resource.
"""

import dagster as dg

from ingest_assets.defs.datasets.assets import DATASETS, dataset_ingest_results
from ingest_assets.defs.datasets.resources import DatasetIngestResource
from ingest_assets.defs.datasets.sensors import dataset_requests_sensor
from ingest_assets.core.settings import Settings

dataset_ingest_job = dg.define_asset_job(
    "dataset_ingest",
    selection=dg.AssetSelection.groups(DATASETS),
    description="Process one file of dataset ingest requests (the sensor starts one run per file).",
)


def build_defs(settings: Settings) -> dg.Definitions:
    """The archive.org keys are bound as ``dg.EnvVar`` (never shown in the UI) when both are set."""
    keys = ("IA_ACCESS_KEY", "IA_SECRET_KEY")
    ia_keys = (
        {"ia_access_key": dg.EnvVar(keys[0]), "ia_secret_key": dg.EnvVar(keys[1])}
        if all(settings.secret(k) for k in keys)
        else {}
    )
    return dg.Definitions(
        assets=[dataset_ingest_results],
        sensors=[dataset_requests_sensor],
        jobs=[dataset_ingest_job],
        resources={"dataset_ingest": DatasetIngestResource(**ia_keys)},
    )
