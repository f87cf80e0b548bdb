"""Quality gates (ingestion3's orchestrator thresholds) as blocking asset checks.

A failing gate stops the downstream assets of the run; its figures show in the UI as check metadata.
"""


import dagster as dg

from ingest_assets.defs.partitions import partition_parts
from ingest_assets.defs.records.assets import mapped_records, original_records
from ingest_assets.defs.resources import RegistryResource, StorageResource
from ingest_assets.quality import count_drop, failure_rate
from ingest_assets.storage import layout
from ingest_assets.storage.activities import latest_source

MAX_COUNT_DROP = 0.15
MAX_FAILURE_RATE = 0.20


def _partition_and_limit(context: dg.AssetCheckExecutionContext, registry: RegistryResource, key: str, default: float):
    """The run's partition (checks see it through the run's tags) and the provider's threshold."""
    provider, day = partition_parts(context.run.tags["dagster/partition"])
    return provider, day, float(registry.load()[provider].block("quality").get(key, default))


@dg.asset_check(asset=original_records, blocking=True, description="Harvest count dropped > 15% vs the previous full harvest")
def harvest_count_drop(
    context: dg.AssetCheckExecutionContext, storage: StorageResource, registry: RegistryResource
) -> dg.AssetCheckResult:
    provider, day, limit = _partition_and_limit(context, registry, "max_count_drop", MAX_COUNT_DROP)
    outputs = layout.complete_outputs(storage.storage, provider, "harvest")
    current = latest_source(storage.storage, provider, "harvest", day)
    result = count_drop(storage.storage, outputs, current.output if current else None)
    return dg.AssetCheckResult(
        passed=result.drop is None or result.drop <= limit,
        metadata={"current": result.current, "previous": result.previous or 0, "drop": result.drop or 0.0, "limit": limit},
    )


@dg.asset_check(asset=mapped_records, blocking=True, description="Mapping failure rate > 20%")
def mapping_failure_rate(
    context: dg.AssetCheckExecutionContext, storage: StorageResource, registry: RegistryResource
) -> dg.AssetCheckResult:
    provider, day, limit = _partition_and_limit(context, registry, "max_failure_rate", MAX_FAILURE_RATE)
    source = latest_source(storage.storage, provider, "mapping", day)
    rate, attempted, failed = failure_rate(source.manifest()) if source else (0.0, 0, 0)
    return dg.AssetCheckResult(
        passed=rate <= limit, metadata={"failure_rate": rate, "attempted": attempted, "failed": failed, "limit": limit}
    )
