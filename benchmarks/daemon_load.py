"""Many providers' days at once on the daemon: P providers x D days submitted as one backfill on the PostgreSQL
Dagster instance (the shipped deploy/postgres/dagster.yaml: 4 runs at a time, one per provider).

    uv run python benchmarks/daemon_load.py --providers 50 --days 1 --backfill job     # 50 providers' days at once
    uv run python benchmarks/daemon_load.py --providers 20 --days 30 --backfill asset  # the 600-day backfill

``--backfill job`` submits a run per partition (``dagster job backfill``: every run queued at once, each under its
provider's limit); ``--backfill asset`` submits what the UI's "Materialize all" on the records group does, an asset
backfill the backfill daemon drives (one run per 31 days of a provider, the assets' backfill policy). A private
PostgreSQL server and ``dagster-daemon run`` (the test suite's support.postgres and support.daemon) run them against
the demo OAI-PMH endpoint. Checked (the run fails otherwise): every run SUCCESS, each provider's day has each
activity's output exactly once; from the runs' own start and end times, at most 4 runs overlapped and never two of
one provider. Measured: wall time from submission, runs per minute, CPU seconds of the daemon's process tree, the
peak RSS of that tree (daemon, code servers, run workers; sampled every 0.5 s) and of its largest process. A run
that did not succeed is printed with its failed steps' errors.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path

import dagster as dg
from dagster._core.execution.backfill import BulkActionStatus

from ingest_assets.demo.oai_server import serve_in_thread
from ingest_assets.demo.samples import sample_records
from ingest_assets.storage import LocalStorage, layout

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ingest_assets_tests.support.daemon import BIN, ROOT, WORKSPACE, DaemonProcess, submit_asset_backfill  # noqa: E402
from ingest_assets_tests.support.postgres import PostgresServer  # noqa: E402
from process_tree import TreeMemory  # noqa: E402

FINISHED = (dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED)
RUN_LIMIT, PROVIDER_TAG = 4, "dagster/partition/provider"
RANGE_START, RANGE_END = "dagster/asset_partition_range_start", "dagster/asset_partition_range_end"


def failure_causes(instance: dg.DagsterInstance, run_id: str) -> list[str]:
    """Why a run did not succeed: each failed step with its error, else the run's own failure message."""
    steps = instance.all_logs(run_id, of_type=dg.DagsterEventType.STEP_FAILURE)
    if steps:
        return [f"step {e.step_key}: {e.dagster_event.step_failure_data.error.to_string().strip()}" for e in steps]
    return [e.message for e in instance.all_logs(run_id, of_type={dg.DagsterEventType.RUN_FAILURE, dg.DagsterEventType.ENGINE_EVENT})
            if e.dagster_event.event_type == dg.DagsterEventType.RUN_FAILURE or "error" in e.message.lower()]


def provider_of(run: dg.DagsterRun) -> str:
    """The provider a run works for: its partition's, or both ends' of its range (``day|provider`` keys)."""
    if PROVIDER_TAG in run.tags:
        return run.tags[PROVIDER_TAG]
    ends = {run.tags[tag].split("|")[1] for tag in (RANGE_START, RANGE_END)}
    return ends.pop() if len(ends) == 1 else "+".join(sorted(ends))


def submit(kind: str, instance: dg.DagsterInstance, env: dict[str, str], keys: list[str]) -> str:
    """Submit the backfill and return its id."""
    if kind == "asset":
        return submit_asset_backfill(instance, env, keys)
    subprocess.run([str(BIN / "dagster"), "job", "backfill", "-w", WORKSPACE, "-j", "record_pipeline", "--noprompt",
                    "--partitions", ",".join(keys)], cwd=ROOT, env=env, check=True, capture_output=True, timeout=600)
    (backfill,) = instance.get_backfills()
    return backfill.backfill_id


def backfill_ended(kind: str, instance: dg.DagsterInstance, backfill_id: str, records, keys: list[str]) -> bool:
    """A job backfill has ended when a run of each partition has finished (the command marks it COMPLETED at once);
    an asset backfill when the backfill daemon says so (its runs and their retries are over)."""
    if kind == "asset":
        return instance.get_backfill(backfill_id).status not in (BulkActionStatus.REQUESTED, BulkActionStatus.CANCELING,
                                                                  BulkActionStatus.FAILING)
    return len(records) >= len(keys) and all(r.dagster_run.status in FINISHED for r in records)


