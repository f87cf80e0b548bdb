"""The four record assets: original -> mapped -> enriched -> indexed (plus pushing to the search index).

Mapping, enrichment and indexing run on the provider's engine (in-process or Spark, ``record_engine``)."""


import functools
from datetime import date, datetime, timezone

import dagster as dg

from ingest_assets.defs.records.io_managers import (BACKFILL, PartitionStreams, Part, final_unless_retryable, record_metadata,
                                                   retried_step)
from ingest_assets.defs.records.resources import RecordEngineResource
from ingest_assets.defs.records.partitions import day_window
from ingest_assets.defs.resources import RegistryResource, StorageResource
from ingest_assets.defs.s3 import s3_client
from ingest_assets.core.http import HttpClient
from ingest_assets.core.settings import Settings
from ingest_assets.records.harvest import StorageCheckpoint, harvest_records
from ingest_assets.records.engines.steps import RecordActivity
from ingest_assets.storage.activities import RecordSource, RecordStream, source_from_path
from ingest_assets.storage.avro import INDEX_RECORD, MAP_RECORD, ORIGINAL_RECORD

RECORDS = "records"


def retry_policy(settings: Settings) -> dg.RetryPolicy:
    """A failure whose error says a retry can help (IngestError.retryable: timeouts, 5xx, a source that does not
    answer) is retried ``INGEST_STEP_RETRIES`` times (default 2), 20 s and 60 s after each failure by default
    (Dagster's exponential backoff: (2^n - 1) x ``INGEST_STEP_RETRY_DELAY``); final errors raise dg.Failure through
    the step and are not retried. Inside each attempt the HTTP client tries a request 4 times within seconds, so
    the two layers bound a source that refuses connections to about a minute and a half. No jitter: Dagster's
    adds +/- the whole base delay, and one run per provider at a time (dagster.yaml) leaves no herd of retries
    against one source to spread out."""
    return dg.RetryPolicy(max_retries=settings.step_retries, delay=settings.step_retry_delay,
                          backoff=dg.Backoff.EXPONENTIAL)


class SourceConfig(dg.Config):
    """Re-run from files: a plan file or a generator Avro output folder instead of the upstream partition."""

    source: str | None = None


def record_assets(partitions: dg.PartitionsDefinition, retry: dg.RetryPolicy) -> list[dg.AssetsDefinition]:
    """The four assets on ``partitions``: each one activity, written by the record IO manager as its schema;
    a backfill runs up to 31 partitions per run (``BACKFILL``)."""
    return [
        dg.asset(
            partitions_def=partitions,
            io_manager_key="record_io_manager",
            metadata=record_metadata(activity, schema),
            group_name=RECORDS,
            kinds={"avro"},
            retry_policy=retry,
            backfill_policy=BACKFILL,
        )(final_errors(compute))
        for compute, activity, schema in (
            (original_records, "harvest", ORIGINAL_RECORD),
            (mapped_records, "mapping", MAP_RECORD),
            (enriched_records, "enrichment", MAP_RECORD),
            (indexed_records, "indexing", INDEX_RECORD),
        )
    ]


def final_errors(compute):
    """``compute`` failing for good on an error a retry cannot help (others go to the retry policy)."""

    @functools.wraps(compute)
    def run(*args, **kwargs):
        with final_unless_retryable():
            return compute(*args, **kwargs)

    return run


def _sources(config: SourceConfig, storage: StorageResource, upstream: dict[Part, RecordSource], activity: str):
    """The upstream outputs, or the one named by ``config.source`` (a re-run of one partition)."""
    if not config.source:
        return upstream
    if len(upstream) != 1:
        raise dg.Failure(f"config source re-runs one partition; this run covers {len(upstream)}", allow_retries=False)
    [part] = upstream
    return {part: source_from_path(storage.get_client(), config.source, activity)}


