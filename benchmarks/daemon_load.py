"""Many providers' days at once on the daemon: P providers x D days submitted as one backfill on the PostgreSQL
Dagster instance (the shipped deploy/postgres/dagster.yaml: 4 runs at a time, one per provider).

    uv run python benchmarks/daemon_load.py --providers 50 --days 1     # 50 providers' days submitted at once
    uv run python benchmarks/daemon_load.py --providers 20 --days 30    # the 600-day backfill

A private PostgreSQL server and ``dagster-daemon run`` (the test suite's support.postgres and support.daemon) run the
``record_pipeline`` partitions against the demo OAI-PMH endpoint. Checked (the run fails otherwise): every run
SUCCESS, each provider's day has each activity's output exactly once; from the runs' own start and end times, at most
4 runs overlapped and never two of one provider. Measured: wall time from submission, runs per minute, the peak RSS
of the daemon's whole process tree (daemon, code servers, run workers; sampled every 0.5 s) and of its largest process.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path

import dagster as dg
import psutil

from ingest_assets.demo.oai_server import serve_in_thread
from ingest_assets.demo.samples import sample_records
from ingest_assets.storage import LocalStorage, layout

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ingest_assets_tests.support.daemon import BIN, ROOT, WORKSPACE, DaemonProcess  # noqa: E402
from ingest_assets_tests.support.postgres import PostgresServer  # noqa: E402

FINISHED = (dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED)
RUN_LIMIT, PROVIDER_TAG = 4, "dagster/partition/provider"


class TreeMemory:
    """Samples the summed RSS of a process and its descendants until stopped; keeps the peaks."""

    def __init__(self, pid: int):
        self.root, self.peak_total, self.peak_one = psutil.Process(pid), 0, 0
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()

    def _sample(self) -> None:
        while not self.stopped.wait(0.5):
            sizes = []
            for process in [self.root, *self.root.children(recursive=True)]:
                try:
                    sizes.append(process.memory_info().rss)
                except psutil.Error:
                    pass
            self.peak_total, self.peak_one = max(self.peak_total, sum(sizes)), max(self.peak_one, max(sizes, default=0))

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join()


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
            subprocess.run([str(BIN / "dagster"), "job", "backfill", "-w", WORKSPACE, "-j", "record_pipeline", "--noprompt",
                            "--partitions", ",".join(keys)], cwd=ROOT, env=daemon.env, check=True, capture_output=True,
                           timeout=600)
            while True:
                records = instance.get_run_records(dg.RunsFilter(job_name="record_pipeline"))
                if len(records) >= len(keys) and all(r.dagster_run.status in FINISHED for r in records):
                    break
                if time.monotonic() - began > args.timeout:
                    print(f"timed out: {sum(r.dagster_run.status in FINISHED for r in records)} of {len(keys)} runs finished")
                    return 1
                time.sleep(2)
            wall = time.monotonic() - began
            memory.stop()
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
                by_provider[record.dagster_run.tags.get(PROVIDER_TAG)].append((record.start_time, record.end_time))
        storage = LocalStorage(folder / "ingest" / "storage")
        missing_or_twice = [(name, day.isoformat(), activity) for name in names for day in days for activity in layout.ACTIVITIES
                            if len(layout.complete_outputs(storage, name, activity, day)) != 1]
        failures = [(r.dagster_run.tags.get("dagster/partition"), r.dagster_run.run_id) for r in records
                    if r.dagster_run.status != dg.DagsterRunStatus.SUCCESS]
        if failures:  # the daemon's log goes with the temporary folder: its end is the evidence
            print(f"runs not SUCCESS: {failures}\n--- end of the daemon's log ---\n{daemon.tail()}")
    overlap, provider_overlap = most_overlapping(spans), max(most_overlapping(s) for s in by_provider.values())
    print(f"{args.providers} providers x {args.days} days = {len(keys)} partitions, one backfill on the daemon")
    print(f"runs: {dict(statuses)}; wall {wall:.0f} s from submission, {len(records) / wall * 60:.1f} runs/min")
    print(f"most runs at once: {overlap} (limit {RUN_LIMIT}); most of one provider at once: {provider_overlap} (limit 1)")
    print(f"peak RSS: daemon process tree {memory.peak_total / 2**20:.0f} MB, largest process {memory.peak_one / 2**20:.0f} MB")
    print(f"outputs missing or twice: {len(missing_or_twice)} {missing_or_twice[:5]}")
    ok = (statuses == {"SUCCESS": len(keys)} and len(records) == len(keys) and not missing_or_twice
          and overlap <= RUN_LIMIT and provider_overlap <= 1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
