"""Write + read OriginalRecords through the layout/IO path vs raw fastavro on the same records.

    uv run python benchmarks/storage_roundtrip.py --records 200000

Documents are real OAI-PMH records from ../shared/fixtures (falling back to the demo samples when
../shared is absent), each given a unique id, generated lazily so memory stays flat. Each side runs in
its own subprocess so peak RSS is measured per side.
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


def run_layout(count: int, root: Path) -> dict:
    from ingest_assets.storage import LocalStorage
    from ingest_assets.storage.activities import RecordSource, RecordStream, write_activity
    from ingest_assets.storage.avro import ORIGINAL_RECORD

    storage = LocalStorage(root)
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    result = write_activity(storage, RecordStream(records(count, started), started=started), provider="bench",
                            activity="harvest", day=date.today(), started=started, schema=ORIGINAL_RECORD,
                            partition="bench")
    t1 = time.perf_counter()
    read = sum(1 for _ in RecordSource(storage, result.output))
    t2 = time.perf_counter()
    return {"write_s": t1 - t0, "read_s": t2 - t1, "records": read, "bytes": result.bytes}


def run_raw(count: int, root: Path) -> dict:
    import fastavro

    from ingest_assets.storage.avro import ORIGINAL_RECORD, default_codec, schema_with_doc

    codec, level = default_codec()
    schema = schema_with_doc(ORIGINAL_RECORD, "raw")
    path = root / "raw.avro"
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    with open(path, "wb") as handle:
        fastavro.writer(handle, schema, records(count, started), codec=codec, codec_compression_level=level, validator=False)
    t1 = time.perf_counter()
    with open(path, "rb") as handle:
        read = sum(1 for _ in fastavro.reader(handle))
    t2 = time.perf_counter()
    return {"write_s": t1 - t0, "read_s": t2 - t1, "records": read, "bytes": path.stat().st_size}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--side", choices=["layout", "raw"])
    args = parser.parse_args()
    if args.side:
        with tempfile.TemporaryDirectory() as tmp:
            figures = (run_layout if args.side == "layout" else run_raw)(args.records, Path(tmp))
        figures["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(figures))
        return
    results = {}
    for side in ("raw", "layout"):
        out = subprocess.run([sys.executable, __file__, "--records", str(args.records), "--side", side],
                             check=True, capture_output=True, text=True).stdout
        results[side] = json.loads(out.strip().splitlines()[-1])
    for side, f in results.items():
        total = f["write_s"] + f["read_s"]
        print(f"{side:>6}: {f['records']:,} records, {f['bytes'] / 1e6:,.0f} MB Avro; write {f['records'] / f['write_s']:,.0f} rec/s, "
              f"read {f['records'] / f['read_s']:,.0f} rec/s, write+read {f['records'] / total:,.0f} rec/s, "
              f"peak RSS {f['peak_rss_mb']:.0f} MB")
    ratio = (results["raw"]["write_s"] + results["raw"]["read_s"]) / (results["layout"]["write_s"] + results["layout"]["read_s"])
    print(f"ratio layout/raw (throughput) = {ratio:.2f}")


if __name__ == "__main__":
    main()
