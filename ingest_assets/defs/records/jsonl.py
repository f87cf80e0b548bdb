"""The JSON-L export DPLA's indexer reads: each partition's provider, as published on its day, in ingestion3's layout
under ``INGEST_JSONL_ROOT`` (the ``jsonl_storage`` resource). The logic is ``records/export/jsonl.py``."""

from datetime import datetime, timezone

import dagster as dg

from ingest_assets.core.settings import Settings
from ingest_assets.defs.records.assets import final_errors
from ingest_assets.defs.records.io_managers import BACKFILL, Part, run_parts
from ingest_assets.defs.records.parquet import EXPORTS
from ingest_assets.defs.records.publishing import PublishingResource
from ingest_assets.defs.resources import RegistryResource, StorageResource
from ingest_assets.records.mapping import base_id_for
from ingest_assets.storage import layout
from ingest_assets.storage.activities import RecordSource


def jsonl_asset(partitions: dg.PartitionsDefinition, retry: dg.RetryPolicy) -> dg.AssetsDefinition:
    return dg.asset(partitions_def=partitions, group_name=EXPORTS, kinds={"json"}, backfill_policy=BACKFILL,
                    retry_policy=retry, deps=["search_index"])(final_errors(jsonl_export))


def jsonl_storage(settings: Settings, storage: StorageResource) -> StorageResource:
    """Where the exports go: ``INGEST_JSONL_ROOT`` (default: the storage root), with the storage's S3 settings."""
    return StorageResource(url=settings.jsonl_export_root, s3=storage.s3)


def jsonl_export(
    context: dg.AssetExecutionContext, storage: StorageResource, jsonl_storage: StorageResource,
    publishing: PublishingResource, registry: RegistryResource, enriched_records: dict[Part, RecordSource],
) -> dg.MaterializeResult:
    """The provider's published records as of the partition's day (newest version of each, deletions applied, days
    never published and takedowns left out) as gzipped JSON-L parts, ``_MANIFEST`` and ``_SUCCESS`` last, at
    ``<s3 prefix>/jsonl/<yyyyMMdd_HHmmss>-<provider>-MAP3_1.IndexRecord.jsonl/``. A day is exported once published
    (its checks, review and index gates passed); folder names sort by day, so a backfilled older day never becomes
    the newest export sparkindexer reads."""
    # the publishing stores load SQLAlchemy: with the first run, not with the code location
    from ingest_assets.records.export.jsonl import (PublishedState, export_jsonl, export_stamp, newest_export, refusal,
                                                    s3_prefix)

    entries, ledger, takedowns = registry.load(), publishing.ledger(), publishing.takedowns()
    source, target = storage.get_client(), jsonl_storage.get_client()
    for partition, (provider, day) in run_parts(context.partition_keys):
        refused = refusal(source, ledger, provider, day, enriched_records[provider, day])
        if refused:
            raise dg.Failure(f"not exported: {refused}", allow_retries=False)
        entry, started = entries[provider], datetime.now(timezone.utc)
        prefix = s3_prefix(entries, provider)
        state = PublishedState(source, entry, day, exclude=ledger.excluded_days(provider),
                               suppressed=takedowns.suppressed(provider))
        folder = layout.jsonl_export(prefix, provider, export_stamp(target, prefix, day, started))
        export = export_jsonl(target, folder, state, base_id_for(entry), provider=provider, partition=partition,
                              started=started, inputs=[s.uri for s in state.sources],
                              summary=lambda: {"kept_out": state.kept_out})
        newest = newest_export(target, prefix)
        context.add_asset_metadata({
            "dagster/uri": dg.MetadataValue.path(export.uri),
            "dagster/row_count": export.records,
            "parts": len(export.parts),
            "bytes": export.bytes,
            "failed": export.failed,
            "failures": dg.MetadataValue.json(export.failures),
            "kept_out": state.kept_out,
            "inputs": dg.MetadataValue.json([s.uri for s in state.sources]),
            "newest": newest == folder,
            "newest_export": target.uri(newest) if newest else "",
        }, partition_key=partition)
    return dg.MaterializeResult()
