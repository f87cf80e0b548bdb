"""``ingest-assets harvest <provider> [--date D | --from D --to D]``: the record pipeline for a provider's days,
run on the configured Dagster instance (``DAGSTER_HOME``, by default ``$INGEST_HOME/dagster``) and recorded there
like any UI run: a range runs as one run per 31 days, each day its own output and plan, as a UI backfill does.

Prints a line when each run starts and as each stage (harvest, mapping, enrichment, indexing) finishes its days,
then one line per day with its counts, and for a failed run the step that failed and why (a failed check: what it
found, the limit and the registry key that sets it), kept as the provider's last failure (``status``). Each
retry is one line on stderr: a request the HTTP client tries again (the URL, why, the wait), a step Dagster runs
again (why, the wait). ``--verbose`` adds Dagster's event log and the libraries' own warnings on stderr."""

from __future__ import annotations

import sys
import threading
import uuid
from collections import Counter
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
    from ingest_assets.records.mapping import check_registry

    check_registry(registry)  # an unknown profile or a bad rule refuses its entry here, before any harvest
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

    from ingest_assets.definitions import build_definitions
    from ingest_assets.defs.providers import record_providers
    from ingest_assets.defs.records.io_managers import BACKFILL
    from ingest_assets.defs.records.partitions import RANGE_END_TAG, RANGE_START_TAG, partition_key

    job = build_definitions(settings).resolve_job_def("record_pipeline")
    quiet = {} if verbose() else {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
    with open_instance(settings) as instance:
        if provider not in instance.get_dynamic_partitions(record_providers.name):
            instance.add_dynamic_partitions(record_providers.name, [provider])
        failed = 0
        for chunk in chunks(wanted, BACKFILL.max_partitions_per_run):
            # one run per chunk, as the backfill daemon launches a range under the assets' BACKFILL policy
            first, last = (str(partition_key(provider, d)) for d in (chunk[0], chunk[-1]))
            span = {"partition_key": first} if first == last else {"tags": {RANGE_START_TAG: first, RANGE_END_TAG: last}}
            run_id = str(uuid.uuid4())  # as Dagster makes run ids (make_new_run_id is not public)
            days_text = str(chunk[0]) if len(chunk) == 1 else f"{chunk[0]}..{chunk[-1]}"
            print(f"{provider} {days_text}: running (run {run_id})", flush=True)
            with StageProgress(instance, run_id, f"{provider} {days_text}", len(chunk), settings.step_retries) as progress:
                result = job.execute_in_process(instance=instance, raise_on_error=False, run_id=run_id, run_config=quiet,
                                                **span)
            instance.add_run_tags(result.run_id, {"ingest/trigger": "cli"})
            for line in progress.day_lines(provider):
                print(line, flush=True)
            failed += not result.success
            if not result.success:
                for stage, message in failure_causes(result):
                    print(f"{provider} {days_text}: FAILED at {stage}: {message} (run {run_id})", flush=True)
                keep_failure(settings, result)
    return 1 if failed else 0


def keep_failure(settings: Settings, result) -> None:
    """Keep a failed run as its provider's last failure, as the failure sensor would (a check or a gate that
    recorded its own words is kept as it is)."""
    from ingest_assets.defs.operations.failures import run_failure
    from ingest_assets.operations.failures import last_failure, record_failure
    from ingest_assets.storage import open_storage

    failure = run_failure(result.dagster_run, result.get_step_failure_events(), None, settings.ui_url)
    storage = open_storage(settings.storage_url)
    kept = last_failure(storage, failure.provider) if failure.provider else None
    if kept is None or kept.run_id != failure.run_id:
        record_failure(storage, failure)


STAGES = (("original_records", "harvested"), ("mapped_records", "mapped"), ("enriched_records", "enriched"),
          ("indexed_records", "indexed"))


class StageProgress:
    """While a run executes, print one line as each record stage finishes all its days (polling the instance for the
    run's materializations of that stage's asset; a stage that stopped short gets its line when the run ends);
    afterwards, :meth:`day_lines` gives one line per day."""

    def __init__(self, instance, run_id: str, label: str, days: int, retries: int = 0):
        self.instance, self.run_id, self.label, self.days, self.retries = instance, run_id, label, days, retries
        self.found: dict[str, dict[str, dict]] = {}  # asset -> partition -> metadata
        self._retried: Counter[str] = Counter()  # step retries printed, per step
        self._printed: set[str] = set()
        self._cursors: dict[str, str | None] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> StageProgress:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._poll(final=True)

    def _watch(self) -> None:
        while not self._stop.wait(POLL_SECONDS):
            self._poll()

    def _poll(self, final: bool = False) -> None:
        import dagster as dg

        self._print_retries()
        for asset, verb in STAGES:
            found = self.instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset)), limit=1000,
                                                         cursor=self._cursors.get(asset), ascending=True)
            self._cursors[asset] = found.cursor
            mine = [r.event_log_entry.asset_materialization for r in found.records if r.event_log_entry.run_id == self.run_id]
            days = self.found.setdefault(asset, {})
            days.update({m.partition: {k: v.value for k, v in m.metadata.items()} for m in mine})
            if asset in self._printed or not days or (len(days) < self.days and not final):
                continue
            self._printed.add(asset)
            records = sum(int(meta.get("dagster/row_count", 0)) for meta in days.values())
            print(f"{self.label}: {verb} {records} records over {len(days)} day(s)", flush=True)

    def _print_retries(self) -> None:
        """One line on stderr per step Dagster runs again: which, why, the wait."""
        import dagster as dg

        from ingest_assets.defs.operations.failures import error_text

        retried = self.instance.all_logs(self.run_id, of_type=dg.DagsterEventType.STEP_UP_FOR_RETRY)
        for entry in retried[sum(self._retried.values()):]:
            event = entry.dagster_event
            self._retried[event.step_key] += 1
            wait = event.event_specific_data.seconds_to_wait
            print(f"{self.label}: {event.step_key} failed: {error_text(event.event_specific_data.error)}; step retry "
                  f"{self._retried[event.step_key]} of {self.retries} in {wait or 0:g} s", file=sys.stderr, flush=True)

    def day_lines(self, provider: str) -> list[str]:
        """``<provider> <day>: harvested h, mapped m (f failed), indexed i (d documents + x deletions)`` per day."""
        from ingest_assets.defs.records.partitions import partition_parts

        lines = []
        for partition in sorted(self.found.get("original_records", {}), key=lambda k: partition_parts(k)[1]):
            _, day = partition_parts(partition)
            meta = {asset: self.found.get(asset, {}).get(partition, {}) for asset, _ in STAGES}
            parts = [f"harvested {meta['original_records'].get('dagster/row_count', 0)}"]
            if meta["mapped_records"]:
                parts.append(f"mapped {meta['mapped_records'].get('dagster/row_count', 0)} "
                             f"({meta['mapped_records'].get('failed', 0)} failed)")
            if meta["indexed_records"]:
                index = meta["indexed_records"]
                parts.append(f"indexed {index.get('dagster/row_count', 0)} ({index.get('documents', 0)} documents + "
                             f"{index.get('deletions', 0)} deletions)")
            lines.append(f"{provider} {day}: {', '.join(parts)}")
        return lines


def failure_causes(result) -> list[tuple[str, str]]:
    """``(step, why)`` of each failed step of an in-process run (the run's own message if none): a check step's
    failed results in their own words (the day first when the run judged several), else the step's error."""
    import dagster as dg

    from ingest_assets.defs.operations.failures import step_failure_text

    checks: dict[str, list] = {}
    for event in result.all_events:
        if event.event_type == dg.DagsterEventType.ASSET_CHECK_EVALUATION and not event.asset_check_evaluation_data.passed:
            checks.setdefault(event.step_key, []).append(event.asset_check_evaluation_data)
    causes = []
    for event in result.get_step_failure_events():
        failed = checks.get(event.step_key, [])
        days = [e for e in failed if e.partition] or failed
        shown = [f"{e.partition.split('|')[0]}: " * (len(days) > 1) + (e.description or f"{e.check_name} failed")
                 for e in days]
        causes.append((event.step_key, "; ".join(shown) or step_failure_text(event)))
    return causes or [("run", "the run failed before any step (see the run in the UI)")]


def chunks(items: list, size: int) -> list[list]:
    return [items[n:n + size] for n in range(0, len(items), size)]
