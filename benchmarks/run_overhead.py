"""What a run costs beyond its work: code-location import, one demo-partition run, and a 30-day range.

    uv run python benchmarks/run_overhead.py [--days 30] [--record]

(a) ``import ingest_assets.definitions`` (after ``import dagster``) against ``import dagster`` alone, in
    fresh interpreters (median of 3); goal <= 1.6.
(b) One demo-partition run of ``record_pipeline`` in a fresh process, as a launched run does it (the
    process imports the code location and executes every step in-process): ``dagster job execute`` on an
    instance in a temporary DAGSTER_HOME, against the demo OAI-PMH server. Overhead = wall time minus the
    steps' own time (from the run's step stats); goal <= 10 s.
(c) ``ingest-assets harvest demo --from D --to D+days-1``: the range as one run per 31 days (the shape the
    daemon runs for an asset backfill under the record assets' BACKFILL policy), submission to completion,
    against ``days`` x (b).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

import recorded

BIN = Path(sys.executable).parent
IMPORT = """
import time
t = time.perf_counter(); import dagster; a = time.perf_counter() - t
t = time.perf_counter(); import ingest_assets.definitions; b = time.perf_counter() - t
print(a, a + b)
"""


def import_ratio() -> tuple[float, float, float]:
    samples = [
        tuple(map(float, subprocess.run([sys.executable, "-c", IMPORT], capture_output=True, text=True, check=True).stdout.split()))
        for _ in range(3)
    ]
    dagster_s = statistics.median(s[0] for s in samples)
    total_s = statistics.median(s[1] for s in samples)
    return dagster_s, total_s, total_s / dagster_s


def hub(folder: Path, url: str) -> dict[str, str]:
    registry = folder / "registry.yaml"
    registry.write_text(f"demo: {{harvest: {{type: oai, endpoint: '{url}', metadata_prefix: oai_dc, allow_private: true}}, "
                        "mapping: oai_dc}\n")
    (folder / "dagster").mkdir()
    return {**os.environ, "DAGSTER_HOME": str(folder / "dagster"), "INGEST_HOME": str(folder / "home"),
            "INGEST_REGISTRY": str(registry), "INGEST_PARTITION_START": "2025-01-01", "DAGSTER_TELEMETRY_DISABLED": "1"}


def step_seconds(dagster_home: str) -> tuple[float, int]:
    import dagster as dg
    from dagster._core.instance.ref import InstanceRef

    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(dagster_home)) as instance:
        runs = instance.get_run_records(dg.RunsFilter(job_name="record_pipeline"))
        stats = [s for r in runs for s in instance.get_run_step_stats(r.dagster_run.run_id)]
        return sum((s.end_time or 0) - (s.start_time or 0) for s in stats), len(runs)


def one_run(folder: Path, url: str, day: date) -> tuple[float, float]:
    env = hub(folder, url)
    subprocess.run([str(BIN / "python"), "-c", "import dagster as dg; dg.DagsterInstance.get()"
                    ".add_dynamic_partitions('record_providers', ['demo'])"], env=env, check=True)
    started = time.perf_counter()
    subprocess.run([str(BIN / "dagster"), "job", "execute", "-m", "ingest_assets.definitions", "-j", "record_pipeline",
                    "--tags", json.dumps({"dagster/partition": f"{day.isoformat()}|demo"})],
                   env=env, check=True, capture_output=True)
    wall = time.perf_counter() - started
    return wall, step_seconds(env["DAGSTER_HOME"])[0]


def range_run(folder: Path, url: str, first: date, days: int) -> tuple[float, float, int]:
    env = hub(folder, url)
    last = first + timedelta(days=days - 1)
    started = time.perf_counter()
    subprocess.run([str(BIN / "ingest-assets"), "harvest", "demo", "--from", first.isoformat(), "--to", last.isoformat()],
                   env=env, check=True, capture_output=True)
    wall = time.perf_counter() - started
    steps, runs = step_seconds(env["DAGSTER_HOME"])
    return wall, steps, runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=30)
    recorded.add_arguments(parser)
    args = parser.parse_args()
    run = recorded.Run("run_overhead", args)
    from ingest_assets.demo.oai_server import serve_in_thread
    from ingest_assets.demo.samples import sample_records

    day = date(2026, 1, 15)
    dagster_s, total_s, ratio = import_ratio()
    print(f"(a) import dagster {dagster_s:.2f} s; + ingest_assets.definitions {total_s:.2f} s; ratio {ratio:.2f} (goal <= 1.6)")
    server, url = serve_in_thread(sample_records(day=day))
    try:
        with tempfile.TemporaryDirectory() as tmp:
            wall, steps = one_run(Path(tmp), url, day)
        print(f"(b) one demo-partition run: wall {wall:.1f} s, steps {steps:.1f} s, overhead {wall - steps:.1f} s (goal <= 10 s)")
        with tempfile.TemporaryDirectory() as tmp:
            first = day - timedelta(days=args.days - 1)
            range_wall, range_steps, runs = range_run(Path(tmp), url, first, args.days)
        print(f"(c) {args.days}-day range: {runs} run(s), wall {range_wall:.1f} s, steps {range_steps:.1f} s; "
              f"{args.days} x (b) = {args.days * wall:.1f} s; ratio {range_wall / (args.days * wall):.2f}")
    finally:
        server.shutdown()
    run.finish({"import_ratio": round(ratio, 2), "run_wall_s": round(wall, 1), "run_overhead_s": round(wall - steps, 1),
                "range_days": args.days, "range_runs": runs, "range_wall_s": round(range_wall, 1),
                "range_ratio": round(range_wall / (args.days * wall), 2)})


if __name__ == "__main__":
    main()
