"""Quality gates (ingestion3's orchestrator thresholds) and count reconciliations as blocking asset checks.

A failing gate stops the downstream assets of the run; its figures show in the UI as check metadata. The
checks are partitioned like their assets, so each result belongs to the provider and day it judged. A
backfill run covering several partitions records one result per partition and gates the run as a whole:
one failing day stops the downstream steps of the range, and the run's own result names the failing days.
"""

from datetime import date

import dagster as dg

from ingest_assets.defs.records.io_managers import run_parts
from ingest_assets.defs.resources import RegistryResource, StorageResource
from ingest_assets.records.audit.count_drop import count_drop, failure_rate
from ingest_assets.records.audit.reconcile import Balance, harvest_balance, indexing_balance, mapping_balance
from ingest_assets.storage import layout
from ingest_assets.storage.activities import latest_source



def judge_each(context: dg.AssetCheckExecutionContext, judge) -> dg.AssetCheckResult:
    """``judge(provider, day)`` for each partition of the run. One partition: its result. Several: one
    evaluation per partition, then the run's result (passed only if every partition passed)."""
    parts = run_parts(context.partition_keys)
    if len(parts) == 1:
        return judge(*parts[0][1])
    failed = []
    for key, (provider, day) in parts:
        result = judge(provider, day)
        context.op_execution_context.log_event(dg.AssetCheckEvaluation(
            asset_key=context.check_specs[0].asset_key, check_name=context.check_specs[0].name,
            passed=result.passed, metadata=result.metadata, description=result.description, partition=key,
            blocking=True,
        ))
        if not result.passed:
            failed.append(key)
    return dg.AssetCheckResult(passed=not failed, metadata={"partitions": len(parts), "failed": dg.MetadataValue.json(failed)})


def _limit(registry: RegistryResource, provider: str, key: str) -> float:
    return getattr(registry.load()[provider].settings.quality, key)


def quality_checks(partitions: dg.PartitionsDefinition) -> list[dg.AssetChecksDefinition]:
    """Partitioned like their assets (a preview feature of the pinned Dagster)."""
    return [
        dg.asset_check(asset="original_records", partitions_def=partitions, blocking=True,
                       description="Harvest count dropped > 15% vs the previous full harvest")(harvest_count_drop),
        dg.asset_check(asset="mapped_records", partitions_def=partitions, blocking=True,
                       description="Mapping failure rate > 20%")(mapping_failure_rate),
        dg.asset_check(asset="original_records", partitions_def=partitions, blocking=True, name="harvest_reconciles",
                       description="Records the source announced (OAI-PMH completeListSize) = harvested + "
                                   "unreadable + duplicates")(harvest_reconciles),
        dg.asset_check(asset="mapped_records", partitions_def=partitions, blocking=True, name="mapping_reconciles",
                       description="Harvested = mapped + mapping failures + deletions; names the ids "
                                   "lost")(mapping_reconciles),
        dg.asset_check(asset="indexed_records", partitions_def=partitions, blocking=True, name="indexing_reconciles",
                       description="Index documents + index deletions = enriched + harvest deletions + absences "
                                   "from a full harvest; names the ids lost")(indexing_reconciles),
    ]


def _balance_result(balance: Balance | None) -> dg.AssetCheckResult:
    """A result from a stage's books (passed when there is nothing to reconcile, e.g. no announced size)."""
    if balance is None:
        return dg.AssetCheckResult(passed=True, metadata={"reconciled": "nothing to reconcile"})
    return dg.AssetCheckResult(
        passed=balance.balanced,
        description=balance.describe(),
        metadata={"equation": balance.equation(), "missing": balance.missing_count,
                  "missing_ids": dg.MetadataValue.json(list(balance.missing))},
    )


def harvest_reconciles(context: dg.AssetCheckExecutionContext, storage: StorageResource) -> dg.AssetCheckResult:
    return judge_each(context, lambda provider, day: _balance_result(harvest_balance(storage.get_client(), provider, day)))


def mapping_reconciles(
    context: dg.AssetCheckExecutionContext, storage: StorageResource, registry: RegistryResource
) -> dg.AssetCheckResult:
    return _judge_entries(context, storage, registry, mapping_balance)


def indexing_reconciles(
    context: dg.AssetCheckExecutionContext, storage: StorageResource, registry: RegistryResource
) -> dg.AssetCheckResult:
    return _judge_entries(context, storage, registry, indexing_balance)


def _judge_entries(context: dg.AssetCheckExecutionContext, storage: StorageResource, registry: RegistryResource,
                   balance) -> dg.AssetCheckResult:
    """A balance that needs the provider's registry entry (its mapper, or how it mints DPLA ids), per partition."""
    entries = registry.load()
    return judge_each(
        context, lambda provider, day: _balance_result(balance(storage.get_client(), entries[provider], day))
    )


def harvest_count_drop(
    context: dg.AssetCheckExecutionContext, storage: StorageResource, registry: RegistryResource
) -> dg.AssetCheckResult:
    def judge(provider: str, day: date) -> dg.AssetCheckResult:
        limit = _limit(registry, provider, "max_count_drop")
        outputs = layout.complete_outputs(storage.get_client(), provider, "harvest")
        current = latest_source(storage.get_client(), provider, "harvest", day)
        result = count_drop(storage.get_client(), outputs, current.output if current else None)
        return dg.AssetCheckResult(
            passed=result.drop is None or result.drop <= limit,
            metadata={"current": result.current, "previous": result.previous or 0, "drop": result.drop or 0.0, "limit": limit},
        )

    return judge_each(context, judge)


def mapping_failure_rate(
    context: dg.AssetCheckExecutionContext, storage: StorageResource, registry: RegistryResource
) -> dg.AssetCheckResult:
    def judge(provider: str, day: date) -> dg.AssetCheckResult:
        limit = _limit(registry, provider, "max_failure_rate")
        source = latest_source(storage.get_client(), provider, "mapping", day)
        rate, attempted, failed = failure_rate(source.manifest()) if source else (0.0, 0, 0)
        return dg.AssetCheckResult(
            passed=rate <= limit, metadata={"failure_rate": rate, "attempted": attempted, "failed": failed, "limit": limit}
        )

    return judge_each(context, judge)
