"""Record pipeline wiring (DPLA Ingestion 3 style)."""

import dagster as dg

from ingest_assets.defs.partitions import record_partitions
from ingest_assets.defs.records.assets import RECORDS, enriched_records, indexed_records, mapped_records, original_records
from ingest_assets.defs.records.parquet import enriched_parquet
from ingest_assets.defs.records.search import search_index, search_index_rebuild
from ingest_assets.defs.records.checks import harvest_count_drop, mapping_failure_rate
from ingest_assets.defs.records.sensors import registry_partitions_sensor

record_pipeline_job = dg.define_asset_job(
    "record_pipeline",
    selection=dg.AssetSelection.groups(RECORDS),
    partitions_def=record_partitions,
    description="Harvest, map, enrich and index one provider for one day.",
)

defs = dg.Definitions(
    assets=[original_records, mapped_records, enriched_records, indexed_records, search_index, search_index_rebuild, enriched_parquet],
    asset_checks=[harvest_count_drop, mapping_failure_rate],
    sensors=[registry_partitions_sensor],
    jobs=[record_pipeline_job],
)
