"""Quality gates (ingestion3's orchestrator thresholds) as blocking asset checks.

A failing gate stops the downstream assets of the run; its figures show in the UI as check metadata. The
checks are partitioned like their assets, so each result belongs to the provider and day it judged.
"""

import warnings

import dagster as dg

from ingest_assets.defs.records.partitions import partition_parts
from ingest_assets.defs.resources import RegistryResource, StorageResource
from ingest_assets.quality import count_drop, failure_rate
from ingest_assets.storage import layout
from ingest_assets.storage.activities import latest_source

MAX_COUNT_DROP = 0.15
MAX_FAILURE_RATE = 0.20


def _partition_and_limit(context: dg.AssetCheckExecutionContext, registry: RegistryResource, key: str, default: float):
    """The check's partition and the provider's threshold."""
    provider, day = partition_parts(context.partition_key)
    return provider, day, float(registry.load()[provider].block("quality").get(key, default))


def quality_checks(partitions: dg.PartitionsDefinition) -> list[dg.AssetChecksDefinition]:
    """Partitioned checks are a preview feature of the pinned Dagster (its warning is expected here)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.PreviewWarning)
        return _checks(partitions)


def _checks(partitions: dg.PartitionsDefinition) -> list[dg.AssetChecksDefinition]:
    return [
        dg.asset_check(asset="original_records", partitions_def=partitions, blocking=True,
                       description="Harvest count dropped > 15% vs the previous full harvest")(harvest_count_drop),
        dg.asset_check(asset="mapped_records", partitions_def=partitions, blocking=True,
                       description="Mapping failure rate > 20%")(mapping_failure_rate),
    ]


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


def mapping_failure_rate(
    context: dg.AssetCheckExecutionContext, storage: StorageResource, registry: RegistryResource
) -> dg.AssetCheckResult:
    provider, day, limit = _partition_and_limit(context, registry, "max_failure_rate", MAX_FAILURE_RATE)
    source = latest_source(storage.storage, provider, "mapping", day)
    rate, attempted, failed = failure_rate(source.manifest()) if source else (0.0, 0, 0)
    return dg.AssetCheckResult(
        passed=rate <= limit, metadata={"failure_rate": rate, "attempted": attempted, "failed": failed, "limit": limit}
    )
