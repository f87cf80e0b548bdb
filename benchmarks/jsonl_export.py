"""The JSON-L export vs a raw loop over the same enriched Avro, same run.

    uv run python benchmarks/jsonl_export.py --records 200000 --repeat 3

One enrichment output of ``--records`` MAPRecords: DPLA's own published records (``../shared/fixtures/dpla-published``,
their originals mapped and enriched by each hub's profile), replicated with unique ids, behind a full harvest that
counts no deletion (so neither side reads it). Each side runs in its own process (its peak RSS its own):

- raw: fastavro reads the output's parts, ``json.dumps`` each record, one ``gzip`` file at level 6;
- export: the published state of the day (``PublishedState``: the snapshot walk, its SQLite seen-set) rendered as
  JSON-L lines (the index document, ``_id``, ``originalRecord``) into gzipped parts, ``_MANIFEST`` and ``_SUCCESS``
  (``export_jsonl``, gzip level 6 as Spark's text writer).

The export also runs at a quarter of the records: peak RSS at both sizes says whether memory stays flat. Ratios are
raw seconds over export seconds (1.0: as fast as the raw loop), on CPU seconds and on wall seconds, each side timed
after its imports (a code location has the export's loaded before any run).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import resource
import subprocess
import sys
import tempfile
import time
from datetime import date, datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout: its test support's fixture reader

DAY = date(2026, 3, 1)
STARTED = datetime(2026, 3, 1, 2, tzinfo=timezone.utc)


def base_records() -> list[dict]:
    """DPLA's published records, mapped and enriched as our pipeline does them."""
    from ingest_assets.core.registry import ProviderEntry
    from ingest_assets.records.enrichment import chain_for
    from ingest_assets.records.mapping import mapper_for
    from ingest_assets.records.preview import read_inputs
    from ingest_assets.records.mapping.profiles import PROFILES
    from ingest_assets_tests.support.dpla_published import documents, profile_of

    found = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in documents():
            profile = profile_of(path)
            if profile not in PROFILES:
                continue
            dpla = json.loads(path.read_text(encoding="utf-8"))
            entry = ProviderEntry(profile.replace("-", ""), {"mapping": profile, "label": dpla["provider"]["name"]})
            original = Path(tmp) / path.name
            original.write_text(dpla["originalRecord"]["stringValue"], encoding="utf-8")
            for item in read_inputs([str(original)], PROFILES[profile], entry.name):
                mapped = mapper_for(entry).map(item).record
                found.append(chain_for(entry).enrich(mapped)[0])
    return found


def records(count: int):
    base = base_records()
    for n in range(count):
        record = dict(base[n % len(base)])
        record["originalId"] = f"bench:{n:09d}"
        record["id"] = hashlib.md5(f"bench--bench:{n:09d}".encode()).hexdigest()
        record["dplaUri"] = f"http://dp.la/api/items/{record['id']}"
        yield record


def build(root: Path, count: int) -> None:
    """The day's harvest (full, no deletion), mapping and enrichment outputs of provider ``bench``."""
    from ingest_assets.storage import LocalStorage
    from ingest_assets.storage.activities import RecordSource, RecordStream, write_activity
    from ingest_assets.storage.avro import MAP_RECORD, ORIGINAL_RECORD

    storage = LocalStorage(root)
    inputs: list = []
    for activity, schema, stream in (
        ("harvest", ORIGINAL_RECORD, RecordStream([], summary=lambda: {"mode": "full", "deleted": 0})),
        ("mapping", MAP_RECORD, RecordStream([])),
        ("enrichment", MAP_RECORD, RecordStream(records(count))),
    ):
        stream.inputs = inputs
        result = write_activity(storage, stream, provider="bench", activity=activity, day=DAY, started=STARTED,
                                schema=schema, partition="bench")
        inputs = [RecordSource(storage, result.output)]


def run_raw(root: Path, out: Path) -> dict:
    import fastavro

    from ingest_assets.storage import LocalStorage, layout

    output = layout.latest_output(LocalStorage(root), "bench", "enrichment", DAY)
    lines = 0
    with gzip.open(out / "raw.jsonl.gz", "wt", compresslevel=6, encoding="utf-8") as sink:
        for part in sorted((root / output.folder).glob("part-*.avro")):
            with open(part, "rb") as handle:
                for record in fastavro.reader(handle):
                    sink.write(json.dumps(record, ensure_ascii=False))
                    sink.write("\n")
                    lines += 1
    return {"lines": lines, "bytes": (out / "raw.jsonl.gz").stat().st_size}


def run_export(root: Path, out: Path) -> dict:
    from ingest_assets.core.registry import ProviderEntry
    from ingest_assets.records.export.jsonl import PublishedState, export_jsonl
    from ingest_assets.records.mapping import base_id_for
    from ingest_assets.storage import LocalStorage, layout

    entry = ProviderEntry("bench", {"mapping": "oai_dc"})
    state = PublishedState(LocalStorage(root), entry, DAY, exclude=set(), suppressed=set())
    done = export_jsonl(LocalStorage(out), layout.jsonl_export("bench", "bench", STARTED), state, base_id_for(entry),
                        provider="bench", partition="bench", started=STARTED, inputs=[s.uri for s in state.sources])
    return {"lines": done.records, "bytes": done.bytes, "parts": len(done.parts), "failed": done.failed}


def child(side: str, root: str) -> None:
    """One side, timed after its imports (the code location has them loaded before any run)."""
    if side == "export":
        import ingest_assets.records.export.jsonl  # noqa: F401
    with tempfile.TemporaryDirectory() as out:
        cpu, wall = time.process_time(), time.perf_counter()
        result = (run_raw if side == "raw" else run_export)(Path(root), Path(out))
        result.update(cpu=time.process_time() - cpu, wall=time.perf_counter() - wall,
                      rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    print(json.dumps(result))


def measure(side: str, root: Path) -> dict:
    done = subprocess.run([sys.executable, __file__, "--child", side, str(root)], capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each side, alternating (the best counts)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    with tempfile.TemporaryDirectory(prefix="bench-jsonl-") as tmp:
        small, large = Path(tmp) / "small", Path(tmp) / "large"
        build(small, max(1, args.records // 4))
        build(large, args.records)
        quarter = measure("export", small)
        runs = [(measure("raw", large), measure("export", large)) for _ in range(args.repeat)]  # alternating
    raw = min((r for r, _ in runs), key=lambda r: r["cpu"])
    ours = min((o for _, o in runs), key=lambda o: o["cpu"])
    assert raw["lines"] == ours["lines"] == args.records and ours["failed"] == 0, (raw, ours)
    print(f"{args.records:,} enriched records (DPLA's published records, replicated), one output; best of "
          f"{args.repeat} alternating runs of each side")
    for name, r in (("raw fastavro -> json.dumps -> gzip", raw), ("JSON-L export", ours)):
        print(f"  {name}: {r['cpu']:.1f} CPU s ({args.records / r['cpu']:,.0f} rec/CPU s), {r['wall']:.1f} s wall, "
              f"{r['bytes'] / 2**20:,.1f} MiB gzipped, peak RSS {r['rss_mb']:,.0f} MB")
    print(f"  ratio export/raw: {raw['cpu'] / ours['cpu']:.2f} on CPU seconds, {raw['wall'] / ours['wall']:.2f} on wall "
          f"seconds (>= 0.8 wanted)")
    print(f"  export peak RSS: {quarter['rss_mb']:,.0f} MB at {args.records // 4:,} records, {ours['rss_mb']:,.0f} MB "
          f"at {args.records:,}")


if __name__ == "__main__":
    main()
