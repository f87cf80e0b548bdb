"""Quality gates (ingestion3's orchestrator thresholds) and count reconciliations as blocking asset checks.

A failing gate stops the downstream assets of the run; its result says what it found, the limit and the registry
key that sets it (the UI's run page shows the description and the figures as metadata), and the run keeps it as
the provider's last failure (``status``, ``report``, the failure notices). The checks are partitioned like their
assets, so each result belongs to the provider and day it judged. A backfill run covering several partitions
records one result per partition and gates the run as a whole: one failing day stops the downstream steps of the
range, and the run's own result names the failing days.
"""

from collections.abc import Callable
from datetime import date, datetime, timezone

import dagster as dg

from ingest_assets.defs.records.io_managers import run_parts
from ingest_assets.defs.resources import RegistryResource, StorageResource
from ingest_assets.operations.failures import Failure, record_failure
from ingest_assets.records.audit.count_drop import Verdict, count_drop, judge_count_drop, judge_failure_rate
from ingest_assets.records.audit.reconcile import Balance, harvest_balance, indexing_balance, mapping_balance
from ingest_assets.storage import layout
from ingest_assets.storage.activities import latest_source

Judged = list[tuple[str, date, dg.AssetCheckResult]]  # (provider, day, result) of each partition judged


def judge_each(context: dg.AssetCheckExecutionContext, judge,
               keep: Callable[[dg.AssetCheckExecutionContext, Judged], None] | None = None) -> dg.AssetCheckResult:
    """``judge(provider, day)`` for each partition of the run; ``keep`` gets the failed ones. One partition: its
    result. Several: one evaluation per partition, then the run's result (passed only if every partition passed)."""
    judged = [(key, provider, day, judge(provider, day)) for key, (provider, day) in run_parts(context.partition_keys)]
    if keep is not None:
        keep(context, [(provider, day, result) for _, provider, day, result in judged if not result.passed])
    if len(judged) == 1:
        return judged[0][3]
    failed = []
    for key, _, _, result in judged:
        context.op_execution_context.log_event(dg.AssetCheckEvaluation(
            asset_key=context.check_specs[0].asset_key, check_name=context.check_specs[0].name,
            passed=result.passed, metadata=result.metadata, description=result.description, partition=key,
            blocking=True,
        ))
        if not result.passed:
            failed.append((key, result))
    return dg.AssetCheckResult(
        passed=not failed, metadata={"partitions": len(judged), "failed": dg.MetadataValue.json([k for k, _ in failed])},
        description="; ".join(f"{key}: {result.description}" for key, result in failed)[:2000] or None)


def failure_keeper(ui_url: str, storage: StorageResource) -> Callable[[dg.AssetCheckExecutionContext, Judged], None]:
    """Keep a check's failed partitions as each provider's last failure, in the check's own words (the failure
    sensor keeps a record the run made itself; a run from ``ingest-assets harvest`` has no sensor to make one)."""

    def keep(context: dg.AssetCheckExecutionContext, failed: Judged) -> None:
        run = context.op_execution_context.run
        by_provider: dict[str, Judged] = {}
        for provider, day, result in failed:
            by_provider.setdefault(provider, []).append((provider, day, result))
        for provider, found in by_provider.items():
            record_failure(storage.get_client(), Failure(
                "check", run.job_name, provider, tuple(day for _, day, _ in found), context.op_def.name,
                "; ".join(result.description or "failed" for _, _, result in found), run.run_id,
                f"{ui_url}/runs/{run.run_id}", datetime.now(timezone.utc)))

    return keep


def _verdict(verdict: Verdict) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(passed=verdict.passed, description=verdict.description, metadata=verdict.figures)


def _limit(registry: RegistryResource, provider: str, key: str) -> float:
    return getattr(registry.load()[provider].settings.quality, key)