def _stage(context: dg.AssetExecutionContext, activity: str, registry: RegistryResource, storage: StorageResource,
           engine: RecordEngineResource, *upstreams: dict[Part, RecordSource], ahead: tuple[str, ...] = ()) -> PartitionStreams:
    """``activity`` of each partition on the provider's engine, reading that partition of each upstream (or
    committing what this run's mapping staged for it)."""
    entries = registry.load()

    def inputs(provider: str, day: date) -> list[RecordSource]:
        return [upstream[provider, day] for upstream in upstreams]

    return PartitionStreams(
        lambda provider, day: engine.stream(RecordActivity(activity, entries[provider]), inputs(provider, day), storage,
                                            ahead, context.run_id),
        inputs, retry=retried_step(context))


LATER = (("enriched_records", "enrichment"), ("indexed_records", "indexing"))
PIPELINE_JOB = "record_pipeline"  # the job of the group's every asset (defs/records/__init__.py)


def _later_in_run(context: dg.AssetExecutionContext) -> tuple[str, ...]:
    """The activities after mapping that this run materializes too, in order (enrichment, then indexing): the
    mapping stages them (``records/engines/ahead.py``). A run names what it materializes by its asset selection,
    else by its steps (an asset's step is named for it), else it runs its whole job: the record pipeline's holds
    every later step, any other job's whole run stages nothing (its steps compute all)."""
    run = context.run
    if run.asset_selection:
        names = {key.to_user_string() for key in run.asset_selection}
    elif run.step_keys_to_execute is not None:
        names = set(run.step_keys_to_execute)
    else:
        names = {name for name, _ in LATER} if run.job_name == PIPELINE_JOB else set()
    later = []
    for name, activity in LATER:
        if name not in names:
            break
        later.append(activity)
    return tuple(later)


def original_records(context: dg.AssetExecutionContext, registry: RegistryResource, storage: StorageResource) -> PartitionStreams:
    """Harvest the provider for the partition's day (OAI-PMH, JSON API or file, per the registry)."""
    entries = registry.load()

    def harvest(provider: str, day: date) -> RecordStream:
        entry = entries[provider]
        started = datetime.now(timezone.utc)
        window = None if entry.require("harvest").full else day_window(day)
        run = harvest_records(
            entry, started=started, window=window, http=HttpClient(), checkpoint=StorageCheckpoint(storage.get_client(), provider),
            s3_client=functools.partial(s3_client, storage.s3),  # a hub's s3:// files: the storage's S3 settings
        )
        return RecordStream(
            run,
            started=started,
            logs=run.logs,
            summary=lambda: {"mode": run.mode, **run.metadata()},
        )

    return PartitionStreams(harvest, retry=retried_step(context))


def mapped_records(
    context: dg.AssetExecutionContext,
    config: SourceConfig,
    registry: RegistryResource,
    storage: StorageResource,
    record_engine: RecordEngineResource,
    original_records: dict[Part, RecordSource],
) -> PartitionStreams:
    """Map original records to DPLA MAP v4 with the provider's mapping; failures go to the report."""
    return _stage(context, "mapping", registry, storage, record_engine,
                  _sources(config, storage, original_records, "harvest"), ahead=_later_in_run(context))


def enriched_records(
    context: dg.AssetExecutionContext,
    config: SourceConfig,
    registry: RegistryResource,
    storage: StorageResource,
    record_engine: RecordEngineResource,
    mapped_records: dict[Part, RecordSource],
) -> PartitionStreams:
    """Normalize dates, languages, types, rights and text of mapped records."""
    return _stage(context, "enrichment", registry, storage, record_engine, _sources(config, storage, mapped_records, "mapping"))


def indexed_records(
    context: dg.AssetExecutionContext,
    config: SourceConfig,
    registry: RegistryResource,
    storage: StorageResource,
    record_engine: RecordEngineResource,
    enriched_records: dict[Part, RecordSource],
    original_records: dict[Part, RecordSource],
) -> PartitionStreams:
    """IndexRecord documents for enriched records, and index deletions for records the harvest deleted.
    Re-run from a plan file or an enrichment output, the harvest is the one that output was derived from."""
    return _stage(context, "indexing", registry, storage, record_engine, _sources(config, storage, enriched_records, "enrichment"),
                  _sources(config, storage, original_records, "harvest"))
