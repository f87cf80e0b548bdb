"""Per provider and day: what each record activity did, read from the newest ``_MANIFEST`` of each activity.

The operator's view of the pipeline (harvested / mapped / failed / deleted / indexed over time), built from
the layout alone, so it shows runs from the UI, the daemon and the command line alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields
from datetime import date

from ingest_assets.storage import layout
from ingest_assets.storage.backends import Storage
from ingest_assets.storage.manifest import Manifest


@dataclass(frozen=True)
class DayCounts:
    provider: str
    day: date
    harvested: int  # records in the newest harvest output, deletions included
    harvest_deleted: int
    harvest_failed: int  # records the harvest could not read (the harvest error report)
    mapped: int
    mapping_failed: int
    enriched: int
    indexed: int  # IndexRecords written: documents + index deletions
    index_deletions: int  # of those, deletions passed on from the harvest (indexed - index_deletions = documents)
    absent: int  # index deletions of records a full harvest no longer held (not among index_deletions)

    def as_table_row(self) -> dict[str, str | int]:
        """Field -> value, the day as ISO text (a table cell)."""
        return {f.name: getattr(self, f.name) if f.name != "day" else self.day.isoformat() for f in fields(self)}


def _manifest(storage: Storage, provider: str, activity: str, day: date) -> Manifest | None:
    output = layout.latest_output(storage, provider, activity, day)
    return Manifest.from_bytes(storage.read_bytes(output.manifest)) if output else None


def _summary(manifest: Manifest | None, key: str) -> int:
    return int(manifest.extra.get(f"Summary {key}", 0)) if manifest else 0


def day_counts(storage: Storage, provider: str, day: date) -> DayCounts | None:
    """The counts of ``provider`` on ``day`` (None when the day was never harvested)."""
    harvest = _manifest(storage, provider, "harvest", day)
    if harvest is None:
        return None
    mapping, enrichment, indexing = (_manifest(storage, provider, a, day) for a in ("mapping", "enrichment", "indexing"))
    return DayCounts(
        provider=provider,
        day=day,
        harvested=harvest.record_count,
        harvest_deleted=_summary(harvest, "deleted"),
        harvest_failed=_summary(harvest, "failed"),
        mapped=mapping.record_count if mapping else 0,
        mapping_failed=_summary(mapping, "failed"),
        enriched=enrichment.record_count if enrichment else 0,
        indexed=indexing.record_count if indexing else 0,
        index_deletions=_summary(indexing, "deletions"),
        absent=_summary(indexing, "absent"),
    )


def days_with_data(storage: Storage, provider: str, limit: int) -> list[date]:
    """The newest ``limit`` days ``provider`` has a harvest output for, newest first."""
    return sorted(layout.output_days(storage, provider, "harvest"), reverse=True)[:limit]


def counts_with_data(storage: Storage, providers: Iterable[str], days: int) -> Iterator[DayCounts]:
    """Counts of each provider's newest ``days`` days that have data (whenever they were: a backfill of last
    year shows), newest day first, then by provider; a day with an incomplete harvest only is left out."""
    found = [counts for provider in providers for day in days_with_data(storage, provider, days)
             if (counts := day_counts(storage, provider, day))]
    yield from sorted(found, key=lambda c: (-c.day.toordinal(), c.provider))
