"""A file delivery of many gzipped XML files: the file harvest against a raw ``gzip | lxml.iterparse`` loop.

    uv run --locked python benchmarks/file_harvest.py [--sizes 100000 1000000] [--files 200] [--workers N]

For each size, writes ``--files`` gzipped XML files (ingestion3's Smithsonian ``<doc>`` record, 2.3 kB, one per
record id) in a temporary folder, then runs in a fresh process each, on the same files:
  raw       gzip.open + lxml.iterparse(tag="doc"), each element cleared (no ids, no documents), in one process
  minimal   the raw loop plus what no harvest can skip: each record's id (the same XPath), its document
            (tostring) and a duplicate check (one SQLite insert); what one process does at best
  harvest   harvest_records of a ``file`` block over the folder (every record's id, its document, the OriginalRecord,
            the run's duplicate check, the request log; the records are counted), twice: ``workers: 1`` (in the
            harvest's process) and ``workers: N`` (``--workers``, default the block's: one per CPU)
and prints records/s (wall, as a user waits for it), the harvests' share of the raw loop's rate (wall; and CPU:
the raw loop's CPU seconds over the harvest's, its workers' included), and peak RSS: the raw loop's process, and
the harvest's whole process tree (the harvest, its fork server and workers, summed; sampled every 0.1 s). Memory
stays flat when the harvest's RSS at the large size is that of the small one.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

RECORD = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "ingestion3" / "si.xml"
BLOCK = {"type": "file", "format": "xml", "include": "*.xml.gz", "record_xpath": "//doc",
         "id_xpath": "string(descriptiveNonRepeating/record_ID)"}


def generate(folder: Path, records: int, files: int) -> int:
    """``files`` gzipped files holding ``records`` records in all; their bytes, uncompressed."""
    doc = re.sub(r"^\s*<\?xml[^>]*\?>\s*", "", RECORD.read_text(encoding="utf-8")).strip()
    old = re.search(r"<record_ID>([^<]+)</record_ID>", doc).group(1)
    head, tail = doc.split(f"<record_ID>{old}</record_ID>")
    per_file, total = -(-records // files), 0
    for number in range(files):
        first, end = number * per_file, min(records, (number + 1) * per_file)
        body = "".join(f"{head}<record_ID>{old}-{n}</record_ID>{tail}" for n in range(first, end))
        data = f'<?xml version="1.0" encoding="UTF-8"?>\n<response>{body}</response>\n'.encode()
        total += len(data)
        (folder / f"SI_{number:04d}_DPLA.xml.gz").write_bytes(gzip.compress(data, compresslevel=1))
    return total


def raw(folder: Path) -> int:
    from lxml import etree

    count = 0
    for path in sorted(folder.glob("*.xml.gz")):
        with gzip.open(path, "rb") as stream:
            for _event, element in etree.iterparse(stream, tag="doc"):
                count += 1
                element.clear(keep_tail=True)
                while element.getprevious() is not None:
                    del element.getparent()[0]
    return count


def minimal(folder: Path) -> int:
    import sqlite3

    from lxml import etree

    record_id = etree.XPath(BLOCK["id_xpath"])
    with tempfile.TemporaryDirectory(prefix="bench-ids-") as tmp:
        seen = sqlite3.connect(f"{tmp}/ids.sqlite3")
        seen.execute("CREATE TABLE ids (id TEXT PRIMARY KEY) WITHOUT ROWID")
        insert, count = seen.cursor(), 0
        for path in sorted(folder.glob("*.xml.gz")):
            with gzip.open(path, "rb") as stream:
                for _event, element in etree.iterparse(stream, tag="doc"):
                    etree.tostring(element, encoding="unicode", with_tail=False)  # the record's document
                    count += insert.execute("INSERT OR IGNORE INTO ids VALUES (?)", (record_id(element),)).rowcount
                    element.clear(keep_tail=True)
                    while element.getprevious() is not None:
                        del element.getparent()[0]
        seen.close()
    return count


def harvest(folder: Path, workers: int | None) -> int:
    from ingest_assets.core.http import HttpClient
    from ingest_assets.core.registry import ProviderEntry
    from ingest_assets.records.harvest import StorageCheckpoint, harvest_records
    from ingest_assets.storage import LocalStorage

    with tempfile.TemporaryDirectory(prefix="bench-state-") as state:
        block = {**BLOCK, "path": str(folder), **({"workers": workers} if workers else {})}
        entry = ProviderEntry("smithsonian", {"harvest": block})
        run = harvest_records(entry, started=datetime.now(timezone.utc), window=None, http=HttpClient(),
                              checkpoint=StorageCheckpoint(LocalStorage(state), "smithsonian"))
        count = sum(1 for _record in run)
        for _chunk in run.logs()["harvest-requests.jsonl"]:
            pass
        assert run.stats.failed == 0 and run.stats.records == count, run.stats.errors[:3]
        return count


def child(kind: str, folder: Path, workers: int | None) -> None:
    from process_tree import TreeMemory

    if kind == "harvest":  # imported before the clock starts, as the raw loop's lxml is
        import ingest_assets.records.harvest.files  # noqa: F401
    tree = TreeMemory(os.getpid(), interval=0.1)
    start, cpu = time.perf_counter(), time.process_time()
    count = harvest(folder, workers) if kind == "harvest" else {"raw": raw, "minimal": minimal}[kind](folder)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    tree.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"records": count, "wall": wall, "cpu": cpu + tree.descendants_cpu(), "rss_mb": rss,
                      "tree_rss_mb": max(tree.peak_total / 2**20, rss)}))


def measure(kind: str, folder: Path, workers: int | None = None) -> dict:
    command = [sys.executable, __file__, "--child", kind, str(folder)] + (["--workers", str(workers)] if workers else [])
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--workers", type=int, default=None, help="the parallel harvest's workers (default: per CPU)")
    parser.add_argument("--child", nargs=2, metavar=("KIND", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]), args.workers)
        return
    if not RECORD.is_file():
        sys.exit(f"{RECORD} not found (the shared fixtures beside the repository)")
    workers = args.workers or min(len(os.sched_getaffinity(0)), args.files)
    print(f"{'records':>9} {'files':>5} {'MB':>6} {'raw rec/s':>9} {'minimal':>8} {'1 worker':>8} "
          f"{f'{workers} workers':>10} {'of raw wall':>11} {'of raw cpu':>10} {'raw RSS':>7} {'harvest tree RSS MB':>19}")
    for size in args.sizes:
        with tempfile.TemporaryDirectory(prefix="bench-files-") as tmp:
            folder = Path(tmp)
            megabytes = generate(folder, size, args.files) / 1e6
            base, floor = measure("raw", folder), measure("minimal", folder)
            one, ours = measure("harvest", folder, 1), measure("harvest", folder, workers)
            assert base["records"] == floor["records"] == one["records"] == ours["records"] == size, (base, ours)
            rate = {name: size / run["wall"] for name, run in (("raw", base), ("min", floor), ("one", one), ("ours", ours))}
            shares = "/".join(f"{base['wall'] / run['wall']:.2f}" for run in (one, ours))
            cpu_shares = "/".join(f"{base['cpu'] / run['cpu']:.2f}" for run in (one, ours))
            print(f"{size:>9} {args.files:>5} {megabytes:>6.0f} {rate['raw']:>9.0f} {rate['min']:>8.0f} {rate['one']:>8.0f} "
                  f"{rate['ours']:>10.0f} {shares:>11} {cpu_shares:>10} {base['rss_mb']:>7.0f} "
                  f"{one['tree_rss_mb']:>9.0f}/{ours['tree_rss_mb']:<9.0f}", flush=True)


if __name__ == "__main__":
    main()
