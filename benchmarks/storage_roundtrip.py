"""Write + read OriginalRecords (or MAPRecords) through the layout/IO path vs raw fastavro on the same records.

    uv run python benchmarks/storage_roundtrip.py --records 200000 [--schema map]

Documents are real OAI-PMH records from ../shared/fixtures (falling back to the demo samples when
../shared is absent), each given a unique id, generated lazily so memory stays flat. With ``--schema map``
the records are MAPRecords: the records pipeline benchmark's fixture records (oai_dc, QDC, MODS) mapped and
enriched once, then repeated with unique ids (needs ../shared/fixtures). Each side runs in its own subprocess
so peak RSS is measured per side; the raw side is plain ``fastavro.writer`` (no validation, no union hints).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from datetime import date, datetime, timezone
from pathlib import Path

from lxml import etree

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "oai-pmh"
OAI = "{http://www.openarchives.org/OAI/2.0/}"


def base_documents() -> list[str]:
    docs = []
    parser = etree.XMLParser(resolve_entities=False, no_network=True, recover=True)
    for path in sorted(FIXTURES.glob("*listrecords*.xml")):
        tree = etree.parse(str(path), parser)
        docs += [etree.tostring(r, encoding="unicode") for r in tree.iter(f"{OAI}record")]
    if not docs:  # a clone without ../shared: the demo's own records
        from ingest_assets.demo.samples import sample_records

        docs = [json.dumps(r.fields) * 8 for r in sample_records(200)]
    return docs


def records(count: int, started: datetime):
    docs = base_documents()
    stamp = int(started.timestamp())
    for n in range(count):
        doc = docs[n % len(docs)]
        while len(doc) < 3000:  # the 3-10 KB documents
            doc = doc + "\n" + docs[(n * 7 + len(doc)) % len(docs)]
        yield {"id": f"bench:{n:09d}", "ingestDate": stamp, "provider": "bench", "document": doc[:10000],
               "mimetype": "application_xml", "deleted": False}


def map_records(count: int, started: datetime):
    """MAPRecords of the records pipeline benchmark's fixtures (mapped and enriched once), with unique ids."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import records_pipeline as pipeline

    from ingest_assets.core.registry.entries import ProviderEntry
    from ingest_assets.records.engines.steps import RecordActivity

    base = []
    for kind, (profile, _files) in pipeline.FORMATS.items():
        entry = ProviderEntry(kind, {"mapping": profile, "mapping_overrides": pipeline.OVERRIDES[kind]})
        found = list(pipeline.originals(kind, kind, len(pipeline.base_records(kind)), started))
        for activity in ("mapping", "enrichment"):
            step = RecordActivity(activity, entry).steps(RecordActivity(activity, entry).new_report())[0]
            found = [r for r in map(step, found) if r is not None]
        base += found
    for n in range(count):
        yield {**base[n % len(base)], "id": f"bench{n:09d}"}


SCHEMAS = {"original": ("ORIGINAL_RECORD", records), "map": ("MAP_RECORD", map_records)}


def run_layout(count: int, root: Path, kind: str) -> dict:
    from ingest_assets.storage import LocalStorage, avro
    from ingest_assets.storage.activities import RecordSource, RecordStream, write_activity

    storage = LocalStorage(root)
    started = datetime.now(timezone.utc)
    schema, generate = SCHEMAS[kind]
    source = list(generate(count, started)) if kind == "map" else generate(count, started)  # mapped before timing
    t0, c0 = time.perf_counter(), time.process_time()
    result = write_activity(storage, RecordStream(iter(source), started=started), provider="bench",
                            activity="harvest", day=date.today(), started=started, schema=getattr(avro, schema),
                            partition="bench")
    t1, c1 = time.perf_counter(), time.process_time()
    read = sum(1 for _ in RecordSource(storage, result.output))
    t2 = time.perf_counter()
    return {"write_s": t1 - t0, "write_cpu_s": c1 - c0, "read_s": t2 - t1, "records": read, "bytes": result.bytes}


def run_raw(count: int, root: Path, kind: str) -> dict:
    import fastavro

    from ingest_assets.storage import avro

    codec, level = avro.default_codec()
    schema, generate = SCHEMAS[kind]
    schema = avro.schema_with_doc(getattr(avro, schema), "raw")
    path = root / "raw.avro"
    started = datetime.now(timezone.utc)
    source = list(generate(count, started)) if kind == "map" else generate(count, started)
    t0, c0 = time.perf_counter(), time.process_time()
    with open(path, "wb") as handle:
        fastavro.writer(handle, schema, iter(source), codec=codec, codec_compression_level=level, validator=False)
    t1, c1 = time.perf_counter(), time.process_time()
    with open(path, "rb") as handle:
        read = sum(1 for _ in fastavro.reader(handle))
    t2 = time.perf_counter()
    return {"write_s": t1 - t0, "write_cpu_s": c1 - c0, "read_s": t2 - t1, "records": read, "bytes": path.stat().st_size}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--schema", choices=sorted(SCHEMAS), default="original")
    parser.add_argument("--side", choices=["layout", "raw"])
    args = parser.parse_args()
    if args.side:
        with tempfile.TemporaryDirectory() as tmp:
            figures = (run_layout if args.side == "layout" else run_raw)(args.records, Path(tmp), args.schema)
        figures["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(figures))
        return
    results = {}
    for side in ("raw", "layout"):
        out = subprocess.run([sys.executable, __file__, "--records", str(args.records), "--schema", args.schema, "--side", side],
                             check=True, capture_output=True, text=True).stdout
        results[side] = json.loads(out.strip().splitlines()[-1])
    for side, f in results.items():
        total = f["write_s"] + f["read_s"]
        print(f"{side:>6}: {f['records']:,} records, {f['bytes'] / 1e6:,.0f} MB Avro; write {f['records'] / f['write_s']:,.0f} rec/s "
              f"({f['write_cpu_s'] / f['records'] * 1e6:,.1f} CPU us/rec), "
              f"read {f['records'] / f['read_s']:,.0f} rec/s, write+read {f['records'] / total:,.0f} rec/s, "
              f"peak RSS {f['peak_rss_mb']:.0f} MB")
    ratio = (results["raw"]["write_s"] + results["raw"]["read_s"]) / (results["layout"]["write_s"] + results["layout"]["read_s"])
    print(f"ratio layout/raw (throughput) = {ratio:.2f}")


if __name__ == "__main__":
    main()
