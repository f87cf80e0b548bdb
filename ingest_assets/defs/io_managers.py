"""The IO manager of the four record assets: streams records to Avro in the Ingestion 3 layout.

An asset returns a :class:`RecordStream` (an iterator plus inputs and reports); this writes it in
bounded memory as one atomic activity output with ``_MANIFEST``, ``_LOGS``, ``-prov.json`` and a plan
journal entry. Downstream assets receive a lazy :class:`RecordSource` over the newest complete output of
the same partition.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timezone

import dagster as dg

from ingest_assets.defs.records.partitions import partition_parts
from ingest_assets.defs.resources import StorageResource
from ingest_assets.errors import IngestError
from ingest_assets.storage.activities import PlanRef, RecordSource, RecordStream, latest_source, write_activity
from ingest_assets.storage.layout import parse_timestamp, timestamp

ACTIVITY = "ingest/activity"
SCHEMA = "ingest/schema"


@contextmanager
def final_unless_retryable() -> Iterator[None]:
    """An error that says a retry cannot help fails the step for good; others go to the retry policy."""
    try:
        yield
    except IngestError as exc:
        if exc.retryable:
            raise
        raise dg.Failure(str(exc), allow_retries=False) from exc


def record_metadata(activity: str, schema: str) -> dict[str, str]:
    """Asset definition metadata the IO manager reads: which activity and Avro schema an asset is."""
    return {ACTIVITY: activity, SCHEMA: schema}


class RecordIOManager(dg.ConfigurableIOManager):
    storage: StorageResource

    def handle_output(self, context: dg.OutputContext, obj: RecordStream) -> None:
        if not isinstance(obj, RecordStream):
            raise TypeError(f"{context.asset_key.to_user_string()} must return a RecordStream, got {type(obj)}")
        provider, day = partition_parts(context.asset_partition_key)
        meta = context.definition_metadata
        plan = _run_plan(context, provider) or PlanRef(obj.started)
        with final_unless_retryable():
            result = write_activity(
                self.storage.storage,
                obj,
                provider=provider,
                activity=meta[ACTIVITY],
                day=day,
                started=obj.started,
                schema=meta[SCHEMA],
                partition=str(context.asset_partition_key),
                plan=plan,
            )
        _remember_plan(context, provider, plan)
        context.add_output_metadata(
            {
                "dagster/uri": dg.MetadataValue.path(result.uri),
                "dagster/row_count": result.records,
                "bytes": result.bytes,
                "parts": len(result.parts),
                "schema": result.output.schema,
                "inputs": dg.MetadataValue.json([s.uri for s in obj.inputs]),
                "plan": result.plan or "",
                **{k: v for k, v in result.summary.items()},
            }
        )

    def load_input(self, context: dg.InputContext) -> RecordSource:
        provider, day = partition_parts(context.asset_partition_key)
        activity = context.upstream_output.definition_metadata[ACTIVITY]
        source = latest_source(self.storage.storage, provider, activity, day)
        if source is None:
            with final_unless_retryable():
                raise IngestError(
                    f"no complete {activity} output for {day.isoformat()}: materialize "
                    f"{context.upstream_output.asset_key.to_user_string()} for this partition first",
                    provider=provider,
                )
        return source


PLAN_TAG = "ingest/plan/{provider}"


def _run(context: dg.OutputContext):
    try:
        return context.step_context.instance, context.run_id
    except Exception:  # noqa: BLE001 - build_output_context without a run
        return None, None


def _run_plan(context: dg.OutputContext, provider: str) -> PlanRef | None:
    """The run's plan for this provider: the one an earlier step chose (run tag), else a new one
    starting at the run's creation time."""
    instance, run_id = _run(context)
    record = instance.get_run_record_by_id(run_id) if instance else None
    if record is None:
        return None
    chosen = record.dagster_run.tags.get(PLAN_TAG.format(provider=provider))
    if chosen:
        return PlanRef(parse_timestamp(chosen), new=False)
    return PlanRef(record.create_timestamp.astimezone(timezone.utc).replace(microsecond=0))


def _remember_plan(context: dg.OutputContext, provider: str, plan: PlanRef) -> None:
    instance, run_id = _run(context)
    if instance is not None:
        instance.add_run_tags(run_id, {PLAN_TAG.format(provider=provider): timestamp(plan.started)})
