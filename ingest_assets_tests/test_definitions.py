"""All capabilities load as one code location with the shared, settings-selected resources."""

import subprocess
import sys
from datetime import datetime, timezone

import dagster as dg
import pytest
from sqlalchemy import text

from ingest_assets.definitions import build_definitions
from ingest_assets.defs.resources import shared_resources
from ingest_assets.defs.resources import SqlResource
from ingest_assets.defs.resourcesync.resources import ResourceSyncResource
from ingest_assets.resourcesync.events import record_event
from ingest_assets.resourcesync.model import ResourceSet
from ingest_assets.core.settings import Settings


def test_everything_loads_as_one_code_location(tmp_path):
    defs = build_definitions(Settings.from_env({"INGEST_HOME": str(tmp_path)}))
    dg.Definitions.validate_loadable(defs)
    repository = defs.get_repository_def()
    assert {job.name for job in repository.get_all_jobs() if not job.name.startswith("__")} >= {
        "record_pipeline", "record_publish", "repository_ingest", "repository_verification_run", "resourcesync_publish",
        "dataset_ingest",
    }
    assert {s.name for s in repository.sensor_defs} >= {
        "registry_partitions_sensor", "repository_harvesting_sensor", "repository_verification_sensor",
        "dataset_requests_sensor", "linked_data_void_sensor", "record_refresh_sensor", "review_sensor",
    }
    assert defs.resolve_sensor_def("linked_data_void_sensor").minimum_interval_seconds == 60
    assert {"linked_data/provider_graph", "linked_data/export"} <= {k.to_user_string() for k in defs.resolve_all_asset_keys()}
    pipeline = {key.to_user_string() for key in defs.resolve_job_def("record_pipeline").asset_layer.executable_asset_keys}
    assert pipeline == {
        "original_records", "mapped_records", "enriched_records", "indexed_records", "provider_report", "review_gate",
        "search_index", "resourcesync_changes",
    }
    publish = {key.to_user_string() for key in defs.resolve_job_def("record_publish").asset_layer.executable_asset_keys}
    assert publish == {"review_gate", "search_index", "resourcesync_changes"}


def test_everything_automatic_starts_running_and_runs_in_one_process(tmp_path):
    defs = build_definitions(Settings.from_env({"INGEST_HOME": str(tmp_path)}))
    repository = defs.get_repository_def()
    running = dg.DefaultSensorStatus.RUNNING
    assert {s.name: s.default_status for s in repository.sensor_defs} == {
        name: running
        for name in (
            "registry_partitions_sensor", "repository_harvesting_sensor", "repository_verification_sensor",
            "dataset_requests_sensor", "linked_data_void_sensor", "default_automation_condition_sensor",
            "record_refresh_sensor", "registry_health_sensor", "hub_status_sensor", "failure_sensor", "review_sensor",
            "orphaned_runs_sensor", "range_relaunch_sensor",
        )
    }
    assert {s.name: s.default_status for s in repository.schedule_defs} == {
        "resourcesync_publish_schedule": dg.DefaultScheduleStatus.RUNNING
    }
    assert defs.resolve_job_def("record_pipeline").executor_def is dg.in_process_executor


def _partitions(defs, key):
    return defs.resolve_assets_def(key).partitions_def


def test_settings_choose_the_first_day_and_each_capability_its_providers(tmp_path):
    defs = build_definitions(Settings.from_env({"INGEST_HOME": str(tmp_path), "INGEST_PARTITION_START": "2020-01-01"}))
    records = _partitions(defs, "original_records")
    assert records.get_partitions_def_for_dimension("date").start.date().isoformat() == "2020-01-01"
    assert records.get_partitions_def_for_dimension("provider").name == "record_providers"
    for key in ("mapped_records", "indexed_records", "provider_report", "review_gate", "search_index",
                "resourcesync_changes", "enriched_parquet", "jsonl_export"):
        assert _partitions(defs, key) == records
    assert _partitions(defs, dg.AssetKey(["linked_data", "provider_graph"])).name == "linked_data_providers"
    assert _partitions(defs, "repository_collections").name == "repository_providers"
    later = build_definitions(Settings.from_env({"INGEST_HOME": str(tmp_path), "INGEST_PARTITION_START": "2026-03-01"}))
    assert _partitions(later, "original_records").get_partitions_def_for_dimension("date").start.date().isoformat() == "2026-03-01"


