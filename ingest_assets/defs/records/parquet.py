"""The Parquet export of a partition's enriched records (for pyarrow, DuckDB and Spark users)."""

from datetime import datetime, timezone

import dagster as dg

from ingest_assets.defs.resources import StorageResource
from ingest_assets.storage import layout
from ingest_assets.storage.activities import RecordSource
from ingest_assets.storage.avro import MAP_RECORD

EXPORTS = "exports"


def parquet_asset(partitions: dg.PartitionsDefinition) -> dg.AssetsDefinition:
    return dg.asset(partitions_def=partitions, group_name=EXPORTS, kinds={"parquet"})(enriched_parquet)


def enriched_parquet(storage: StorageResource, enriched_records: RecordSource) -> dg.MaterializeResult:
    """The newest enriched output of the partition as one Parquet file (zstd, row groups of 10,000 records)
    at ``<provider>/export/<yyyymmdd>/<ts>-<provider>-MAP4_x.MAPRecord.v1.parquet``."""
    from ingest_assets.records.parquet_export import export_parquet  # pyarrow loads with the first export

    output = enriched_records.output
    key = layout.export_key(output.provider, output.day, datetime.now(timezone.utc), layout.schema_name(MAP_RECORD), "parquet")
    stats = export_parquet(storage.storage, enriched_records, key, MAP_RECORD, provider=output.provider)
    return dg.MaterializeResult(metadata={
        "dagster/uri": dg.MetadataValue.path(storage.storage.uri(key)),
        "dagster/row_count": stats.records,
        "row_groups": stats.row_groups,
        "bytes": stats.bytes,
        "source": enriched_records.uri,
    })
