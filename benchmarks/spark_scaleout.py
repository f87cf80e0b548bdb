"""Spark scale-out: mapping -> enrichment -> indexing in-process on one core vs Spark ``local[2]`` vs a
standalone cluster of 2 workers x 1 core, over the same harvest outputs.

    uv run python benchmarks/spark_scaleout.py --records 1000000

Records are built as ``records_pipeline.py`` builds them (real oai_dc / QDC / MODS fixture records with
unique ids), one provider per format with a third of the records each, harvested into parts of
``--part-records`` records (Spark runs a task per run of consecutive parts of one input, two per core).
Each engine runs in its own driver process; with ``--repeat N`` every engine runs N times in turn (in-process,
then each Spark engine, again), and each recorded speed-up is the median of the rounds' (this machine's CPU seconds
swing 20-40% between runs, so one pair of runs cannot tell 1.7x from 1.9x). The figures are wall time, records/s,
the Python driver's peak RSS and the peak RSS of the JVMs the driver starts (local mode: driver + executors in one
JVM). The fixed cost of Spark (session start plus a 1,000-record partition) and the rates give the size from which
Spark is faster: the ``auto`` threshold.
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
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parent))
import records_pipeline as pipeline  # noqa: E402 - the mixed-format record builder
import recorded  # noqa: E402
from process_tree import TreeCpu  # noqa: E402

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
                manifest = Manifest("harvest", name, output.schema, stats.records, started, "bench", "bench",
                                    extra={"Summary deleted": "0"})  # counted, as a harvest counts them
                folder.write_bytes(layout.MANIFEST, manifest.to_bytes())
            providers.append(name)
    (root / "registry.yaml").write_text(json.dumps(registry))
    return providers


def _chain(storage, entry, stream) -> int:
    """mapping -> enrichment -> indexing of one provider, as a run of the three assets does them (the engine's
    ``stream(activity, inputs, ahead)``; a step commits what the mapping staged for it); returns the harvest's
    record count."""
    from ingest_assets.records.engines.ahead import STAGES, staged_stream
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
        step, given = RecordActivity(activity, entry), [sources[i] for i in inputs]
        result = write_activity(storage, staged_stream(step, given, storage) or stream(step, given, STAGES), provider=entry.name,
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


# what a process of the run is, by its command line (first match); the benchmark's own process is not counted
PROCESS_KINDS = (
    ("executor JVMs", "CoarseGrainedExecutorBackend"),
    ("cluster daemons", "org.apache.spark.deploy.master.Master"),
    ("cluster daemons", "org.apache.spark.deploy.worker.Worker"),
    ("driver JVM", "org.apache.spark.deploy.SparkSubmit"),
    ("Python workers", "pyspark.daemon"),
    ("Python workers", "pyspark.worker"),
    ("driver Python", "spark_scaleout.py"),
)


def run_engine(root: str, engine: str, master: str | None) -> dict:
    """One engine over every provider (the driver process); big and small partitions timed apart."""
    from ingest_assets.records.engines.ahead import staging_ahead
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
        stream = lambda activity, inputs, ahead: staging_ahead(in_process(activity, inputs), activity, ahead, storage)  # noqa: E731
    else:
        from pyspark.sql import SparkSession

        from ingest_assets.records.engines.choice import spark_config, use_python

        t0 = time.perf_counter()
        builder = SparkSession.builder
        for key, value in {**spark_config(master, sys.executable), "spark.app.name": "spark-scaleout",
                           "spark.ui.showConsoleProgress": "false", "spark.driver.host": "127.0.0.1",
                           "spark.driver.bindAddress": "127.0.0.1", "spark.executor.memory": "1g"}.items():
            builder = builder.config(key, value)  # the engine's own settings (the record_engine resource's)
        spark = builder.getOrCreate()
        use_python(spark)
        spark.range(0, 2, 1, 2).count()  # executors up
        figures["start_s"] = time.perf_counter() - t0
        stream = lambda activity, inputs, ahead: spark_stream(spark, storage, activity, inputs, ahead=ahead)  # noqa: E731
    for size in ("small", "big"):
        t0, started, count = time.perf_counter(), time.time(), 0
        for name in registry:
            if name.endswith("small") == (size == "small"):
                count += _chain(storage, registry[name], stream)
        figures[f"{size}_s"], figures[f"{size}_records"] = time.perf_counter() - t0, count
        figures[f"{size}_at"] = [started, time.time()]
    jvm.running = False
    figures["driver_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    figures["jvm_rss_mb"] = jvm.peak / 2**20
    return figures


ENGINES = {"in-process": "in-process, 1 core", "local": "Spark local[2]", "standalone": "standalone 2 workers x 1 core"}


def run_drivers(root: str, engines: list[str]) -> dict[str, dict]:
    """Each engine's driver process in turn (the standalone cluster started for its own), with the CPU of every
    process of its run per kind of process during its big partitions."""
    from ingest_assets.records.engines.spark_cluster import standalone_cluster

    def driver(engine: str, master: str | None = None) -> dict:
        command = [sys.executable, __file__, "--engine", engine, "--root", root] + (["--master", master] if master else [])
        tree = TreeCpu(PROCESS_KINDS)
        tree.start()
        try:
            done = subprocess.run(command, check=True, capture_output=True, text=True)
        finally:
            tree.running = False
            tree.join()
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        figures["big_cpu"] = tree.between(*figures["big_at"])
        return figures

    figures = {}
    for engine in engines:
        if engine == "standalone":
            with standalone_cluster(Path(root) / "cluster", workers=2, cores=1, memory="1g") as master:
                figures[ENGINES[engine]] = driver("spark", master)
        else:
            figures[ENGINES[engine]] = driver("spark", "local[2]") if engine == "local" else driver(engine)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--part-records", type=int, default=0, help="records per harvest part (default: 8 parts per provider)")
    parser.add_argument("--engines", default=",".join(ENGINES), help=f"which of {', '.join(ENGINES)} (in-process first)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="rounds of every engine in turn; the recorded speed-ups are the median of the rounds'")
    parser.add_argument("--engine", help=argparse.SUPPRESS)
    parser.add_argument("--master", help=argparse.SUPPRESS)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    recorded.add_arguments(parser)
    args = parser.parse_args()
    if args.engine:  # a driver process
        print(json.dumps(run_engine(args.root, args.engine, args.master)))
        return
    run = recorded.Run("spark_scaleout", args)
    engines = args.engines.split(",")
    if engines[0] != "in-process" or not set(engines) <= set(ENGINES):
        parser.error(f"--engines: in-process first, then any of {', '.join(ENGINES)}")
    if args.repeat < 1:
        parser.error("--repeat: at least 1")
    part_records = args.part_records or max(1, -(-args.records // (len(pipeline.FORMATS) * 8)))
    rounds = []
    with tempfile.TemporaryDirectory(prefix="bench-spark-") as tmp:
        prepare(Path(tmp), args.records, part_records)
        for n in range(args.repeat):
            rounds.append(run_drivers(tmp, engines))
            if args.repeat > 1:
                print(f"round {n + 1} of {args.repeat}:")
            report(rounds[-1], part_records)
    run.finish(kept_figures(rounds))


def kept_figures(rounds: list[dict[str, dict]]) -> dict:
    """The recorded figures: each Spark engine's speed-up is the median of its rounds' ratios to the in-process run
    of the same round (the runs of a round are minutes apart; this machine's CPU seconds drift over longer spans)."""
    base = [figures[ENGINES["in-process"]] for figures in rounds]
    kept = {"records": base[0]["big_records"], "rounds": len(rounds),
            "in_process_records_per_s": round(median(b["big_records"] / b["big_s"] for b in base))}
    for engine, name in ENGINES.items():
        if engine == "in-process" or name not in rounds[0]:
            continue
        speedups = sorted(b["big_s"] / figures[name]["big_s"] for b, figures in zip(base, rounds))
        kept[f"{engine}_x"] = round(median(speedups), 3)
        if len(rounds) > 1:
            kept[f"{engine}_x_range"] = f"{speedups[0]:.2f}-{speedups[-1]:.2f}"
        cpu = [sum(figures[name]["big_cpu"].values()) / sum(b["big_cpu"].values())
               for b, figures in zip(base, rounds) if sum(b["big_cpu"].values())]
        kept[f"{engine}_cpu_x"] = round(median(cpu), 3) if cpu else None
        kept[f"{engine}_start_s"] = round(median(figures[name]["start_s"] for figures in rounds), 1)
    if len(rounds) > 1:
        x = ", ".join(f"{engine} {kept[f'{engine}_x']:.2f}x ({kept[f'{engine}_x_range']})"
                      for engine in ENGINES if f"{engine}_x" in kept)
        print(f"median of {len(rounds)} rounds: in-process {kept['in_process_records_per_s']:,} records/s; {x}")
    return kept


def report(figures: dict[str, dict], part_records: int) -> None:
    base = figures[ENGINES["in-process"]]
    base_rate = base["big_records"] / base["big_s"]
    base_cpu = sum(base["big_cpu"].values())
    print(f"{base['big_records']:,} records (oai_dc / QDC / MODS, one provider each, parts of {part_records:,} records), "
          f"mapping -> enrichment -> indexing")
    for name, f in figures.items():
        rate = f["big_records"] / f["big_s"]
        cpu = sum(f["big_cpu"].values())
        print(f"{name:>31}: {f['big_s']:7.1f} s = {rate:7,.0f} records/s ({rate / base_rate:.2f}x in-process); "
              f"driver peak RSS {f['driver_rss_mb']:,.0f} MB, JVM peak RSS {f['jvm_rss_mb']:,.0f} MB; "
              f"session start {f['start_s']:.1f} s, {f['small_records']:,}-record partitions {f['small_s']:.1f} s")
        print(f"{'':>33}CPU of the big partitions {cpu:,.1f} s ({cpu / base_cpu if base_cpu else float('nan'):.2f}x in-process): "
              + ", ".join(f"{kind} {seconds:,.1f} s" for kind, seconds in sorted(f["big_cpu"].items())))
    spark = figures.get(ENGINES["local"])
    if spark is None:
        return
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
