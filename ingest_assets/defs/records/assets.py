"""The four record assets: original -> mapped -> enriched -> indexed (plus pushing to the search index).

Mapping, enrichment and indexing run on the provider's engine (in-process or Spark, ``record_engine``)."""


import functools
from datetime import datetime, timezone

import dagster as dg

from ingest_assets.defs.io_managers import final_unless_retryable, record_metadata
from ingest_assets.defs.records.partitions import day_window, partition_parts
from ingest_assets.defs.resources import RegistryResource, StorageResource
from ingest_assets.http import HttpClient
from ingest_assets.defs.records.engine import RecordEngineResource
from ingest_assets.records.harvest import StorageCheckpoint, harvest_records
from ingest_assets.records.steps import RecordActivity
from ingest_assets.storage.activities import RecordSource, RecordStream, source_from_path
from ingest_assets.storage.avro import INDEX_RECORD, MAP_RECORD, ORIGINAL_RECORD

RECORDS = "records"
# a failure whose error says a retry can help (IngestError.retryable: timeouts, 5xx) is retried with backoff;
# final errors raise dg.Failure through the step and are not retried
RETRY = dg.RetryPolicy(max_retries=3, delay=30, backoff=dg.Backoff.EXPONENTIAL, jitter=dg.Jitter.PLUS_MINUS)


class SourceConfig(dg.Config):
    """Re-run from files: a plan file or a generator Avro output folder instead of the upstream partition."""

    source: str | None = None


def record_assets(partitions: dg.PartitionsDefinition) -> list[dg.AssetsDefinition]:
    """The four assets on ``partitions``: each one activity, written by the record IO manager as its schema."""
    return [
        dg.asset(
            partitions_def=partitions,
            io_manager_key="record_io_manager",
            metadata=record_metadata(activity, schema),
            group_name=RECORDS,
            kinds={"avro"},
            retry_policy=RETRY,
        )(_final_errors(compute))
        for compute, activity, schema in (
            (original_records, "harvest", ORIGINAL_RECORD),
            (mapped_records, "mapping", MAP_RECORD),
            (enriched_records, "enrichment", MAP_RECORD),
            (indexed_records, "indexing", INDEX_RECORD),
        )
    ]


def _final_errors(compute):
    @functools.wraps(compute)
    def run(*args, **kwargs):
        with final_unless_retryable():
            return compute(*args, **kwargs)

    return run


def _source(config: SourceConfig, storage: StorageResource, upstream: RecordSource, activity: str) -> RecordSource:
    return source_from_path(storage.storage, config.source, activity) if config.source else upstream


def original_records(context: dg.AssetExecutionContext, registry: RegistryResource, storage: StorageResource) -> RecordStream:
    """Harvest the provider for the partition's day (OAI-PMH, JSON API or file, per the registry)."""
    provider, day = partition_parts(context.partition_key)
    entry = registry.load()[provider]
    started = datetime.now(timezone.utc)
    window = None if entry.block("harvest").get("full") else day_window(day)
    run = harvest_records(
        entry,
        started=started,
        window=window,
        http=HttpClient(),
        checkpoint=StorageCheckpoint(storage.storage, provider),
    )
    return RecordStream(
        run,
        started=started,
        logs=lambda: {"harvest-errors.csv": run.stats.errors_csv().encode("utf-8")},
        summary=lambda: {"mode": "incremental" if window else "full", **run.metadata()},
    )


def mapped_records(
    context: dg.AssetExecutionContext,
    config: SourceConfig,
    registry: RegistryResource,
    storage: StorageResource,
    record_engine: RecordEngineResource,
    original_records: RecordSource,
) -> RecordStream:
    """Map original records to DPLA MAP v4 with the provider's mapping; failures go to the report."""
    provider, _ = partition_parts(context.partition_key)
    source = _source(config, storage, original_records, "harvest")
    return record_engine.stream(RecordActivity("mapping", registry.load()[provider]), [source], storage)


def enriched_records(
    context: dg.AssetExecutionContext,
    config: SourceConfig,
    registry: RegistryResource,
    storage: StorageResource,
    record_engine: RecordEngineResource,
    mapped_records: RecordSource,
) -> RecordStream:
    """Normalize dates, languages, types, rights and text of mapped records."""
    provider, _ = partition_parts(context.partition_key)
    source = _source(config, storage, mapped_records, "mapping")
    return record_engine.stream(RecordActivity("enrichment", registry.load()[provider]), [source], storage)


def indexed_records(
    context: dg.AssetExecutionContext,
    registry: RegistryResource,
    storage: StorageResource,
    record_engine: RecordEngineResource,
    enriched_records: RecordSource,
    original_records: RecordSource,
) -> RecordStream:
    """IndexRecord documents for enriched records, and index deletions for records the harvest deleted."""
    provider, _ = partition_parts(context.partition_key)
    activity = RecordActivity("indexing", registry.load()[provider])
    return record_engine.stream(activity, [enriched_records, original_records], storage)
