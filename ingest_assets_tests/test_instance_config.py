"""The shipped dagster.yaml loads as an instance and carries the per-provider run limits the code relies on."""

import shutil
from pathlib import Path

import dagster as dg

from ingest_assets.defs.linked_data.sensors import PROVIDER_TAG

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "dagster.yaml"  # written into $INGEST_HOME/dagster by the commands


def test_instance_yaml_limits_one_run_per_provider(tmp_path):
    shutil.copy(SHIPPED, tmp_path / "dagster.yaml")
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        limits = {limit["key"]: limit for limit in instance.get_concurrency_config().run_queue_config.tag_concurrency_limits}
    assert limits["dagster/partition/provider"]["limit"] == 1
    assert limits[PROVIDER_TAG]["value"] == {"applyLimitPerUniqueValue": True}


def test_production_instance_keeps_everything_in_postgres_with_the_same_limits(tmp_path, pg_url, monkeypatch):
    import yaml

    development, production = (yaml.safe_load(path.read_text()) for path in (SHIPPED, ROOT / "deploy/postgres/dagster.yaml"))
    for section in ("concurrency", "run_retries", "run_monitoring"):
        assert production[section] == development[section], section
    shutil.copy(ROOT / "deploy" / "postgres" / "dagster.yaml", tmp_path / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_POSTGRES_URL", pg_url.replace("+psycopg:", "+psycopg2:"))
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        storages = {type(s).__name__ for s in (instance.run_storage, instance.event_log_storage, instance.schedule_storage)}
        assert storages == {"PostgresRunStorage", "PostgresEventLogStorage", "PostgresScheduleStorage"}
        instance.add_dynamic_partitions("record_providers", ["demo"])
        assert instance.get_dynamic_partitions("record_providers") == ["demo"]


def test_instance_yaml_ends_runs_whose_worker_never_started_or_died(tmp_path):
    """A run a dead daemon left STARTING is failed by Dagster's run monitoring after its start timeout, one left
    STARTED by the orphaned_runs_sensor; either is then retried as a whole run (not after a step's own failure)."""
    shutil.copy(SHIPPED, tmp_path / "dagster.yaml")
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        assert instance.run_monitoring_enabled and 0 < instance.run_monitoring_start_timeout_seconds <= 300
        assert instance.run_retries_enabled and instance.run_retries_max_retries >= 1
        assert not instance.run_retries_retry_on_asset_or_op_failure
