"""Record partitions: provider (dynamic, fed from the registry) x day.

Multi-partition keys join dimensions in alphabetical order: ``2026-01-02|demo`` (date|provider).
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta, timezone

import dagster as dg

from ingest_assets.settings import Settings

provider_partitions = dg.DynamicPartitionsDefinition(name="providers")


def date_partitions(start: date) -> dg.DailyPartitionsDefinition:
    return dg.DailyPartitionsDefinition(start_date=start.isoformat(), timezone="UTC")


record_partitions = dg.MultiPartitionsDefinition(
    {"date": date_partitions(Settings.from_env().partition_start), "provider": provider_partitions}
)


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
