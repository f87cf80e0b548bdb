"""The IO manager of the four record assets: streams records to Avro in the Ingestion 3 layout.

A run covers one partition (a refresh, a UI materialization) or a range of them (a backfill: one provider's
days, or one day's providers). An asset returns :class:`PartitionStreams`; for each partition of the run in
turn this makes its :class:`RecordStream` and writes it in bounded memory as one atomic activity output with
``_MANIFEST``, ``_LOGS``, ``-prov.json`` and a plan journal entry (one plan per provider and day, as a
single-day run would). Downstream assets receive ``{(provider, day): RecordSource}`` over the newest complete
output of each partition.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, timezone

import dagster as dg

from ingest_assets.defs.records.partitions import partition_parts, truncated_range
from ingest_assets.defs.resources import StorageResource
from ingest_assets.core.errors import IngestError
from ingest_assets.storage.activities import PlanRef, RecordSource, RecordStream, latest_source, planned_output, write_activity
from ingest_assets.storage.layout import parse_timestamp, timestamp

ACTIVITY = "ingest/activity"
SCHEMA = "ingest/schema"
# a backfill run covers up to a month of one provider (or one day of up to 31 providers): one code-location
# start and one run record instead of 31, each partition still its own output, plan and check result
BACKFILL = dg.BackfillPolicy.multi_run(max_partitions_per_run=31)

Part = tuple[str, date]  # (provider, day) of a record partition


@dataclass(frozen=True)
class PartitionStreams:
    """What a record asset returns: ``make(provider, day)`` gives one partition's RecordStream. The IO manager
    calls it for each partition of the run, oldest day first, so each activity starts when it is written.

    ``inputs(provider, day)`` are the sources that stream would read, and ``retry`` says the step ran before and did
    not finish (:func:`retried_step`): a partition whose output that earlier attempt committed in the same plan,
    from the same inputs, is committed as it is (:func:`~ingest_assets.storage.activities.planned_output`), not
    made a second time."""

    make: Callable[[str, date], RecordStream]
    inputs: Callable[[str, date], Sequence[RecordSource]] = lambda provider, day: ()
    retry: bool = False


def retried_step(context: dg.AssetExecutionContext) -> bool:
    """The step ran before and did not finish: an earlier attempt in this run (its retry policy), or in the run this
    one re-executes from its failure (the instance's run retries after a worker died, the UI's "from failure")."""
    return context.retry_number > 0 or context.run.is_resume_retry


def refuse_truncated_range(context: dg.OutputContext | dg.InputContext) -> None:
    """Stop a range run that Dagster would execute as its first partition only (:func:`truncated_range`: a job
    backfill from a job's page) before it writes that one day as if it were the range; ``range_relaunch_sensor``
    then runs the whole range as one run, as an asset backfill would."""
    try:
        tags = context.step_context.dagster_run.tags
    except Exception:  # noqa: BLE001 - a context built outside a run
        return
    found = truncated_range(tags)
    if found:
        raise dg.Failure(
            f"this run is tagged with the range {found[0]}...{found[1]} and with the partition of its first day only "
            "(a backfill launched from a job's page: Dagster 1.13 would run that one day and report the range done). "
            "Not run: range_relaunch_sensor runs the whole range as one run within a minute (a backfill from the "
            "'records' asset group runs it so at once).",
            allow_retries=False,
        )


def run_parts(keys) -> list[tuple[str, Part]]:
    """``(key, (provider, day))`` of each partition key, oldest day first (the order days must be applied)."""
    parts = [(str(key), partition_parts(key)) for key in keys]
    return sorted(parts, key=lambda item: (item[1][1], item[1][0]))


# errors of the code itself: the same input fails the same way on every attempt
DEFECTS = (TypeError, AttributeError, NameError, AssertionError, NotImplementedError)


@contextmanager
def final_unless_retryable() -> Iterator[None]:
    """An error that says a retry cannot help (or a defect of the code) fails the step for good; others (the
    project's retryable errors, and errors of other libraries, such as a dropped connection) go to the retry
    policy."""
    try:
        yield
    except IngestError as exc:
        if exc.retryable:
            raise
        raise dg.Failure(str(exc), allow_retries=False) from exc
    except DEFECTS as exc:
        raise dg.Failure(f"{type(exc).__name__}: {exc} (a defect: retrying cannot help)", allow_retries=False) from exc


def record_metadata(activity: str, schema: str) -> dict[str, str]:
    """Asset definition metadata the IO manager reads: which activity and Avro schema an asset is."""
    return {ACTIVITY: activity, SCHEMA: schema}


class RecordIOManager(dg.ConfigurableIOManager):
    storage: StorageResource

    def handle_output(self, context: dg.OutputContext, obj: PartitionStreams) -> None:
        if not isinstance(obj, PartitionStreams):
            raise TypeError(f"{context.asset_key.to_user_string()} must return PartitionStreams, got {type(obj)}")
        refuse_truncated_range(context)
        meta = context.definition_metadata
        storage = self.storage.get_client()
        for key, (provider, day) in run_parts(context.asset_partition_keys):
            with final_unless_retryable():
                inputs = obj.inputs(provider, day)
                plan = _run_plan(context, provider, day)
                result = planned_output(storage, provider, meta[ACTIVITY], plan, inputs) if obj.retry and plan else None
                if result is None:
                    stream = obj.make(provider, day)
                    plan = plan or PlanRef(stream.started)
                    result = write_activity(storage, stream, provider=provider, activity=meta[ACTIVITY], day=day,
                                            started=stream.started, schema=meta[SCHEMA], partition=key, plan=plan)
                    inputs = stream.inputs
                else:
                    context.log.info(f"{provider} {day.isoformat()}: the {meta[ACTIVITY]} output {result.uri}, committed "
                                     "by this step's earlier attempt, is this attempt's output (not made again)")
            _remember_plan(context, provider, day, plan)
            _partition_metadata(context, key, {
                "dagster/uri": dg.MetadataValue.path(result.uri),
                "dagster/row_count": result.records,
                **({"bytes": result.bytes} if result.bytes is not None else {}),
                "parts": len(result.parts),
                "schema": result.output.schema,
                "inputs": dg.MetadataValue.json([s.uri for s in inputs]),
                "plan": result.plan or "",
                **result.summary,
            })

    def load_input(self, context: dg.InputContext) -> dict[Part, RecordSource]:
        refuse_truncated_range(context)
        activity = context.upstream_output.definition_metadata[ACTIVITY]
        sources = {}
        for _, (provider, day) in run_parts(context.asset_partition_keys):
            source = latest_source(self.storage.get_client(), provider, activity, day)
            if source is None:
                with final_unless_retryable():
                    raise IngestError(
                        f"no complete {activity} output for {day.isoformat()}: materialize "
                        f"{context.upstream_output.asset_key.to_user_string()} for this partition first",
                        provider=provider,
                    )
            sources[provider, day] = source
        return sources


def _partition_metadata(context: dg.OutputContext, key: str, metadata: dict) -> None:
    """Metadata of one partition's materialization (a range run materializes each partition separately)."""
    try:
        step = context.step_context
    except Exception:  # noqa: BLE001 - build_output_context without a run
        context.add_output_metadata(metadata)
        return
    step.add_asset_metadata(metadata, asset_key=context.asset_key, partition_key=key)


PLAN_TAG = "ingest/plan/{provider}/{day}"


def _run(context: dg.OutputContext):
    try:
        return context.step_context.instance, context.run_id
    except Exception:  # noqa: BLE001 - build_output_context without a run
        return None, None


def _run_plan(context: dg.OutputContext, provider: str, day: date) -> PlanRef | None:
    """The run's plan for this provider and day: the one an earlier step chose (run tag), else a new one
    starting at the run's creation time (the next free second when that plan folder is taken)."""
    instance, run_id = _run(context)
    record = instance.get_run_record_by_id(run_id) if instance else None
    if record is None:
        return None
    chosen = record.dagster_run.tags.get(PLAN_TAG.format(provider=provider, day=day.isoformat()))
    if chosen:
        return PlanRef(parse_timestamp(chosen), new=False)
    return PlanRef(record.create_timestamp.astimezone(timezone.utc).replace(microsecond=0))


def _remember_plan(context: dg.OutputContext, provider: str, day: date, plan: PlanRef) -> None:
    instance, run_id = _run(context)
    if instance is not None:
        instance.add_run_tags(run_id, {PLAN_TAG.format(provider=provider, day=day.isoformat()): timestamp(plan.started)})
