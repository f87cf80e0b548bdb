"""The Dagster daemon on the production instance (PostgreSQL): a record provider refreshes itself, and a
3-day backfill of it completes (from the command line: a run per day; as an asset backfill: one run), with
nobody starting anything by hand."""

from __future__ import annotations

import subprocess
from datetime import datetime, timedelta, timezone

import dagster as dg
import pytest
from dagster._core.execution.backfill import BulkActionStatus

from ingest_assets.demo.oai_server import serve_in_thread
from ingest_assets.demo.samples import sample_records
from ingest_assets.storage import LocalStorage, layout
from ingest_assets_tests.support.daemon import BIN, ROOT, WORKSPACE, submit_asset_backfill, wait_until

YESTERDAY = datetime.now(timezone.utc).date() - timedelta(days=1)


@pytest.fixture
def daemon(dagster_daemon, tmp_path):
    """``(process, instance, env)``: the daemon on its PostgreSQL instance, one provider refreshed every minute."""
    oai, url = serve_in_thread(sample_records(day=YESTERDAY))
    registry = tmp_path / "registry.yaml"
    registry.write_text(
        f"demo: {{harvest: {{type: oai, endpoint: '{url}', metadata_prefix: oai_dc, allow_private: true}},"
        " mapping: oai_dc, schedule: {cron: '* * * * *'}}\n"
    )
    try:
        process = dagster_daemon(registry, (YESTERDAY - timedelta(days=10)).isoformat())
        yield process, process.instance, process.env
    finally:
        oai.shutdown()


def _runs(instance, **tags):
    return instance.get_run_records(dg.RunsFilter(job_name="record_pipeline", tags=tags))


@pytest.mark.timeout(900)  # a refresh, a 3-day job backfill and an asset backfill, each launched by the daemon
def test_refresh_and_backfill_run_by_themselves_on_postgres(daemon):
    process, instance, env = daemon
    storage = LocalStorage(process.home.parent / "ingest" / "storage")

    # a provider in the registry is harvested for its newest day by the refresh sensor
    refresh = wait_until("the refresh run to launch and finish", lambda: [
        r for r in _runs(instance, **{"ingest/trigger": "refresh"}) if r.dagster_run.is_finished
    ], process)
    assert [r.dagster_run.status for r in refresh] == [dg.DagsterRunStatus.SUCCESS], process.tail()
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
    runs = wait_until("the job backfill's 3 days to run", lambda: (lambda found: found if len(found) == 3 and all(
        r.dagster_run.is_finished for r in found) else None)(_runs(instance, **{"dagster/backfill": job_backfill.backfill_id})), process,
        timeout=420)  # one run per day, one at a time for the provider: about a minute each on a loaded 2-core machine
    assert sorted(r.dagster_run.tags["dagster/partition"] for r in runs) == keys
    assert all(r.dagster_run.status == dg.DagsterRunStatus.SUCCESS for r in runs), process.tail()

    # an asset backfill (what the records asset group's "Materialize all" submits) of the same days, run again
    # by the daemon: one run under the BACKFILL policy, each day a new output of its own
    backfill_id = submit_asset_backfill(instance, env, keys)
    status = wait_until("the asset backfill to complete", lambda: instance.get_backfill(backfill_id).status in (
        BulkActionStatus.COMPLETED, BulkActionStatus.COMPLETED_SUCCESS, BulkActionStatus.COMPLETED_FAILED, BulkActionStatus.FAILED)
        and instance.get_backfill(backfill_id).status, process)
    assert status == BulkActionStatus.COMPLETED_SUCCESS, process.tail()
    (run,) = instance.get_run_records(dg.RunsFilter(tags={"dagster/backfill": backfill_id}))  # job __ASSET_JOB
    assert run.dagster_run.status == dg.DagsterRunStatus.SUCCESS
    assert (run.dagster_run.tags["dagster/asset_partition_range_start"], run.dagster_run.tags["dagster/asset_partition_range_end"]) == (
        keys[0], keys[-1])
    for day in days:
        assert all(len(layout.complete_outputs(storage, "demo", a, day)) == 2 for a in layout.ACTIVITIES)
