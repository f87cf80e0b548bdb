"""``failure_sensor``: each failed run (from the UI, the daemon or ``ingest-assets harvest``) is recorded as its
provider's last failure and announced on the configured channels (e-mail, webhook)."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import dagster as dg

from ingest_assets.defs.records.partitions import RANGE_END_TAG, RANGE_START_TAG, truncated_range
from ingest_assets.defs.resources import StorageResource
from ingest_assets.operations.failures import Failure, last_failure, record_failure
from ingest_assets.operations.notify import Notifier, notify

CHECK_FAILED = "DagsterAssetCheckFailedError"  # the error of a step whose blocking check failed


def partition_scope(tags: dict[str, str]) -> tuple[str | None, tuple[date, ...]]:
    """``(provider, days)`` of a run from its partition tags: ``2026-01-15|demo`` (a record day), a range of those,
    or a provider partition (``riverlod``); ``(None, ())`` for a run without partition."""
    start = tags.get(RANGE_START_TAG) or tags.get("dagster/partition")
    end = tags.get(RANGE_END_TAG) or start
    if not start:
        return None, ()
    if "|" not in start:
        return start, ()
    (first, provider), (last, _) = start.split("|", 1), end.split("|", 1)
    first_day, last_day = date.fromisoformat(first), date.fromisoformat(last)
    return provider, tuple(first_day + timedelta(days=n) for n in range((last_day - first_day).days + 1))


# Dagster's errors around the one a step raised (a retry policy's, an IO manager's): the cause inside says why
WRAPPERS = ("RetryRequested", "RetryRequestedFromPolicy", "DagsterExecutionStepExecutionError", "DagsterExecutionHandleOutputError",
            "DagsterExecutionLoadInputError", "DagsterMaxRetriesExceededError")


def step_failure_text(event: dg.DagsterEvent) -> str:
    """Why a step failed, on one line: a ``dg.Failure``'s description, else :func:`error_text` of its error."""
    data = event.step_failure_data
    if data.user_failure_data and data.user_failure_data.description:
        return " ".join(data.user_failure_data.description.split())
    return error_text(data.error) if data.error else " ".join((event.message or "").split())


def error_text(error) -> str:
    """A step's error (a ``SerializableErrorInfo``) on one line: the error inside Dagster's wrappers (a step that
    used up its retries: the error of its last attempt, not "Exceeded max_retries"), without its module and class."""
    while error.cause is not None and error.cls_name in WRAPPERS:
        error = error.cause
    text = error.message.strip()
    head, sep, rest = text.partition(": ")
    if sep and head.rsplit(".", 1)[-1] == error.cls_name:
        text = rest
    return " ".join(text.split())


def run_failure(run: dg.DagsterRun, steps: list[dg.DagsterEvent], run_message: str | None, ui_url: str) -> Failure:
    """The failure of ``run`` as people are told about it, from its failed steps (the first one's stage)."""
    provider, days = partition_scope(dict(run.tags))
    if steps:
        error = steps[0].step_failure_data.error
        kind = "check" if error and error.cls_name == CHECK_FAILED else "run"
        message, stage = step_failure_text(steps[0]), steps[0].step_key or "run"
    else:
        kind, message, stage = "run", run_message or "the run failed", "run"
    return Failure(kind, run.job_name, provider, days, stage, " ".join(message.split()), run.run_id,
                   f"{ui_url}/runs/{run.run_id}", datetime.now(timezone.utc))


def failure_of(context: dg.RunFailureSensorContext, ui_url: str) -> Failure:
    return run_failure(context.dagster_run, context.get_step_failure_events(), context.failure_event.message, ui_url)


def failure_sensor(channels: list[Notifier], ui_url: str) -> dg.SensorDefinition:
    @dg.run_failure_sensor(name="failure_sensor", monitor_all_code_locations=True, minimum_interval_seconds=30,
                           default_status=dg.DefaultSensorStatus.RUNNING,
                           description="Records each failed run as its provider's last failure; notifies the configured channels")
    def record_and_notify(context: dg.RunFailureSensorContext, storage: StorageResource):
        if truncated_range(context.dagster_run.tags):
            return  # a job page's range run, refused and run again whole by range_relaunch_sensor: nobody's failure
        failure = failure_of(context, ui_url)
        kept = last_failure(storage.get_client(), failure.provider) if failure.provider else None
        if kept is not None and kept.run_id == failure.run_id:
            failure = kept  # the run recorded its failure itself, with more to say (a gate's evidence and remedy)
        record_failure(storage.get_client(), failure)
        for problem in notify(failure, channels):
            context.log.warning(f"notice not sent: {problem}")

    return record_and_notify
