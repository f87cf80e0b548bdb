"""Record partitions: day x record provider (registry entries with a ``harvest:`` block).

Multi-partition keys join dimensions in alphabetical order: ``2026-01-02|demo`` (date|provider). The first
day is ``Settings.partition_start``, so the partitions are built with the definitions.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta, timezone

import dagster as dg

from ingest_assets.defs.providers import record_providers


def record_partitions(start: date) -> dg.MultiPartitionsDefinition:
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
