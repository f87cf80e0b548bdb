"""``ingest-assets harvest <provider> [--date D | --from D --to D]``: the record pipeline for a provider's days,
run on the configured Dagster instance (``DAGSTER_HOME``) and recorded there like any UI run: a range runs
as one run per 31 days, each day its own output and plan, as a UI backfill does."""

from __future__ import annotations

import argparse
import sys
from datetime import date, datetime, timedelta, timezone

from ingest_assets.core.errors import ConfigError
from ingest_assets.core.registry import load_registry
from ingest_assets.core.settings import Settings

MAX_DAYS = 366  # a longer range is a backfill for the daemon (UI or `dagster job backfill`)


def days(start: date, end: date) -> list[date]:
    if end < start:
        raise ValueError(f"--to {end} is before --from {start}")
    count = (end - start).days + 1
    if count > MAX_DAYS:
        raise ValueError(f"{count} days is more than {MAX_DAYS}: launch a backfill from the UI instead")
    return [start + timedelta(days=n) for n in range(count)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ingest-assets harvest", description=__doc__)
    parser.add_argument("provider")
    when = parser.add_mutually_exclusive_group()
    when.add_argument("--date", type=date.fromisoformat, help="one day (default: yesterday, UTC)")
    when.add_argument("--from", dest="start", type=date.fromisoformat, help="first day of a range (with --to)")
    parser.add_argument("--to", dest="end", type=date.fromisoformat, help="last day of the range (default: --from)")
    args = parser.parse_args(argv)
    if args.end and not args.start:
        parser.error("--to needs --from")
    yesterday = datetime.now(timezone.utc).date() - timedelta(days=1)
    try:
        wanted = days(args.start, args.end or args.start) if args.start else [args.date or yesterday]
    except ValueError as exc:
        parser.error(str(exc))

    settings = Settings.current()
    try:
        registry = load_registry(settings.registry_path)
        registry[args.provider]
    except ConfigError as exc:
        print(f"ingest-assets harvest: {exc}", file=sys.stderr)
        return 2
    if args.provider not in registry.providers_of("records"):
        print(f"ingest-assets harvest: provider {args.provider!r} has no 'harvest:' block in {registry.source}",
              file=sys.stderr)
        return 2
    early = [d for d in wanted if d < settings.partition_start]
    if early:
        print(f"ingest-assets harvest: {early[0]} is before the first partition {settings.partition_start} "
              "(INGEST_PARTITION_START)", file=sys.stderr)
        return 2
    import dagster as dg  # only once there is something to run (it takes seconds to import)

    from ingest_assets.definitions import build_definitions
    from ingest_assets.defs.records.io_managers import BACKFILL
    from ingest_assets.defs.providers import record_providers
    from ingest_assets.defs.records.partitions import RANGE_END_TAG, RANGE_START_TAG, partition_key

    job = build_definitions(settings).resolve_job_def("record_pipeline")
    with dg.DagsterInstance.get() as instance:
        if args.provider not in instance.get_dynamic_partitions(record_providers.name):
            instance.add_dynamic_partitions(record_providers.name, [args.provider])
        failed = 0
        for chunk in chunks(wanted, BACKFILL.max_partitions_per_run):
            # one run per chunk, as the backfill daemon launches a range under the assets' BACKFILL policy
            first, last = (str(partition_key(args.provider, d)) for d in (chunk[0], chunk[-1]))
            span = {"partition_key": first} if first == last else {"tags": {RANGE_START_TAG: first, RANGE_END_TAG: last}}
            result = job.execute_in_process(instance=instance, raise_on_error=False, **span)
            instance.add_run_tags(result.run_id, {"ingest/trigger": "cli"})
            counts: dict[str, list[str]] = {}
            for event in result.get_asset_materialization_events():
                m = event.materialization
                if "dagster/row_count" in m.metadata:
                    counts.setdefault(str(m.partition), []).append(
                        f"{m.asset_key.to_user_string()} {m.metadata['dagster/row_count'].value}")
            failed += not result.success
            for day in chunk:
                summary = ", ".join(counts.get(str(partition_key(args.provider, day)), []))
                print(f"{args.provider} {day}: {'success' if result.success else 'FAILED'} (run {result.run_id}) {summary}")
    return 1 if failed else 0


def chunks(items: list, size: int) -> list[list]:
    return [items[n:n + size] for n in range(0, len(items), size)]
