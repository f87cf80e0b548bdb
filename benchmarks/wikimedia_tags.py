"""What the Wikimedia export and the tag sitemaps cost, and that their memory stays flat as the index grows.

    uv run python benchmarks/wikimedia_tags.py                       # 10,000 and 40,000 documents
    uv run python benchmarks/wikimedia_tags.py --sizes 20000 80000

For each size, a provider day of that many documents is published into an embedded index (gated, as a run
publishes it): DPLA's Smithsonian document (``../shared/fixtures/dpla-published/smithsonian-4a338737.json``) as
we publish it, under that many DPLA ids, every one tagged ``nwdh`` and every other one ``aviation``, eligible for
Commons with the hub's own table (the NMAH opted in). Then, each in a fresh process: the day's Wikimedia export
(Gate D, every document read through the alias, judged, its markup written) and the tag sitemaps (one scan of the
alias). Figures are CPU seconds of that process (``time.process_time``) and its peak RSS (``VmHWM``: the peak of
this process's own memory, which ``ru_maxrss`` is not after a fork from the large parent) beside that of a process
that only imports the same modules and opens the hub; the growth between the sizes is the memory figure.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from datetime import date, datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ingest_assets.core.registry import ProviderEntry  # noqa: E402
from ingest_assets.core.sql import make_engine  # noqa: E402
from ingest_assets.records.export.sitemaps import write_tag_sitemaps  # noqa: E402
from ingest_assets.records.indexing import open_search_index  # noqa: E402
from ingest_assets.records.mapping import mint_id, minter_for  # noqa: E402
from ingest_assets.records.publishing.journal import Journal  # noqa: E402
from ingest_assets.records.publishing.promotion import Publisher  # noqa: E402
from ingest_assets.records.publishing.review import Ledger  # noqa: E402
from ingest_assets.records.publishing.takedowns import Takedowns  # noqa: E402
from ingest_assets.records.wikimedia import export_published_day  # noqa: E402
from ingest_assets.storage import LocalStorage  # noqa: E402
from ingest_assets_tests.support.wikimedia import own_table, publish_day, published_document_record  # noqa: E402

ALIAS = "dpla-map4"
DAY = date(2026, 1, 15)
NOW = datetime(2026, 1, 16, 4, tzinfo=timezone.utc)
TAGS = ["nwdh", "aviation"]


def hub(root: Path) -> tuple[LocalStorage, Publisher]:
    engine = make_engine(f"sqlite:///{root / 'ingest.sqlite3'}")
    index = open_search_index(str(root / "search"))
    return LocalStorage(root / "storage"), Publisher(index, ALIAS, Journal(engine), Ledger(engine), Takedowns(engine))


def setup(root: Path, size: int) -> None:
    template = json.loads(published_document_record("smithsonian-4a338737.json")["document"])

    def record(n: int) -> dict:
        record_id = mint_id("smithsonian", f"bench-{n}")
        document = {**template, "id": record_id, "@id": f"http://dp.la/api/items/{record_id}",
                    "tags": ["nwdh", "aviation"] if n % 2 else ["nwdh"]}
        return {"id": record_id, "deleted": False, "document": json.dumps(document, sort_keys=True)}

    storage, publisher = hub(root)
    _, published = publish_day(storage, publisher, "si", DAY, [record(n) for n in range(size)])
    assert published.promoted, published.results
    own_table(root, {("Smithsonian Institution", "National Museum of American History"): True})


def measure(task: str, root: Path) -> dict:
    storage, publisher = hub(root)
    started = time.process_time()
    if task == "export":
        mint = minter_for(ProviderEntry("si", {"mapping": "si"}))
        _, export = export_published_day(storage, publisher.index, ALIAS, publisher.ledger, publisher.journal, "si",
                                         mint, DAY, NOW)
        count = export.eligible
    elif task == "sitemaps":
        written = write_tag_sitemaps(storage, publisher.index.tagged(ALIAS, TAGS), TAGS, NOW, "https://dp.la/item",
                                     "https://sitemaps.dp.la")
        count = sum(s.urls for s in written.values())
    else:
        count = 0
    status = Path("/proc/self/status").read_text()
    return {"cpu": time.process_time() - started, "count": count,
            "rss_mb": int(re.search(r"VmHWM:\s+(\d+) kB", status)[1]) / 1024}


def child(task: str, root: Path) -> dict:
    environment = {**os.environ, "INGEST_WIKI_INSTITUTIONS": str(root / "institutions_v2.json")}
    done = subprocess.run([sys.executable, __file__, "--child", task, str(root)], capture_output=True, text=True,
                          env=environment, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs=2, default=[10_000, 40_000])
    parser.add_argument("--child", nargs=2, metavar=("TASK", "ROOT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child[0], Path(args.child[1]))))
        return
    rows = {}
    for size in args.sizes:
        with tempfile.TemporaryDirectory(prefix="bench-wikimedia-") as tmp:
            root = Path(tmp)
            setup(root, size)
            rows[size] = {task: child(task, root) for task in ("imports", "export", "sitemaps")}
    print("documents   task       count      CPU s   per s      peak RSS  (imports only)")
    for size, tasks in rows.items():
        for task in ("export", "sitemaps"):
            figures = tasks[task]
            print(f"{size:>9,}   {task:<9} {figures['count']:>7,}  {figures['cpu']:8.2f}  {figures['count'] / figures['cpu']:7,.0f}"
                  f"  {figures['rss_mb']:7.0f} MB  ({tasks['imports']['rss_mb']:.0f} MB)")
    small, large = args.sizes
    for task in ("export", "sitemaps"):
        grown = [rows[size][task]["rss_mb"] - rows[size]["imports"]["rss_mb"] for size in (small, large)]
        print(f"{task}: peak RSS above imports {grown[0]:.0f} MB at {small:,}, {grown[1]:.0f} MB at {large:,} "
              f"({large // small}x the documents)")


if __name__ == "__main__":
    main()
