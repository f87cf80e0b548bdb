"""What gated publishing costs per provider day, against the in-place update publishing did before it.

    uv run python benchmarks/publishing.py --documents 100000 --changes 1000              # embedded index
    uv run python benchmarks/publishing.py --documents 100000 --changes 1000 --search http://127.0.0.1:9200

A provider whose live index holds ``--documents`` documents gets one day of ``--changes`` records (half new, half
changed). The baseline applies them in place to the live index (one bulk write: no candidate, no gates, nothing
to roll back to). Gated publishing builds a candidate (a copy of the live index with the day applied), judges
it with the four pre-flip gates, flips the alias and reads the canary, then prunes old indices. Both run on the
same index contents in the same process. The day's report (the diff of its records against the live index)
and the absences of a full harvest (1% of the records gone) are timed too. Documents are IndexRecords of
MAP records shaped like the demo's (about 1 KB each). Each figure is wall seconds and this process's CPU seconds
(the embedded index works in-process, so its CPU is comparable on a loaded machine); the first publish's CPU
per document is the cost of building a new provider's candidate index.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ingest_assets.core.sql import make_engine  # noqa: E402
from ingest_assets.records.harvest.original import original_record  # noqa: E402
from ingest_assets.records.indexing import open_search_index  # noqa: E402
from ingest_assets.records.indexing.absences import Absences  # noqa: E402
from ingest_assets.records.publishing.journal import Journal  # noqa: E402
from ingest_assets.records.publishing.promotion import Publisher  # noqa: E402
from ingest_assets.records.publishing.report import diff_against  # noqa: E402
from ingest_assets.records.publishing.review import Ledger  # noqa: E402
from ingest_assets.records.publishing.takedowns import Takedowns  # noqa: E402
from ingest_assets.storage import LocalStorage  # noqa: E402
from ingest_assets.storage.activities import RecordSource, RecordStream, write_activity  # noqa: E402
from ingest_assets.storage.avro import ORIGINAL_RECORD  # noqa: E402
from ingest_assets_tests.support.publishing import documents  # noqa: E402

DAY = date(2026, 1, 15)


class Clock:
    def __init__(self):
        self.now = datetime(2026, 1, 15, 2, tzinfo=timezone.utc)

    def __call__(self):
        self.now += timedelta(seconds=1)
        return self.now


def day_records(total: int, changes: int) -> list[dict]:
    """Half changed (new titles), half new records."""
    half = changes // 2
    return [*documents("demo", range(1, half + 1), title="Flooded mill at Millbrook"),
            *documents("demo", range(total + 1, total + changes - half + 1))]


def timed(action):
    """((wall seconds, CPU seconds), the action's result)."""
    started, cpu = time.perf_counter(), time.process_time()
    result = action()
    return (time.perf_counter() - started, time.process_time() - cpu), result


def publishing(target: str, root: Path, total: int, changes: int) -> dict[str, tuple[float, float]]:
    clock = Clock()
    index = open_search_index(target, clock=clock)
    engine = make_engine(f"sqlite:///{root / 'ingest.sqlite3'}")
    publisher = Publisher(index, "bench", Journal(engine), Ledger(engine), Takedowns(engine), clock=clock)
    storage = LocalStorage(root / "storage")
    figures = {}
    first = documents("demo", range(1, total + 1))  # made before the clock starts: publishing's cost alone
    figures["first publish"], _ = timed(lambda: publisher.publish({"demo": [(DAY, first)]}, storage, {"demo": 0.02}))
    live = index.aliased("bench")[0]
    figures["report diff"], _ = timed(lambda: diff_against(day_records(total, changes), index, live, set()))
    figures["gated publish"], outcome = timed(lambda: publisher.publish(
        {"demo": [(DAY + timedelta(days=1), day_records(total, changes))]}, storage, {"demo": 0.02}))
    assert outcome["demo"].promoted, outcome["demo"].results
    # the baseline: the same day applied in place to a live index of the same size
    copy = index.create_index("bench", "demo")
    index.copy(live, copy)
    figures["in-place apply"], _ = timed(lambda: index.write(copy, day_records(total, changes)))
    figures["copy alone"], _ = timed(lambda: index.copy(live, index.create_index("bench", "demo")))
    for physical in index.indices("bench"):
        index.drop(physical.name)
    index.close()
    return figures


def absences(root: Path, total: int) -> tuple[float, float]:
    storage = LocalStorage(root / "absences")
    for n, gone in enumerate((0, total // 100)):
        started = datetime(2026, 1, 15, 2, tzinfo=timezone.utc) + timedelta(days=n)
        records = (original_record("demo", f"id{i}", int(started.timestamp()), "<x/>", "application/xml", False)
                   for i in range(gone, total))
        result = write_activity(storage, RecordStream(records, started=started, summary=lambda: {"mode": "full"}),
                                provider="demo", activity="harvest", day=started.date(), started=started,
                                schema=ORIGINAL_RECORD, partition="bench")
    seconds, found = timed(lambda: sum(1 for _ in Absences(RecordSource(storage, result.output)).ids()))
    assert found == total // 100
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--changes", type=int, default=1_000)
    parser.add_argument("--search", help="an Elasticsearch URL (default: the embedded index)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-publishing-") as tmp:
        root = Path(tmp)
        figures = publishing(args.search or str(root / "search"), root, args.documents, args.changes)
        figures["absences (full harvest, 1% gone)"] = absences(root, args.documents)
    backend = "Elasticsearch" if args.search else "embedded index"
    print(f"{backend}: a provider of {args.documents:,} documents, a day of {args.changes:,} records")
    print(f"  {'':<34} {'wall':>8}   {'CPU':>8}")
    for name, (seconds, cpu) in figures.items():
        print(f"  {name:<34} {seconds:8.2f} s {cpu:8.2f} s")
    print(f"  gated publish / in-place apply     {figures['gated publish'][0] / figures['in-place apply'][0]:8.1f}x")
    print(f"  first publish CPU per document     {figures['first publish'][1] / args.documents * 1e6:8.1f} us")
    print(f"  peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB")


if __name__ == "__main__":
    main()
