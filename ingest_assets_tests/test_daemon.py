"""The Dagster daemon on the production instance (PostgreSQL): a record provider refreshes itself, and a
3-day backfill of it completes (from the command line: a run per day; as an asset backfill: one run), with
nobody starting anything by hand."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from datetime import datetime, timedelta, timezone
from importlib.resources import files
from pathlib import Path

import dagster as dg
import psycopg
import pytest
from dagster._core.execution.backfill import BulkActionStatus, PartitionBackfill
from dagster._core.utils import make_new_backfill_id

from ingest_assets.demo.oai_server import serve_in_thread
from ingest_assets.demo.samples import sample_records
from ingest_assets.definitions import build_definitions
from ingest_assets.core.settings import Settings
from ingest_assets.storage import LocalStorage, layout
from ingest_assets_tests.support import stop_group

ROOT = Path(__file__).resolve().parents[1]
WORKSPACE = str(files("ingest_assets.cli").joinpath("workspace.yaml"))  # the code location `ingest-assets ui` starts
BIN = Path(sys.executable).parent
YESTERDAY = datetime.now(timezone.utc).date() - timedelta(days=1)
RECORD_ASSETS = ("original_records", "mapped_records", "enriched_records", "indexed_records", "search_index", "resourcesync_changes")


def _wait(what: str, check, timeout: float = 240):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(2)
    pytest.fail(f"the daemon did not {what} within {timeout:.0f} s")


@pytest.fixture
def daemon(tmp_path, pg_url):
    database = f"dagster_{uuid.uuid4().hex[:8]}"
    server_url = pg_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(server_url, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{database}"')
    oai, url = serve_in_thread(sample_records(day=YESTERDAY))
    registry = tmp_path / "registry.yaml"
    registry.write_text(
        f"demo: {{harvest: {{type: oai, endpoint: '{url}', metadata_prefix: oai_dc, allow_private: true}},"
        " mapping: oai_dc, schedule: {cron: '* * * * *'}}\n"
    )
    home = tmp_path / "dagster"
    home.mkdir()
    shutil.copy(ROOT / "deploy" / "postgres" / "dagster.yaml", home / "dagster.yaml")
    dagster_url = pg_url.replace("+psycopg:", "+psycopg2:").rsplit("/", 1)[0] + f"/{database}"
    env = {**os.environ, "DAGSTER_HOME": str(home), "DAGSTER_POSTGRES_URL": dagster_url,
           "INGEST_HOME": str(tmp_path / "ingest"), "INGEST_REGISTRY": str(registry),
           "INGEST_PARTITION_START": (YESTERDAY - timedelta(days=10)).isoformat(), "DAGSTER_TELEMETRY_DISABLED": "1"}
    log = open(tmp_path / "daemon.log", "wb")
    process = subprocess.Popen([str(BIN / "dagster-daemon"), "run", "-w", WORKSPACE], cwd=ROOT, env=env,
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    os.environ["DAGSTER_POSTGRES_URL"] = env["DAGSTER_POSTGRES_URL"]
    try:
        with dg.DagsterInstance.from_config(str(home)) as instance:
            yield instance, env, tmp_path
    finally:
        os.environ.pop("DAGSTER_POSTGRES_URL", None)
        stop_group(process)
        log.close()
        oai.shutdown()


def _runs(instance, **tags):
    return instance.get_run_records(dg.RunsFilter(job_name="record_pipeline", tags=tags))


def test_refresh_and_backfill_run_by_themselves_on_postgres(daemon):
    instance, env, tmp_path = daemon
    storage = LocalStorage(tmp_path / "ingest" / "storage")

    # a provider in the registry is harvested for its newest day by the refresh sensor
    refresh = _wait("launch and finish the refresh run", lambda: [
        r for r in _runs(instance, **{"ingest/trigger": "refresh"}) if r.dagster_run.is_finished
    ])
    assert [r.dagster_run.status for r in refresh] == [dg.DagsterRunStatus.SUCCESS], (tmp_path / "daemon.log").read_text()[-3000:]
    assert refresh[0].dagster_run.tags["dagster/partition"] == f"{YESTERDAY.isoformat()}|demo"
    assert all(layout.latest_output(storage, "demo", a, YESTERDAY) for a in layout.ACTIVITIES)

    days = [YESTERDAY - timedelta(days=n) for n in (3, 2, 1)]
    keys = [f"{d.isoformat()}|demo" for d in days]

    # `dagster job backfill` launches one run per day itself (no backfill policy on that path)
    submitted = subprocess.run(
        [str(BIN / "dagster"), "job", "backfill", "-w", WORKSPACE, "-j", "record_pipeline", "--noprompt",
         "--partitions", ",".join(keys)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    (job_backfill,) = instance.get_backfills()
    runs = _wait("run the job backfill's 3 days", lambda: (lambda found: found if len(found) == 3 and all(
        r.dagster_run.is_finished for r in found) else None)(_runs(instance, **{"dagster/backfill": job_backfill.backfill_id})))
    assert sorted(r.dagster_run.tags["dagster/partition"] for r in runs) == keys
    assert all(r.dagster_run.status == dg.DagsterRunStatus.SUCCESS for r in runs), (tmp_path / "daemon.log").read_text()[-3000:]

    # an asset backfill (what the records asset group's "Materialize all" submits) of the same days, run again
    # by the daemon: one run under the BACKFILL policy, each day a new output of its own
    settings = Settings.from_env(env)
    backfill = PartitionBackfill.from_asset_partitions(
        backfill_id=make_new_backfill_id(), asset_graph=build_definitions(settings).resolve_asset_graph(),
        partition_names=keys, asset_selection=[dg.AssetKey(a) for a in RECORD_ASSETS],
        backfill_timestamp=time.time(), tags={}, dynamic_partitions_store=instance, all_partitions=False,
        title=None, description=None, run_config=None,
    )
    instance.add_backfill(backfill)
    status = _wait("complete the asset backfill", lambda: instance.get_backfill(backfill.backfill_id).status in (
        BulkActionStatus.COMPLETED, BulkActionStatus.COMPLETED_SUCCESS, BulkActionStatus.COMPLETED_FAILED, BulkActionStatus.FAILED)
        and instance.get_backfill(backfill.backfill_id).status)
    assert status == BulkActionStatus.COMPLETED_SUCCESS, (tmp_path / "daemon.log").read_text()[-3000:]
    (run,) = instance.get_run_records(dg.RunsFilter(tags={"dagster/backfill": backfill.backfill_id}))  # job __ASSET_JOB
    assert run.dagster_run.status == dg.DagsterRunStatus.SUCCESS
    assert (run.dagster_run.tags["dagster/asset_partition_range_start"], run.dagster_run.tags["dagster/asset_partition_range_end"]) == (
        keys[0], keys[-1])
    for day in days:
        assert all(len(layout.complete_outputs(storage, "demo", a, day)) == 2 for a in layout.ACTIVITIES)
