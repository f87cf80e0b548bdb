"""Spark scale-out: mapping -> enrichment -> indexing in-process on one core vs Spark ``local[2]`` vs a
standalone cluster of 2 workers x 1 core, over the same harvest outputs.

    uv run python benchmarks/spark_scaleout.py --records 1000000

Records are built as ``records_pipeline.py`` builds them (real oai_dc / QDC / MODS fixture records with
unique ids), one provider per format with a third of the records each, harvested into parts of
``--part-records`` records (Spark runs one task per part). Each engine runs in its own driver process;
the figures are wall time, records/s, the Python driver's peak RSS and the peak RSS of the JVMs the driver
starts (local mode: driver + executors in one JVM). The fixed cost of Spark (session start plus a
1,000-record partition) and the rates give the size from which Spark is faster: the ``auto`` threshold.
Needs ../shared/fixtures and Java.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import records_pipeline as pipeline  # noqa: E402 - the mixed-format record builder

SMALL = 1_000


def prepare(root: Path, total: int, part_records: int) -> list[str]:
    """One harvest output per format (``total`` records in all); returns the provider names."""
    from ingest_assets.storage import LocalStorage, layout
    from ingest_assets.storage.avro import ORIGINAL_RECORD, schema_with_doc, write_parts
    from ingest_assets.storage.manifest import Manifest

    storage = LocalStorage(root / "storage")
    registry, providers = {}, []
    for kind in pipeline.FORMATS:
        for name, count in ((kind, total // len(pipeline.FORMATS)), (f"{kind}small", SMALL // len(pipeline.FORMATS))):
            registry[name] = {"mapping": pipeline.FORMATS[kind][0], "mapping_overrides": pipeline.OVERRIDES[kind]}
            started = datetime.now(timezone.utc)
            output = layout.activity_output(name, "harvest", pipeline.DAY, started, layout.schema_name(ORIGINAL_RECORD))
            with storage.folder(output.folder) as folder:
                stats = write_parts(folder, schema_with_doc(ORIGINAL_RECORD, "benchmark harvest"),
                                    pipeline.originals(kind, name, count, started), part_records=part_records)
                manifest = Manifest("harvest", name, output.schema, stats.records, started, "bench", "bench")
                folder.write_bytes(layout.MANIFEST, manifest.to_bytes())
            providers.append(name)
    (root / "registry.yaml").write_text(json.dumps(registry))
    return providers


def _chain(storage, entry, stream) -> int:
    """mapping -> enrichment -> indexing of one provider; returns the harvest's record count."""
    from ingest_assets.records.engines.steps import RecordActivity
    from ingest_assets.storage.activities import latest_source, write_activity, RecordSource
    from ingest_assets.storage.avro import INDEX_RECORD, MAP_RECORD

    harvest = latest_source(storage, entry.name, "harvest", pipeline.DAY)
    sources = {"harvest": harvest}
    started = datetime.now(timezone.utc)
    for n, (activity, schema, inputs) in enumerate(
        (("mapping", MAP_RECORD, ["harvest"]), ("enrichment", MAP_RECORD, ["mapping"]),
         ("indexing", INDEX_RECORD, ["enrichment", "harvest"]))
    ):
        result = write_activity(storage, stream(RecordActivity(activity, entry), [sources[i] for i in inputs]), provider=entry.name,
                                activity=activity, day=pipeline.DAY, started=started + timedelta(seconds=n), schema=schema,
                                partition="bench")
        sources[activity] = RecordSource(storage, result.output)
    return harvest.manifest().record_count


class JvmPeak(threading.Thread):
    """Peak RSS of this process's child JVMs (sampled every 0.2 s)."""

    def __init__(self):
        super().__init__(daemon=True)
        self.peak, self.running = 0, True

    def run(self):
        import psutil

        me = psutil.Process()
        while self.running:
            total = 0
            for child in me.children(recursive=True):
                try:
                    if "java" in child.name():
                        total += child.memory_info().rss
                except psutil.Error:
                    pass
            self.peak = max(self.peak, total)
            time.sleep(0.2)


