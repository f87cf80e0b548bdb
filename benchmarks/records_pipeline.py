"""Record pipeline throughput: original -> mapped -> enriched -> indexed, vs the raw I/O + parse limit.

    uv run python benchmarks/records_pipeline.py --records 200000 --workers 2 [--repeat 3]
    uv run python benchmarks/records_pipeline.py --records 6000 --workers 2 --instructions  # steady: callgrind

With ``--publish`` the pipeline side also writes each day's report, passes the review gate and builds, gates
and promotes each provider's index (the embedded search index), so the two runs' ratio is publishing's cost.

Real fixture records (oai_dc: Zenodo, CyberLeninka; QDC: Digital Maryland; MODS: Harvard LibraryCloud,
Montana) are replicated with unique ids into harvest outputs of six providers (one per format and
worker). Each worker process runs the real record assets (mapping, enrichment, indexing) through the IO
manager for its providers; the raw side does the same Avro reads and writes (same codec) plus one XML
parse per record and no mapping logic. Needs ../shared/fixtures.

With ``--repeat N`` the raw side and the pipeline run N times in turn and each figure is the median of the rounds'
(a pair of runs minutes apart on this machine reads +-0.06 for the same code).

With ``--instructions`` the sides are not timed: worker 0's share of each is counted under callgrind (valgrind), at
``--records`` and at a few records a provider, and the difference gives each side's instructions a record and their
ratio, which repeats to the instruction where this machine's CPU seconds swing 20-40% between runs.
"""

from __future__ import annotations

import argparse
import copy
import json
import resource
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import date, datetime, timezone
from functools import partial
from pathlib import Path
from statistics import median

from lxml import etree

import callgrind
import recorded

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures"
OAI = "http://www.openarchives.org/OAI/2.0/"
DAY = date(2026, 2, 1)
FORMATS = {
    "dc": ("oai_dc", ["oai-pmh/zenodo-listrecords-oai_dc.xml", "oai-pmh/cyberleninka-listrecords-cyrillic-dcterms.xml"]),
    "qdc": ("qdc", ["dpla/provider-maryland-cdm-oai_qdc-record.xml"]),
    "mods": ("mods", ["oai-pmh/harvard-librarycloud-listrecords-mods-resumption.xml", "dpla/provider-montana-repox-getrecord-mods.xml"]),
}
OVERRIDES = {  # the fixtures lack what DPLA requires; a hub would set these per provider in its registry
    "dc": {"dataProvider": {"value": "Fixture Data Provider"}, "rights": {"value": "http://rightsstatements.org/vocab/InC/1.0/"}},
    "qdc": {},
    "mods": {"dataProvider": {"value": "Fixture Data Provider"}, "rights": {"value": "http://rightsstatements.org/vocab/InC/1.0/"}},
}


