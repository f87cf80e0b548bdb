"""``record_counts``: the operator's table of what each provider's days did, refreshed after indexing."""

from dataclasses import fields

import dagster as dg
from pydantic import Field

from ingest_assets.defs.resources import RegistryResource, StorageResource
from ingest_assets.storage.counts import DayCounts, counts_with_data

# any indexed_records partition materialized since the last evaluation (a non-partitioned asset over
# partitioned parents: eager() would wait until no provider-day is missing, i.e. never)
AFTER_INDEXING = dg.AutomationCondition.any_deps_updated() & ~dg.AutomationCondition.in_progress()
SCHEMA = dg.TableSchema(columns=[
    dg.TableColumn(f.name, {"str": "string", "date": "date", "int": "int"}[f.type]) for f in fields(DayCounts)
])


class CountsConfig(dg.Config):
    days: int = Field(default=90, ge=1, le=3660, description="How many of each provider's newest days with data the table covers")


@dg.asset(group_name="operations", kinds={"table"}, deps=["indexed_records"], automation_condition=AFTER_INDEXING)
def record_counts(config: CountsConfig, storage: StorageResource, registry: RegistryResource) -> dg.MaterializeResult:
    """Records harvested / deleted / failed, mapped / failed, enriched and indexed, per record provider and
    day with data (each provider's newest ``days`` days that were harvested, newest first), from each
    activity's newest ``_MANIFEST``: a table in the UI's metadata."""
    rows = list(counts_with_data(storage.get_client(), registry.load().providers_of("records"), config.days))
    return dg.MaterializeResult(metadata={
        "counts": dg.MetadataValue.table(records=[dg.TableRecord(r.as_table_row()) for r in rows], schema=SCHEMA),
        "dagster/row_count": len(rows),
        "harvested": sum(r.harvested for r in rows),
        "mapping_failed": sum(r.mapping_failed for r in rows),
        "days": config.days,
    })
