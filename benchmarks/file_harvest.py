"""A file delivery of many gzipped XML files: the file harvest against a raw ``gzip | lxml.iterparse`` loop.

    uv run --locked python benchmarks/file_harvest.py [--sizes 100000 1000000] [--files 200]

For each size, writes ``--files`` gzipped XML files (ingestion3's Smithsonian ``<doc>`` record, 2.3 kB, one per
record id) in a temporary folder, then runs in a fresh process each, on the same files:
  raw       gzip.open + lxml.iterparse(tag="doc"), each element cleared (no ids, no documents)
  minimal   the raw loop plus what no harvest can skip: each record's id (the same XPath), its document
            (tostring) and a duplicate check (one SQLite insert); the floor the harvest is measured against too
  harvest   harvest_records of a ``file`` block over the folder: every record's id (XPath), its document, the
            OriginalRecord, the run's duplicate check (SQLite), the request log; the records are counted
and prints records/s (wall and CPU), the harvest's share of the raw loop's rate, and each process's peak RSS:
memory stays flat when the harvest's RSS at the large size is that of the small one.
"""

from __future__ import annotations

import argparse
import gzip
import json
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


def harvest(folder: Path) -> int:
    from ingest_assets.core.http import HttpClient
    from ingest_assets.core.registry import ProviderEntry
    from ingest_assets.records.harvest import StorageCheckpoint, harvest_records
    from ingest_assets.storage import LocalStorage

    with tempfile.TemporaryDirectory(prefix="bench-state-") as state:
        entry = ProviderEntry("smithsonian", {"harvest": {**BLOCK, "path": str(folder)}})
        run = harvest_records(entry, started=datetime.now(timezone.utc), window=None, http=HttpClient(),
                              checkpoint=StorageCheckpoint(LocalStorage(state), "smithsonian"))
        count = sum(1 for _record in run)
        for _chunk in run.logs()["harvest-requests.jsonl"]:
            pass
        assert run.stats.failed == 0 and run.stats.records == count, run.stats.errors[:3]
        return count


def child(kind: str, folder: Path) -> None:
    if kind == "harvest":  # imported before the clock starts, as the raw loop's lxml is
        import ingest_assets.records.harvest.files  # noqa: F401
    start, cpu = time.perf_counter(), time.process_time()
    count = {"raw": raw, "minimal": minimal, "harvest": harvest}[kind](folder)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"records": count, "wall": wall, "cpu": cpu, "rss_mb": rss}))


def measure(kind: str, folder: Path) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", kind, str(folder)], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--child", nargs=2, metavar=("KIND", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]))
        return
    if not RECORD.is_file():
        sys.exit(f"{RECORD} not found (the shared fixtures beside the repository)")
    print(f"{'records':>9} {'files':>5} {'MB':>7} {'raw rec/s':>10} {'minimal rec/s':>13} {'harvest rec/s':>13} "
          f"{'of raw wall':>11} {'of raw cpu':>10} {'of minimal cpu':>14} {'raw RSS MB':>10} {'harvest RSS MB':>14}")
    for size in args.sizes:
        with tempfile.TemporaryDirectory(prefix="bench-files-") as tmp:
            folder = Path(tmp)
            megabytes = generate(folder, size, args.files) / 1e6
            base, floor, ours = measure("raw", folder), measure("minimal", folder), measure("harvest", folder)
            assert base["records"] == floor["records"] == ours["records"] == size, (base, floor, ours)
            print(f"{size:>9} {args.files:>5} {megabytes:>7.0f} {size / base['wall']:>10.0f} {size / floor['wall']:>13.0f} "
                  f"{size / ours['wall']:>13.0f} {base['wall'] / ours['wall']:>11.2f} {base['cpu'] / ours['cpu']:>10.2f} "
                  f"{floor['cpu'] / ours['cpu']:>14.2f} {base['rss_mb']:>10.0f} {ours['rss_mb']:>14.0f}", flush=True)


if __name__ == "__main__":
    main()