def base_records(kind: str) -> list[tuple[str, str]]:
    """``(identifier, serialized <record>)`` pairs of the fixtures of one format."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, remove_blank_text=False)
    found = []
    for name in FORMATS[kind][1]:
        tree = etree.parse(str(FIXTURES / name), parser)
        for record in tree.iter(f"{{{OAI}}}record"):
            if record.find(f"{{{OAI}}}metadata") is None:
                continue
            ident = record.findtext(f"{{{OAI}}}header/{{{OAI}}}identifier").strip()
            found.append((ident, etree.tostring(record, encoding="unicode")))
    return found


def originals(kind: str, provider: str, count: int, started: datetime):
    base = base_records(kind)
    stamp = int(started.timestamp())
    for n in range(count):
        ident, doc = base[n % len(base)]
        unique = f"{ident}#{n}"
        yield {"id": unique, "ingestDate": stamp, "provider": provider, "document": doc.replace(ident, unique, 1),
               "mimetype": "application_xml", "deleted": False}


def prepare(root: Path, total: int, workers: int) -> dict[str, list[str]]:
    """Write the harvest outputs and the registry; returns providers per worker."""
    from ingest_assets.records.harvest.original import HarvestStats
    from ingest_assets.storage import LocalStorage
    from ingest_assets.storage.activities import RecordStream, write_activity
    from ingest_assets.storage.avro import ORIGINAL_RECORD

    storage = LocalStorage(root / "storage")
    registry, plan = {}, {}
    per = total // (workers * len(FORMATS))
    for w in range(workers):
        for kind in FORMATS:
            name = f"{kind}{w}"
            registry[name] = {"mapping": FORMATS[kind][0], "mapping_overrides": OVERRIDES[kind]}
            started = datetime.now(timezone.utc)
            summary = {"mode": "full", **HarvestStats(name, records=per).as_metadata()}  # as a harvest counts them
            write_activity(storage, RecordStream(originals(kind, name, per, started), started=started, summary=lambda s=summary: s),
                           provider=name, activity="harvest", day=DAY, started=started, schema=ORIGINAL_RECORD, partition="bench")
            plan.setdefault(str(w), []).append(name)
    (root / "registry.yaml").write_text(json.dumps(registry))
    with ProcessPoolExecutor(1) as pool:  # each worker's Dagster instance exists, as a deployment's does (made
        # apart, so no worker inherits Dagster's imports: a run worker imports it)
        list(pool.map(create_instance, [instance_home(root, providers) for providers in plan.values()]))
    return plan


def create_instance(home: Path) -> None:
    import dagster as dg

    home.mkdir(parents=True)
    with dg.instance_for_test(temp_dir=str(home)):
        pass


def instance_home(root: Path | str, providers: list[str]) -> Path:
    """The folder of the Dagster instance of the worker running ``providers``."""
    return Path(root) / "dagster" / providers[0]


PUBLISHING = ("provider_report", "review_gate", "search_index")  # with --publish: report, gates, promotion


def run_pipeline(root: str, providers: list[str], publish: bool = False) -> dict:
    import dagster as dg

    from ingest_assets.definitions import build_definitions
    from ingest_assets.defs.providers import record_providers
    from ingest_assets.core.settings import Settings

    settings = Settings.from_env({"INGEST_HOME": root, "INGEST_REGISTRY": f"{root}/registry.yaml"})
    assets = ("mapped_records", "enriched_records", "indexed_records", *(PUBLISHING if publish else ()))
    job = build_definitions(settings).resolve_job_def("record_pipeline").get_subset(
        asset_selection={dg.AssetKey(k) for k in assets}
    )
    t0 = time.perf_counter()
    with dg.instance_for_test(temp_dir=str(instance_home(root, providers))) as instance:
        instance.add_dynamic_partitions(record_providers.name, providers)
        callgrind.instrument()  # with --instructions: instrumented from here (opening the instance: ~10G instructions)
        for provider in providers:
            callgrind.mark()
            key = dg.MultiPartitionKey({"date": DAY.isoformat(), "provider": provider})
            assert job.execute_in_process(partition_key=str(key), instance=instance).success
        callgrind.mark()
    return worker_figures(t0)


def worker_figures(started: float) -> dict:
    """A worker's wall seconds since ``started``, its CPU seconds (the whole process: imports too) and peak RSS."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {"seconds": time.perf_counter() - started, "cpu_s": usage.ru_utime + usage.ru_stime,
            "rss_mb": usage.ru_maxrss / 1024}


def raw_mapping(source, template, parser):
    """One parse per record; the output is the template with this record's id and original."""
    for record in source:
        etree.fromstring(record["document"].encode(), parser)
        out = copy.copy(template)
        out["id"], out["originalRecord"] = record["id"], record["document"]
        yield out


def raw_documents(source, size):
    """IndexRecords of a real document's size."""
    for record in source:
        yield {"id": record["id"], "document": record["originalRecord"][:size], "deleted": False}