def run_engine(root: str, engine: str, master: str | None) -> dict:
    """One engine over every provider (the driver process); big and small partitions timed apart."""
    from ingest_assets.records.engines.spark import spark_stream
    from ingest_assets.records.engines.steps import in_process
    from ingest_assets.core.registry import load_registry
    from ingest_assets.storage import LocalStorage

    storage = LocalStorage(f"{root}/storage")
    registry = load_registry(f"{root}/registry.yaml")
    jvm = JvmPeak()
    jvm.start()
    figures = {"start_s": 0.0}
    if engine == "in-process":
        stream = in_process
    else:
        from pyspark.sql import SparkSession

        from ingest_assets.records.engines.choice import use_python

        t0 = time.perf_counter()
        spark = (SparkSession.builder.master(master).appName("spark-scaleout").config("spark.pyspark.python", sys.executable)
                 .config("spark.ui.showConsoleProgress", "false").config("spark.driver.host", "127.0.0.1")
                 .config("spark.driver.bindAddress", "127.0.0.1").config("spark.executor.memory", "1g").getOrCreate())
        use_python(spark)
        spark.range(0, 2, 1, 2).count()  # executors up
        figures["start_s"] = time.perf_counter() - t0
        stream = lambda activity, inputs: spark_stream(spark, storage, activity, inputs)  # noqa: E731
    for size in ("small", "big"):
        t0, count = time.perf_counter(), 0
        for name in registry:
            if name.endswith("small") == (size == "small"):
                count += _chain(storage, registry[name], stream)
        figures[f"{size}_s"], figures[f"{size}_records"] = time.perf_counter() - t0, count
    jvm.running = False
    figures["driver_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    figures["jvm_rss_mb"] = jvm.peak / 2**20
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--part-records", type=int, default=0, help="records per harvest part (default: 8 parts per provider)")
    parser.add_argument("--engine", help=argparse.SUPPRESS)
    parser.add_argument("--master", help=argparse.SUPPRESS)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.engine:  # a driver process
        print(json.dumps(run_engine(args.root, args.engine, args.master)))
        return

    from ingest_assets.records.engines.spark_cluster import standalone_cluster

    part_records = args.part_records or max(1, -(-args.records // (len(pipeline.FORMATS) * 8)))
    figures = {}
    with tempfile.TemporaryDirectory(prefix="bench-spark-") as tmp:
        prepare(Path(tmp), args.records, part_records)

        def driver(engine, master=None):
            command = [sys.executable, __file__, "--engine", engine, "--root", tmp] + (["--master", master] if master else [])
            done = subprocess.run(command, check=True, capture_output=True, text=True)
            return json.loads(done.stdout.strip().splitlines()[-1])

        figures["in-process, 1 core"] = driver("in-process")
        figures["Spark local[2]"] = driver("spark", "local[2]")
        with standalone_cluster(Path(tmp) / "cluster", workers=2, cores=1, memory="1g") as master:
            figures["standalone 2 workers x 1 core"] = driver("spark", master)

    base = figures["in-process, 1 core"]
    base_rate = base["big_records"] / base["big_s"]
    print(f"{base['big_records']:,} records (oai_dc / QDC / MODS, one provider each, parts of {part_records:,} records), "
          f"mapping -> enrichment -> indexing")
    for name, f in figures.items():
        rate = f["big_records"] / f["big_s"]
        print(f"{name:>31}: {f['big_s']:7.1f} s = {rate:7,.0f} records/s ({rate / base_rate:.2f}x in-process); "
              f"driver peak RSS {f['driver_rss_mb']:,.0f} MB, JVM peak RSS {f['jvm_rss_mb']:,.0f} MB; "
              f"session start {f['start_s']:.1f} s, {f['small_records']:,}-record partitions {f['small_s']:.1f} s")
    spark = figures["Spark local[2]"]
    spark_rate = spark["big_records"] / spark["big_s"]
    partitions = len(pipeline.FORMATS)  # the small partitions, one per format
    fixed = spark["start_s"] + (spark["small_s"] - base["small_s"]) / partitions
    saving = 1 / base_rate - 1 / spark_rate
    threshold = fixed / saving if saving > 0 else float("inf")
    print(f"fixed cost of Spark per run (session start + one {spark['small_records'] // partitions:,}-record partition, "
          f"minus in-process): {fixed:.1f} s; "
          f"Spark local[2] is faster from ~{threshold:,.0f} records per partition (the auto threshold)")


if __name__ == "__main__":
    main()
