"""The Parquet export of a partition's enriched records (for pyarrow, DuckDB and Spark users)."""

from datetime import datetime, timezone

import dagster as dg

from ingest_assets.defs.records.io_managers import BACKFILL, Part, run_parts
from ingest_assets.defs.records.publishing import PublishingResource
from ingest_assets.defs.resources import StorageResource
from ingest_assets.storage import layout
from ingest_assets.storage.activities import RecordSource
from ingest_assets.storage.avro import MAP_RECORD

EXPORTS = "exports"


def parquet_asset(partitions: dg.PartitionsDefinition) -> dg.AssetsDefinition:
    return dg.asset(partitions_def=partitions, group_name=EXPORTS, kinds={"parquet"}, backfill_policy=BACKFILL)(
        enriched_parquet
    )


def enriched_parquet(
    context: dg.AssetExecutionContext, storage: StorageResource, publishing: PublishingResource,
    enriched_records: dict[Part, RecordSource],
) -> dg.MaterializeResult:
    """The newest enriched output of each partition as one Parquet file (zstd, row groups of 10,000 records)
    at ``<provider>/export/<yyyymmdd>/<ts>-<provider>-MAP4_x.MAPRecord.v1.parquet``; a day held for review,
    rejected or rolled back is not exported, and records under a takedown are left out."""
    from ingest_assets.records.export.parquet import export_parquet  # pyarrow loads with the first export

    ledger, takedowns = publishing.ledger(), publishing.takedowns()
    for partition, part in run_parts(context.partition_keys):
        blocked = ledger.blocked(*part)
        if blocked:
            raise dg.Failure(f"not exported: {blocked}", allow_retries=False)
        source = enriched_records[part]
        output = source.output
        suppressed = takedowns.suppressed(output.provider)
        records = (record for record in source if record["id"] not in suppressed)
        key = layout.export_key(output.provider, output.day, datetime.now(timezone.utc), layout.schema_name(MAP_RECORD), "parquet")
        stats = export_parquet(storage.get_client(), records, key, MAP_RECORD, provider=output.provider)
        context.add_asset_metadata({
            "dagster/uri": dg.MetadataValue.path(storage.get_client().uri(key)),
            "dagster/row_count": stats.records,
            "row_groups": stats.row_groups,
            "bytes": stats.bytes,
            "source": source.uri,
        }, partition_key=partition)
    return dg.MaterializeResult()