def most_overlapping(spans: list[tuple[float, float]]) -> int:
    """The most spans (start, end) open at one moment."""
    edges = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    open_now = peak = 0
    for _, step in edges:
        open_now += step
        peak = max(peak, open_now)
    return peak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--providers", type=int, default=50)
    parser.add_argument("--days", type=int, default=1)
    parser.add_argument("--backfill", choices=("job", "asset"), default="job",
                        help="a run per partition (dagster job backfill) or the UI's asset backfill (a run per 31 days)")
    parser.add_argument("--timeout", type=int, default=7200, help="seconds to wait for the backfill")
    args = parser.parse_args()
    yesterday = datetime.now(timezone.utc).date() - timedelta(days=1)
    days = [yesterday - timedelta(days=n) for n in range(args.days, 0, -1)]
    names = [f"p{n:03d}" for n in range(args.providers)]
    keys = [f"{day.isoformat()}|{name}" for name in names for day in days]
    postgres = PostgresServer()
    oai, url = serve_in_thread(sample_records(count=30 * (args.days + 2), day=yesterday))
    with tempfile.TemporaryDirectory(prefix="daemon-load-") as tmp:
        folder = Path(tmp)
        registry = folder / "registry.yaml"
        registry.write_text("".join(f"{name}: {{harvest: {{type: oai, endpoint: '{url}', metadata_prefix: oai_dc, "
                                    "allow_private: true}, mapping: oai_dc, schedule: false}\n" for name in names))
        daemon = DaemonProcess(folder, postgres.url, registry, (yesterday - timedelta(days=args.days + 5)).isoformat())
        os.environ["DAGSTER_POSTGRES_URL"] = daemon.env["DAGSTER_POSTGRES_URL"]
        instance = dg.DagsterInstance.from_config(str(daemon.home))
        try:
            instance.add_dynamic_partitions("record_providers", names)
            daemon.start()
            memory = TreeMemory(daemon.process.pid)
            began = time.monotonic()
            backfill_id = submit(args.backfill, instance, daemon.env, keys)
            while True:
                records = instance.get_run_records(dg.RunsFilter(tags={"dagster/backfill": backfill_id}))
                if backfill_ended(args.backfill, instance, backfill_id, records, keys):
                    break
                if time.monotonic() - began > args.timeout:
                    print(f"timed out: {sum(r.dagster_run.status in FINISHED for r in records)} of {len(records)} runs finished")
                    return 1
                time.sleep(2)
            wall = time.monotonic() - began
            memory.stop()
            backfill_status = instance.get_backfill(backfill_id).status.value
            failures = {r.dagster_run.run_id: (r.dagster_run.tags.get("dagster/partition") or r.dagster_run.tags.get(RANGE_START),
                                               failure_causes(instance, r.dagster_run.run_id))
                        for r in records if r.dagster_run.status != dg.DagsterRunStatus.SUCCESS}
        finally:
            daemon.stop()
            instance.dispose()
            oai.shutdown()
            postgres.remove()
        statuses = defaultdict(int)
        for record in records:
            statuses[record.dagster_run.status.value] += 1
        spans = [(r.start_time, r.end_time) for r in records if r.start_time and r.end_time]
        by_provider = defaultdict(list)
        for record in records:
            if record.start_time and record.end_time:
                by_provider[provider_of(record.dagster_run)].append((record.start_time, record.end_time))
        storage = LocalStorage(folder / "ingest" / "storage")
        missing_or_twice = [(name, day.isoformat(), activity) for name in names for day in days for activity in layout.ACTIVITIES
                            if len(layout.complete_outputs(storage, name, activity, day)) != 1]
        for run_id, (partition, causes) in failures.items():
            print(f"run {run_id} ({partition}) did not succeed:\n  " + "\n  ".join(causes or ["no failure recorded"]))
    overlap, provider_overlap = most_overlapping(spans), max(most_overlapping(s) for s in by_provider.values())
    print(f"{args.providers} providers x {args.days} days = {len(keys)} partitions, one {args.backfill} backfill on the daemon "
          f"({backfill_status})")
    print(f"runs: {dict(statuses)}; wall {wall:.0f} s from submission, {len(records) / wall * 60:.1f} runs/min, "
          f"{len(keys) / wall * 60:.1f} partitions/min; CPU of the daemon's process tree {sum(memory.cpu.values()):.0f} s")
    print(f"most runs at once: {overlap} (limit {RUN_LIMIT}); most of one provider at once: {provider_overlap} (limit 1)")
    print(f"peak RSS: daemon process tree {memory.peak_total / 2**20:.0f} MB, largest process {memory.peak_one / 2**20:.0f} MB")
    print(f"outputs missing or twice: {len(missing_or_twice)} {missing_or_twice[:5]}")
    ok = (set(statuses) == {"SUCCESS"} and not missing_or_twice and overlap <= RUN_LIMIT and provider_overlap <= 1
          and (args.backfill == "asset" or len(records) == len(keys)))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
