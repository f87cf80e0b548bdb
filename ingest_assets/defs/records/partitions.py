"""Record partitions: day x record provider (registry entries with a ``harvest:`` block).

Multi-partition keys join dimensions in alphabetical order: ``2026-01-02|demo`` (date|provider). The first
day is ``Settings.partition_start``, so the partitions are built with the definitions.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta, timezone
from functools import cache

import dagster as dg

from ingest_assets.defs.providers import record_providers

# Run tags Dagster sets on a backfill's range run and on a partition's run. Dagster documents them but exports no
# constant, and no public API launches an in-process run over a range (execute_in_process takes one partition
# key or tags): the one place their names are spelt (a test holds them against the pinned Dagster's own).
RANGE_START_TAG = "dagster/asset_partition_range_start"
RANGE_END_TAG = "dagster/asset_partition_range_end"
PARTITION_TAG_PREFIX = "dagster/partition/"


def truncated_range(tags) -> tuple[str, str] | None:
    """``(first, last)`` partition keys of a run that Dagster 1.13 would execute as its first partition only: a job
    backfill launched from a job's page tags each range run with the range and also with its first day's
    partition (``dagster/partition/<dimension>``), and those win; None for any other run (an asset backfill's,
    ``ingest-assets harvest``'s or a single partition's)."""
    start, end = tags.get(RANGE_START_TAG), tags.get(RANGE_END_TAG)
    if start and start != end and any(key.startswith(PARTITION_TAG_PREFIX) for key in tags):
        return start, end
    return None


@cache
def record_partitions(start: date) -> dg.MultiPartitionsDefinition:
    """Day x record provider from ``start`` (one object per start: every capability's assets share it)."""
    return dg.MultiPartitionsDefinition(
        {"date": dg.DailyPartitionsDefinition(start_date=start.isoformat(), timezone="UTC"), "provider": record_providers}
    )


def partition_key(provider: str, day: date) -> dg.MultiPartitionKey:
    return dg.MultiPartitionKey({"date": day.isoformat(), "provider": provider})


def partition_parts(key: str | dg.MultiPartitionKey) -> tuple[str, date]:
    """``(provider, day)`` of a record partition key."""
    dims = key.keys_by_dimension if isinstance(key, dg.MultiPartitionKey) else dict(
        zip(("date", "provider"), str(key).split("|"), strict=True)
    )
    return dims["provider"], date.fromisoformat(dims["date"])


def day_window(day: date) -> tuple[datetime, datetime]:
    """The UTC interval a date partition harvests: ``[day 00:00, next day 00:00)``."""
    start = datetime.combine(day, time(0), tzinfo=timezone.utc)
    return start, start + timedelta(days=1)
