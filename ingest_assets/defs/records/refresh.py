"""Automatic refresh: each record provider's newest complete day is harvested on the provider's schedule.

Registry (per provider, optional)::

    schedule: {cron: "0 2 * * *", timezone: Europe/Berlin}   # default: daily at 02:00 UTC
    schedule: false                                          # never by itself (UI, backfills, CLI only)

At each cron tick the sensor requests the run of the UTC day that ended before the tick; the run key
``<provider>|<day>`` makes a day run once, whatever the cron says. A provider added to the registry is
refreshed at its first evaluation.
"""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import dagster as dg

from ingest_assets.defs.providers import record_providers
from ingest_assets.defs.records.partitions import partition_key
from ingest_assets.defs.resources import RegistryResource
from ingest_assets.core.errors import ConfigError
from ingest_assets.core.registry import ProviderEntry


EPOCH = datetime(2000, 1, 1, tzinfo=timezone.utc)


def latest_tick(cron: str, tz: str, now: datetime, *, provider: str | None = None) -> datetime:
    """The newest tick of ``cron`` in ``tz`` at or before ``now``, by Dagster's own cron semantics (through the
    public time-window partitions: each window ends at a tick, the last complete one at the newest)."""
    try:
        ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(f"schedule timezone {tz!r}: {exc}", provider=provider) from exc
    try:
        ticks = dg.TimeWindowPartitionsDefinition(cron_schedule=cron, timezone=tz, start=EPOCH, fmt="%Y-%m-%d-%H:%M")
    except Exception as exc:  # noqa: BLE001 - Dagster's check errors for a cron it cannot read
        raise ConfigError(f"schedule cron {cron!r} is not a valid cron string", provider=provider) from exc
    with dg.partition_loading_context(effective_dt=now):
        return ticks.time_window_for_partition_key(ticks.get_last_partition_key()).end


def refresh_day(entry: ProviderEntry, now: datetime) -> date | None:
    """The day partition the provider's schedule asks for at ``now`` (None: ``schedule: false``): the UTC day
    that ended before the newest tick."""
    schedule = entry.settings.schedule
    if schedule is False:
        return None
    tick = latest_tick(schedule.cron, schedule.timezone, now, provider=entry.name)
    return (tick.astimezone(timezone.utc) - timedelta(days=1)).date()


def refresh_sensor(job: str, first_day: date) -> dg.SensorDefinition:
    @dg.sensor(name="record_refresh_sensor", job_name=job, minimum_interval_seconds=60,
               default_status=dg.DefaultSensorStatus.RUNNING)
    def record_refresh_sensor(context: dg.SensorEvaluationContext, registry: RegistryResource):
        """Request each record provider's newest day on its schedule (one run per provider and day)."""
        loaded = registry.load()  # refused entries are not among its providers; no registry at all fails the tick
        entries = [loaded[name] for name in loaded.providers_of("records")]
        now = datetime.now(timezone.utc)
        requested = json.loads(context.cursor) if context.cursor else {}  # provider -> newest day requested
        requests, problems = [], []
        for entry in entries:
            try:
                day = refresh_day(entry, now)
            except ConfigError as exc:
                problems.append(str(exc))
                continue
            if day is None or day < first_day or requested.get(entry.name, "") >= day.isoformat():
                continue
            requested[entry.name] = day.isoformat()
            requests.append(dg.RunRequest(run_key=f"{entry.name}|{day.isoformat()}",
                                          partition_key=str(partition_key(entry.name, day)),
                                          tags={"ingest/trigger": "refresh"}))
        for problem in problems:
            context.log.warning(problem)
        known = set(context.instance.get_dynamic_partitions(record_providers.name))
        missing = sorted({e.name for e in entries} - known)
        return dg.SensorResult(
            run_requests=requests,
            cursor=json.dumps(requested, sort_keys=True),
            dynamic_partitions_requests=[record_providers.build_add_request(missing)] if missing else [],
            skip_reason=None if requests else "; ".join(problems) or "no provider due",
        )

    return record_refresh_sensor