def run_raw(root: str, providers: list[str]) -> dict:
    """The pipeline's Avro I/O with no mapping logic: the same reads and writes in the same schemas and
    codec (MAPRecords shaped like a real mapped record, IndexRecords of a real document's size), plus one
    XML parse per record."""
    from ingest_assets.records.indexing import index_record
    from ingest_assets.records.mapping import mapper_for
    from ingest_assets.core.registry import load_registry
    from ingest_assets.storage import LocalStorage, layout
    from ingest_assets.storage.activities import RecordSource, RecordStream, write_activity
    from ingest_assets.storage.avro import INDEX_RECORD, MAP_RECORD

    storage = LocalStorage(f"{root}/storage")
    registry = load_registry(f"{root}/registry.yaml")
    parser = etree.XMLParser(resolve_entities=False, no_network=True)

    t0 = time.perf_counter()
    callgrind.instrument()  # with --instructions: instrumented from here (natively a no-op)
    for provider in providers:
        callgrind.mark()
        harvest = RecordSource(storage, layout.latest_output(storage, provider, "harvest", DAY))
        template = mapper_for(registry[provider]).map(next(iter(harvest))).record  # one real mapped record
        size = len(index_record(template)["document"])
        steps = (("mapping", MAP_RECORD, lambda src: raw_mapping(src, template, parser)),
                 ("enrichment", MAP_RECORD, lambda src: src), ("indexing", INDEX_RECORD, lambda src: raw_documents(src, size)))
        source = harvest
        for activity, schema, step in steps:
            started = datetime.now(timezone.utc)
            result = write_activity(storage, RecordStream(step(source), inputs=[source], started=started), provider=provider,
                                    activity=activity, day=DAY, started=started, schema=schema, partition="raw")
            if activity == "indexing" and harvest.manifest().extra.get("Summary deleted") != "0":
                sum(1 for _ in harvest)  # the indexing asset also reads a harvest that counts deletions
            source = RecordSource(storage, result.output)
    callgrind.mark()
    return worker_figures(t0)


COUNTED = ("import sys; sys.path[0] = sys.argv[1]; import records_pipeline as p; "
           "p.counted_side(*sys.argv[2:])")  # the child run under callgrind: its sys.path as the script's (no
# working directory in it, which would shadow a PYTHONPATH checkout's ingest_assets)


def counted_side(side: str, root: str, publish: str, *providers: str) -> None:
    """One worker's side, in the child that :func:`count_side` runs under callgrind."""
    if side == "raw":
        run_raw(root, list(providers))
    else:
        run_pipeline(root, list(providers), publish=publish == "publish")


def count_side(side: str, records: int, workers: int, publish: bool, hash_seed: int) -> list[int]:
    """Instructions of each of worker 0's providers on one side (its share of ``records``), in a child process."""
    with tempfile.TemporaryDirectory(prefix=f"bench-{side}-") as tmp:
        providers = prepare(Path(tmp), records, workers)["0"]
        argv = [sys.executable, "-c", COUNTED, str(Path(__file__).parent), side, tmp,
                "publish" if publish else "-", *providers]
        regions = callgrind.count(argv, Path(tmp) / "callgrind", hash_seed=hash_seed)
    if len(regions) != len(providers):
        raise RuntimeError(f"{side}: {len(regions)} counted regions for {len(providers)} providers "
                           f"(something else called {callgrind.MARKER})")
    return regions


FIXED_RECORDS = 10  # a provider's records in the runs that count each side's fixed cost


def instruction_figures(args: argparse.Namespace) -> dict:
    """Worker 0's share of each side counted under callgrind twice, at ``--records`` and at ``FIXED_RECORDS`` a
    provider: the difference is the instructions a record costs, free of each run's fixed cost (Dagster's run
    set-up is as large as 1,000 records' work) and of the imports and set-up before the worker's clock starts."""
    share = args.records // (args.workers * len(FORMATS))
    if share <= FIXED_RECORDS:
        raise SystemExit(f"--instructions needs more than {FIXED_RECORDS} records a provider (--records)")
    figures = {"worker_records": share * len(FORMATS), "hash_seed": args.hash_seed}
    for side in ("raw", "pipeline"):
        small = count_side(side, FIXED_RECORDS * args.workers * len(FORMATS), args.workers, args.publish, args.hash_seed)
        large = count_side(side, args.records, args.workers, args.publish, args.hash_seed)
        per = [(b - a) / (share - FIXED_RECORDS) for a, b in zip(small, large)]
        figures[f"{side}_instructions_per_record"] = round(sum(per) / len(per))
        figures[f"{side}_fixed_instructions_per_run"] = round(sum(a - FIXED_RECORDS * p for a, p in zip(small, per)) / len(per))
        for kind, value in zip(FORMATS, per):
            figures[f"{side}_{kind}_instructions_per_record"] = round(value)
    figures["instruction_ratio"] = round(figures["raw_instructions_per_record"] / figures["pipeline_instructions_per_record"], 3)
    for side in ("raw", "pipeline"):
        kinds = ", ".join(f"{kind} {figures[f'{side}_{kind}_instructions_per_record']:,}" for kind in FORMATS)
        print(f"{side:>8}: {figures[f'{side}_instructions_per_record']:,} instructions a record ({kinds}); "
              f"{figures[f'{side}_fixed_instructions_per_run']:,} fixed a provider's run")
    print(f"pipeline / raw limit in instructions a record = {figures['instruction_ratio']:.3f} (worker 0's "
          f"{figures['worker_records']:,} records less {FIXED_RECORDS * len(FORMATS)}; callgrind, PYTHONHASHSEED={args.hash_seed})")
    return figures


