"""The four record assets: original -> mapped -> enriched -> indexed (plus pushing to the search index)."""


from datetime import datetime, timezone

import dagster as dg

from ingest_assets.defs.partitions import day_window, partition_parts, record_partitions
from ingest_assets.defs.io_managers import record_metadata
from ingest_assets.defs.resources import RegistryResource, StorageResource
from ingest_assets.http import HttpClient
from ingest_assets.records.enrichment import EnrichmentReport, enrich
from ingest_assets.records.harvest import StorageCheckpoint, harvest_records
from ingest_assets.records.indexing import deletion_record, index_record
from ingest_assets.records.mapping import MappingReport, mapper_for, mint_id
from ingest_assets.storage.activities import RecordSource, RecordStream, source_from_path
from ingest_assets.storage.avro import INDEX_RECORD, MAP_RECORD, ORIGINAL_RECORD

RECORDS = "records"


class SourceConfig(dg.Config):
    """Re-run from files: a plan file or a generator Avro output folder instead of the upstream partition."""

    source: str | None = None


def record_asset(activity: str, schema: str):
    """An asset of the record pipeline: one activity, written by the record IO manager as ``schema``."""
    return dg.asset(
        partitions_def=record_partitions,
        io_manager_key="record_io_manager",
        metadata=record_metadata(activity, schema),
        group_name=RECORDS,
        kinds={"avro"},
    )


def _reported(source: RecordSource, step, report, log_name: str) -> RecordStream:
    """``step`` applied to each record of ``source`` (``None`` results dropped); ``report`` goes to ``_LOGS``."""
    records = (out for out in map(step, source) if out is not None)
    return RecordStream(records, inputs=[source], logs=lambda: {log_name: report.csv()}, summary=report.metadata)


def _source(config: SourceConfig, storage: StorageResource, upstream: RecordSource, activity: str) -> RecordSource:
    return source_from_path(storage.storage, config.source, activity) if config.source else upstream


@record_asset("harvest", ORIGINAL_RECORD)
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


@record_asset("mapping", MAP_RECORD)
def mapped_records(
    context: dg.AssetExecutionContext,
    config: SourceConfig,
    registry: RegistryResource,
    storage: StorageResource,
    original_records: RecordSource,
) -> RecordStream:
    """Map original records to DPLA MAP v4 with the provider's mapping; failures go to the report."""
    provider, _ = partition_parts(context.partition_key)
    source = _source(config, storage, original_records, "harvest")
    mapper = mapper_for(registry.load()[provider])
    report = MappingReport()

    def step(original: dict) -> dict | None:
        result = mapper.map(original)
        report.add(result)
        return result.record

    return _reported(source, step, report, "mapping-report.csv")


@record_asset("enrichment", MAP_RECORD)
def enriched_records(
    config: SourceConfig, storage: StorageResource, mapped_records: RecordSource
) -> RecordStream:
    """Normalize dates, languages, types, rights and text of mapped records."""
    source = _source(config, storage, mapped_records, "mapping")
    report = EnrichmentReport()

    def step(record: dict) -> dict:
        result, changes = enrich(record)
        report.add(record["id"], changes, samples=(record, result))
        return result

    return _reported(source, step, report, "enrichment-report.csv")


@record_asset("indexing", INDEX_RECORD)
def indexed_records(
    context: dg.AssetExecutionContext, enriched_records: RecordSource, original_records: RecordSource
) -> RecordStream:
    """IndexRecord documents for enriched records, and index deletions for records the harvest deleted."""
    provider, _ = partition_parts(context.partition_key)
    counts = {"documents": 0, "deletions": 0}

    def documents():
        for record in enriched_records:
            counts["documents"] += 1
            yield index_record(record)
        for original in original_records:
            if original.get("deleted"):
                counts["deletions"] += 1
                yield deletion_record(mint_id(provider, original["id"]))

    return RecordStream(documents(), inputs=[enriched_records, original_records], summary=lambda: counts)