def test_quality_checks_are_partitioned_like_their_assets(tmp_path):
    defs = build_definitions(Settings.from_env({"INGEST_HOME": str(tmp_path)}))
    checks = {(spec.asset_key.to_user_string(), spec.name): spec for checks in defs.asset_checks
              for spec in checks.check_specs
              if spec.asset_key != dg.AssetKey("provider_registry")}  # the registry's own check: not partitioned
    gates = ("index_queryable", "index_count", "index_health", "index_fields", "index_canary")
    assert set(checks) == {
        ("original_records", "harvest_count_drop"), ("mapped_records", "mapping_failure_rate"),
        ("original_records", "harvest_reconciles"), ("mapped_records", "mapping_reconciles"),
        ("indexed_records", "indexing_reconciles"),
        *(("search_index", gate) for gate in gates), *(("search_index_rebuild", gate) for gate in gates)}
    for spec in checks.values():
        assert spec.partitions_def == _partitions(defs, spec.asset_key)
        assert spec.blocking


def test_search_index_names_its_backend(tmp_path):
    embedded = build_definitions(Settings.from_env({"INGEST_HOME": str(tmp_path)}))
    served = build_definitions(Settings.from_env({"INGEST_HOME": str(tmp_path), "INGEST_SEARCH": "http://es:9200"}))
    assert embedded.resolve_assets_def("search_index").specs_by_key[dg.AssetKey("search_index")].kinds == {"sqlite"}
    assert served.resolve_assets_def("search_index").specs_by_key[dg.AssetKey("search_index")].kinds == {"elasticsearch"}


LOAD = """
import subprocess, sys
started = []
popen = subprocess.Popen.__init__
def spy(self, args, *rest, **options):
    started.append(args if isinstance(args, str) else " ".join(map(str, args)))
    popen(self, args, *rest, **options)
subprocess.Popen.__init__ = spy
import ingest_assets.definitions
imported = [m for m in ("sqlalchemy", "elasticsearch", "boto3", "pyoxigraph") if m in sys.modules]
ingest_assets.definitions.defs()  # what dagster dev, dg and the daemon do when they load the code location
loaded = [m for m in ("sqlalchemy", "elasticsearch", "boto3", "pyoxigraph") if m in sys.modules]
print(imported, loaded, [p for p in started if "git" in p])
"""


def test_loading_the_code_location_opens_no_backend_library_and_runs_no_git():
    """Importing the definitions builds nothing; loading them opens no backend library, not pyoxigraph either (the
    linked-data domain loads with its first run), and asks git nothing (the version is worked out on first use)."""
    out = subprocess.run([sys.executable, "-c", LOAD], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[] [] []"


def test_a_sensor_gets_the_resourcesync_index_in_the_database_of_the_sql_resource(tmp_path):
    settings = Settings.from_env({"INGEST_HOME": str(tmp_path)})
    when = datetime(2026, 1, 5, 9, tzinfo=timezone.utc)

    @dg.sensor(target=[])
    def records_an_event(context, resourcesync: ResourceSyncResource, sql: SqlResource):
        assert resourcesync.get_client() is resourcesync.get_client()  # opened once, kept for the evaluation
        record_event(resourcesync.get_client(), ResourceSet("set1", "https://x.org/set1/"), "a.txt", "created", when, when)
        with sql.get_client().connect() as connection:
            return dg.SkipReason(str(connection.execute(text("SELECT loc_value FROM rs_change")).scalar_one()))

    resources = build_definitions(settings).resources  # as the code location binds them
    assert resources["resourcesync"].sql is resources["sql"] is shared_resources(settings)["sql"]  # one sql resource
    with dg.build_sensor_context(resources=resources) as context:
        assert records_an_event(context).skip_message == "a.txt"
    assert (tmp_path / "ingest.sqlite3").is_file()


@pytest.mark.parametrize("env, delays", [
    ({}, [20, 60]),  # the default: a source that refuses connections fails the step within about 90 s
    ({"INGEST_STEP_RETRIES": "3", "INGEST_STEP_RETRY_DELAY": "30"}, [30, 90, 210]),
])
def test_record_steps_retry_as_the_settings_say(tmp_path, env, delays):
    """Retried INGEST_STEP_RETRIES times, (2^n - 1) x INGEST_STEP_RETRY_DELAY s after each failure (no jitter):
    the delays Dagster computes from the policy each record step carries."""
    defs = build_definitions(Settings.from_env({"INGEST_HOME": str(tmp_path), **env}))
    for asset in ("original_records", "mapped_records", "enriched_records", "indexed_records", "provider_report",
                  "search_index"):
        policy = defs.resolve_assets_def(asset).node_def.retry_policy
        assert policy.max_retries == len(delays) and policy.jitter is None, asset
        assert [policy.calculate_delay(attempt) for attempt in range(1, len(delays) + 1)] == delays, asset