def wall_figures(args: argparse.Namespace) -> dict:
    """Both sides on ``--workers`` processes: records/s end to end, the workers' CPU seconds, peak RSS; with
    ``--repeat``, raw then pipeline that many times, and each figure the median of the rounds'."""
    rounds = [wall_round(args) for _ in range(args.repeat)]
    if len(rounds) == 1:
        return rounds[0]
    kept = {"records": rounds[0]["records"], "rounds": len(rounds)}
    for name in ("raw_records_per_s", "pipeline_records_per_s", "ratio", "cpu_ratio", "raw_cpu_s", "pipeline_cpu_s"):
        kept[name] = median(r[name] for r in rounds)
    ratios = sorted(r["ratio"] for r in rounds)
    kept["ratio_range"] = f"{ratios[0]:.2f}-{ratios[-1]:.2f}"
    for name in ("peak_worker_rss_mb", "raw_peak_worker_rss_mb"):
        kept[name] = max(r[name] for r in rounds)
    print(f"median of {len(rounds)} rounds: pipeline / raw limit = {kept['ratio']:.2f} ({kept['ratio_range']}; "
          f"in CPU seconds: {kept['cpu_ratio']:.2f}); peak worker RSS {kept['peak_worker_rss_mb']:,} MB")
    return kept


def wall_round(args: argparse.Namespace) -> dict:
    """One run of each side."""
    figures = {}
    for side, func in (("raw", run_raw), ("pipeline", partial(run_pipeline, publish=args.publish))):
        with tempfile.TemporaryDirectory(prefix=f"bench-{side}-") as tmp:
            plan = prepare(Path(tmp), args.records, args.workers)
            count = args.records // (args.workers * len(FORMATS)) * args.workers * len(FORMATS)
            t0 = time.perf_counter()
            with ProcessPoolExecutor(args.workers) as pool:
                results = list(pool.map(func, [tmp] * args.workers, plan.values()))
            wall = time.perf_counter() - t0
            figures[side] = (count, wall, max(r["rss_mb"] for r in results), sum(r["cpu_s"] for r in results))
    for side, (count, wall, rss, cpu) in figures.items():
        print(f"{side:>8}: {count:,} records in {wall:,.1f} s = {count / wall:,.0f} records/s end to end "
              f"({args.workers} workers), peak worker RSS {rss:,.0f} MB; workers' CPU {cpu:,.1f} s")
    (count, raw_wall, raw_rss, raw_cpu), (_, wall, rss, cpu) = figures["raw"], figures["pipeline"]
    print(f"pipeline / raw limit = {raw_wall / wall:.2f} (in CPU seconds: {raw_cpu / cpu:.2f})", flush=True)
    return {"records": count, "raw_records_per_s": round(count / raw_wall), "pipeline_records_per_s": round(count / wall),
            "ratio": round(raw_wall / wall, 3), "cpu_ratio": round(raw_cpu / cpu, 3), "raw_cpu_s": round(raw_cpu, 1),
            "pipeline_cpu_s": round(cpu, 1), "peak_worker_rss_mb": round(rss), "raw_peak_worker_rss_mb": round(raw_rss)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--publish", action="store_true",
                        help="the pipeline also reports, gates and publishes each provider's day (embedded index)")
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions a record of worker 0's share under callgrind instead of timing both "
                             "sides (steady where CPU seconds swing; e.g. --records 6000: minutes)")
    parser.add_argument("--hash-seed", type=int, default=0, help="PYTHONHASHSEED of the counted runs (--instructions)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="rounds of raw then pipeline; the recorded figures are the median of the rounds'")
    recorded.add_arguments(parser)
    args = parser.parse_args()
    if args.repeat < 1 or args.repeat > 1 and args.instructions:
        parser.error("--repeat: at least 1, and only for timed runs (instruction counts repeat to the instruction)")
    run = recorded.Run("records_pipeline", args)
    run.finish(instruction_figures(args) if args.instructions else wall_figures(args))


if __name__ == "__main__":
    main()
