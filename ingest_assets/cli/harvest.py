"""``ingest-assets harvest <provider> [--date D | --from D --to D]``: the record pipeline for a provider's days,
run on the configured Dagster instance (``DAGSTER_HOME``, by default ``$INGEST_HOME/dagster``) and recorded there
like any UI run: a range runs as one run per 31 days, each day its own output and plan, as a UI backfill does.

Prints a line when each run starts, one per day as the day is indexed, and per failed run the step that
failed and why; ``--verbose`` prints Dagster's event log instead."""

from __future__ import annotations

import threading
from datetime import date, datetime, timedelta, timezone

from ingest_assets.cli.instance import open_instance
from ingest_assets.cli.main import Parser, iso_day, verbose
from ingest_assets.core.errors import UsageError
from ingest_assets.core.registry import load_registry
from ingest_assets.core.settings import Settings

MAX_DAYS = 366  # a longer range is a backfill for the daemon (UI or `dagster job backfill`)
POLL_SECONDS = 1.0


def days(start: date, end: date) -> list[date]:
    if end < start:
        raise UsageError(f"--to {end} is before --from {start}", hint="give the first day with --from, the last with --to")
    count = (end - start).days + 1
    if count > MAX_DAYS:
        raise UsageError(f"{count} days is more than {MAX_DAYS}", hint="launch a backfill from the UI instead")
    return [start + timedelta(days=n) for n in range(count)]


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="ingest-assets harvest", description=__doc__)
    parser.add_argument("provider")
    when = parser.add_mutually_exclusive_group()
    when.add_argument("--date", type=iso_day, help="one day (default: yesterday, UTC)")
    when.add_argument("--from", dest="start", type=iso_day, help="first day of a range (with --to)")
    parser.add_argument("--to", dest="end", type=iso_day, help="last day of the range (default: --from)")
    args = parser.parse_args(argv)
    if args.end and not args.start:
        parser.error("--to needs --from")
    yesterday = datetime.now(timezone.utc).date() - timedelta(days=1)
    wanted = days(args.start, args.end or args.start) if args.start else [args.date or yesterday]

    settings = Settings.current()
    registry = load_registry(settings.registry_path)
    providers = registry.providers_of("records")
    if args.provider not in registry and args.provider not in registry.problems:
        raise UsageError(f"provider {args.provider!r} is not in the registry {registry.source}",
                         hint=f"record providers: {', '.join(providers) or 'none'}")
    entry = registry[args.provider]  # an entry the registry refused raises its own error here
    if args.provider not in providers:
        raise UsageError(f"provider {args.provider!r} has no 'harvest:' block in {registry.source}",
                         hint=f"record providers: {', '.join(providers) or 'none'}")
    if wanted[0] < settings.partition_start:
        raise UsageError(f"{wanted[0]} is before the first partition {settings.partition_start}",
                         hint="INGEST_PARTITION_START sets the first day")
    if wanted[-1] > yesterday:
        raise UsageError(f"{wanted[-1]} has not ended yet (UTC): the newest day partition is {yesterday}",
                         hint="a day can be harvested once it is over")
    return _run(settings, entry.name, wanted)


def _run(settings: Settings, provider: str, wanted: list[date]) -> int:
    from dagster._core.storage.tags import ASSET_PARTITION_RANGE_END_TAG, ASSET_PARTITION_RANGE_START_TAG
    from dagster._core.utils import make_new_run_id

    from ingest_assets.definitions import build_definitions
    from ingest_assets.defs.providers import record_providers
    from ingest_assets.defs.records.io_managers import BACKFILL
    from ingest_assets.defs.records.partitions import partition_key

    job = build_definitions(settings).resolve_job_def("record_pipeline")
    quiet = {} if verbose() else {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
    with open_instance(settings) as instance:
        if provider not in instance.get_dynamic_partitions(record_providers.name):
            instance.add_dynamic_partitions(record_providers.name, [provider])
        failed = 0
        for chunk in chunks(wanted, BACKFILL.max_partitions_per_run):
            # one run per chunk, as the backfill daemon launches a range under the assets' BACKFILL policy
            first, last = (str(partition_key(provider, d)) for d in (chunk[0], chunk[-1]))
            span = {"partition_key": first} if first == last else {"tags": {
                ASSET_PARTITION_RANGE_START_TAG: first, ASSET_PARTITION_RANGE_END_TAG: last}}
            run_id = make_new_run_id()
            days_text = str(chunk[0]) if len(chunk) == 1 else f"{chunk[0]}..{chunk[-1]}"
            print(f"{provider} {days_text}: running (run {run_id})", flush=True)
            with DayProgress(instance, run_id, provider):
                result = job.execute_in_process(instance=instance, raise_on_error=False, run_id=run_id, run_config=quiet,
                                                **span)
            instance.add_run_tags(result.run_id, {"ingest/trigger": "cli"})
            failed += not result.success
            if not result.success:
                for stage, message in failure_causes(result):
                    print(f"{provider} {days_text}: FAILED at {stage}: {message} (run {run_id})", flush=True)
    return 1 if failed else 0


class DayProgress:
    """While a run executes, print a line for each day of it whose index records are written (polling the
    instance's materializations of ``indexed_records``, the last record stage)."""

    def __init__(self, instance, run_id: str, provider: str):
        self.instance, self.run_id, self.provider = instance, run_id, provider
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._cursor: str | None = None

    def __enter__(self) -> DayProgress:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._report()  # what the last interval brought

    def _watch(self) -> None:
        while not self._stop.wait(POLL_SECONDS):
            self._report()

    def _report(self) -> None:
        import dagster as dg

        from ingest_assets.defs.records.partitions import partition_parts

        found = self.instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey("indexed_records")), limit=100, cursor=self._cursor, ascending=True)
        self._cursor = found.cursor
        for record in found.records:
            event = record.event_log_entry
            if event.run_id != self.run_id:
                continue
            materialization = event.asset_materialization
            _, day = partition_parts(materialization.partition)
            counts = {k: v.value for k, v in materialization.metadata.items()}
            summary = ", ".join(f"{k} {counts[k]}" for k in ("documents", "deletions") if k in counts)
            print(f"{self.provider} {day}: indexed {counts.get('dagster/row_count', '?')} records"
                  f"{f' ({summary})' if summary else ''}", flush=True)


def failure_causes(result) -> list[tuple[str, str]]:
    """``(step, first line of the error)`` of each failed step of an in-process run (the run's own message if none)."""
    causes = []
    for event in result.get_step_failure_events():
        error = event.step_failure_data.error
        user = event.step_failure_data.user_failure_data
        text = (user.description if user and user.description else None) or (error.message if error else event.message)
        causes.append((event.step_key, " ".join((text or "").strip().split("\n")[0].split())))
    return causes or [("run", "the run failed before any step (see the run in the UI)")]


def chunks(items: list, size: int) -> list[list]:
    return [items[n:n + size] for n in range(0, len(items), size)]
