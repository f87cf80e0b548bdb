"""Dataset ingest wiring: request files -> sensor -> one run per file -> results asset.

Uses the shared ``storage`` and ``sql`` resources (bound in ``ingest_assets.definitions``) and its own
``dataset_ingest`` resource.
"""

import os

import dagster as dg

from ingest_assets.defs.datasets.assets import DATASETS, dataset_ingest_results
from ingest_assets.defs.datasets.resources import DatasetIngestResource
from ingest_assets.defs.datasets.sensors import dataset_requests_sensor

dataset_ingest_job = dg.define_asset_job(
    "dataset_ingest",
    selection=dg.AssetSelection.groups(DATASETS),
    description="Process one file of dataset ingest requests (the sensor starts one run per file).",
)

_ia_keys = (
    {"ia_access_key": dg.EnvVar("IA_ACCESS_KEY"), "ia_secret_key": dg.EnvVar("IA_SECRET_KEY")}
    if os.environ.get("IA_ACCESS_KEY") and os.environ.get("IA_SECRET_KEY")
    else {}
)

defs = dg.Definitions(
    assets=[dataset_ingest_results],
    sensors=[dataset_requests_sensor],
    jobs=[dataset_ingest_job],
    resources={"dataset_ingest": DatasetIngestResource(**_ia_keys)},
)