def quality_checks(partitions: dg.PartitionsDefinition, ui_url: str) -> list[dg.AssetChecksDefinition]:
    """Partitioned like their assets (a preview feature of the pinned Dagster); a failure names its run at
    ``ui_url``."""

    def harvest_count_drop(context: dg.AssetCheckExecutionContext, storage: StorageResource,
                           registry: RegistryResource) -> dg.AssetCheckResult:
        def judge(provider: str, day: date) -> dg.AssetCheckResult:
            outputs = layout.complete_outputs(storage.get_client(), provider, "harvest")
            current = latest_source(storage.get_client(), provider, "harvest", day)
            found = count_drop(storage.get_client(), outputs, current.output if current else None)
            return _verdict(judge_count_drop(provider, found, _limit(registry, provider, "max_count_drop")))

        return judge_each(context, judge, failure_keeper(ui_url, storage))

    def mapping_failure_rate(context: dg.AssetCheckExecutionContext, storage: StorageResource,
                             registry: RegistryResource) -> dg.AssetCheckResult:
        def judge(provider: str, day: date) -> dg.AssetCheckResult:
            source = latest_source(storage.get_client(), provider, "mapping", day)
            return _verdict(judge_failure_rate(provider, source.manifest() if source else None,
                                               _limit(registry, provider, "max_failure_rate")))

        return judge_each(context, judge, failure_keeper(ui_url, storage))

    def harvest_reconciles(context: dg.AssetCheckExecutionContext, storage: StorageResource) -> dg.AssetCheckResult:
        return judge_each(context, lambda provider, day: _balance_result(harvest_balance(storage.get_client(), provider, day)),
                          failure_keeper(ui_url, storage))

    def mapping_reconciles(context: dg.AssetCheckExecutionContext, storage: StorageResource,
                           registry: RegistryResource) -> dg.AssetCheckResult:
        return _judge_entries(context, storage, registry, mapping_balance, failure_keeper(ui_url, storage))

    def indexing_reconciles(context: dg.AssetCheckExecutionContext, storage: StorageResource,
                            registry: RegistryResource) -> dg.AssetCheckResult:
        return _judge_entries(context, storage, registry, indexing_balance, failure_keeper(ui_url, storage))

    return [
        dg.asset_check(asset="original_records", partitions_def=partitions, blocking=True,
                       description="Harvest count dropped no more than the provider's quality.max_count_drop "
                                   "(default 15%) vs the previous full harvest")(harvest_count_drop),
        dg.asset_check(asset="mapped_records", partitions_def=partitions, blocking=True,
                       description="Mapping failure rate within the provider's quality.max_failure_rate "
                                   "(default 20%)")(mapping_failure_rate),
        dg.asset_check(asset="original_records", partitions_def=partitions, blocking=True,
                       description="Records the source announced (OAI-PMH completeListSize) = harvested + "
                                   "unreadable + duplicates")(harvest_reconciles),
        dg.asset_check(asset="mapped_records", partitions_def=partitions, blocking=True,
                       description="Harvested = mapped + mapping failures + deletions; names the ids "
                                   "lost")(mapping_reconciles),
        dg.asset_check(asset="indexed_records", partitions_def=partitions, blocking=True,
                       description="Index documents + index deletions = enriched + harvest deletions + absences "
                                   "from a full harvest; names the ids lost")(indexing_reconciles),
    ]


RECONCILE_REMEDY = ("records went missing between the stages (the ids above); harvest the day again, and if it "
                    "fails again, report it with this run")


def _balance_result(balance: Balance | None) -> dg.AssetCheckResult:
    """A result from a stage's books (passed when there is nothing to reconcile, e.g. no announced size)."""
    if balance is None:
        return dg.AssetCheckResult(passed=True, metadata={"reconciled": "nothing to reconcile"})
    return dg.AssetCheckResult(
        passed=balance.balanced,
        description=balance.describe() + ("" if balance.balanced else f". {RECONCILE_REMEDY}"),
        metadata={"equation": balance.equation(), "missing": balance.missing_count,
                  "missing_ids": dg.MetadataValue.json(list(balance.missing))},
    )


def _judge_entries(context: dg.AssetCheckExecutionContext, storage: StorageResource, registry: RegistryResource,
                   balance, keep) -> dg.AssetCheckResult:
    """A balance that needs the provider's registry entry (its mapper, or how it mints DPLA ids), per partition."""
    entries = registry.load()
    return judge_each(
        context, lambda provider, day: _balance_result(balance(storage.get_client(), entries[provider], day)), keep
    )
