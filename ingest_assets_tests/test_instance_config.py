"""dagster.yaml loads as an instance and carries the per-provider run limits the code relies on."""

import shutil
from pathlib import Path

import dagster as dg

from ingest_assets.defs.linked_data.sensors import PROVIDER_TAG

ROOT = Path(__file__).resolve().parents[1]


def test_instance_yaml_limits_one_run_per_provider(tmp_path):
    shutil.copy(ROOT / "dagster.yaml", tmp_path / "dagster.yaml")
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        limits = {limit["key"]: limit for limit in instance.get_concurrency_config().run_queue_config.tag_concurrency_limits}
    assert limits["dagster/partition/provider"]["limit"] == 1
    assert limits[PROVIDER_TAG]["value"] == {"applyLimitPerUniqueValue": True}
