"""Publishing wiring: the day's report, the review gate, gated promotion of each provider's index, the rebuild,
their gate checks and the review sensor. The logic is in ``records/publishing/``.

    indexed_records -> provider_report -> review_gate -> search_index -> resourcesync_changes
                                          (holds a day     (candidate, gates,
                                           under review)    flip, canary)

``review_gate`` yields nothing for a day held for review or rejected, so nothing downstream runs (the run
succeeds; the day waits). ``record_publish`` is the part from the gate on: the review sensor runs it for days
approved since (by a person, the UI or the window expiring), ``ingest-assets review approve`` runs it at once.
"""

from datetime import datetime, timezone
from enum import Enum
from typing import TYPE_CHECKING

import dagster as dg
from pydantic import Field

from ingest_assets.core.registry import ProviderEntry
from ingest_assets.core.settings import Settings
from ingest_assets.defs.providers import record_providers
from ingest_assets.defs.records.checks import judge_each
from ingest_assets.defs.records.assets import final_errors
from ingest_assets.defs.records.io_managers import BACKFILL, Part, run_parts
from ingest_assets.defs.records.partitions import partition_key
from ingest_assets.defs.records.resources import SearchIndexResource
from ingest_assets.defs.resources import RegistryResource, SqlResource, StorageResource
from ingest_assets.records.indexing import IndexStats
from ingest_assets.records.publishing import gates
from ingest_assets.storage import layout
from ingest_assets.storage.activities import RecordSource

if TYPE_CHECKING:  # the stores load SQLAlchemy: only when a run or sensor uses them, not with the code location
    from ingest_assets.records.publishing.daily import Mail
    from ingest_assets.records.publishing.journal import Journal
    from ingest_assets.records.publishing.promotion import Published, Publisher
    from ingest_assets.records.publishing.review import Ledger
    from ingest_assets.records.publishing.takedowns import Takedowns

PUBLISH_JOB = "record_publish"
CHECKS = (*gates.GATES, gates.CANARY)
REVIEW_TAG = "ingest/publish"


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


class PublishingResource(dg.ConfigurableResource):
    """Where publishing keeps its state (the ``sql`` database) and its settings: the count tolerance
    (``INGEST_INDEX_TOLERANCE``, a provider's ``quality.index_count_tolerance`` first), the previous indices
    kept (``INGEST_INDEX_RETAIN``), and the SMTP server reports are mailed through (``INGEST_SMTP_URL``, when set;
    the sender is ``INGEST_NOTIFY_FROM``)."""

    sql: SqlResource
    tolerance: float = 0.02
    retain: int = 2
    smtp_url: str | None = None  # None: reports are not mailed
    smtp_password: str | None = None  # INGEST_SMTP_PASSWORD, bound as an EnvVar (the UI shows its name, not its value)
    sender: str = "ingest-assets@localhost"
    ui_url: str = "http://127.0.0.1:3000"

    @classmethod
    def from_settings(cls, settings: Settings, sql: SqlResource) -> "PublishingResource":
        return cls(sql=sql, tolerance=settings.index_count_tolerance, retain=settings.index_retain,
                   smtp_url=settings.smtp_url if settings.smtp_given else None,
                   smtp_password=dg.EnvVar("INGEST_SMTP_PASSWORD") if settings.secret("INGEST_SMTP_PASSWORD") else None,
                   sender=settings.notify_from, ui_url=settings.ui_url)

    def engine(self):
        return self.sql.get_client()

    def ledger(self) -> "Ledger":
        from ingest_assets.records.publishing.review import Ledger

        return Ledger(self.engine())

    def journal(self) -> "Journal":
        from ingest_assets.records.publishing.journal import Journal

        return Journal(self.engine())

    def tolerance_of(self, entry: ProviderEntry) -> float:
        own = entry.settings.quality.index_count_tolerance
        return self.tolerance if own is None else own

    def mail(self) -> "Mail | None":
        from ingest_assets.records.publishing.daily import Mail

        if self.smtp_url is None:
            return None
        return Mail(self.smtp_url, self.smtp_password, self.sender, self.ui_url)

    def failed(self, storage: StorageResource, provider: str, days: tuple, message: str, context) -> None:
        """Keep a refusal as the provider's last failure, with all it has to say (the failure sensor keeps it)."""
        from ingest_assets.operations.failures import Failure, record_failure

        run_id = context.run.run_id
        record_failure(storage.get_client(), Failure("check", context.run.job_name, provider, days, "search_index",
                                                     message, run_id, f"{self.ui_url}/runs/{run_id}", utc_now()))

    def takedowns(self) -> "Takedowns":
        from ingest_assets.records.publishing.takedowns import Takedowns

        return Takedowns(self.engine())

    def publisher(self, search: SearchIndexResource) -> "Publisher":
        from ingest_assets.records.publishing.promotion import Publisher

        return Publisher(search.get_client(), search.alias, self.journal(), self.ledger(), self.takedowns(),
                         retain=self.retain)


# -- the day's report ------------------------------------------------------------------------------------------


def provider_report(
    context: dg.AssetExecutionContext, publishing: PublishingResource, search: SearchIndexResource,
    registry: RegistryResource, indexed_records: dict[Part, RecordSource],
) -> dg.MaterializeResult:
    """Register each new day for publication (held when the provider requires review), write its report (counts,
    problems, coverage, what changed since the previous published day) as JSON and HTML in the indexing output's
    ``_LOGS/`` and mail it to the provider's contacts."""
    from ingest_assets.records.publishing.daily import report_day

    entries = registry.load()
    for key, (provider, day) in run_parts(context.partition_keys):
        outcome = report_day(entries[provider], day, indexed_records[provider, day], search.get_client(),
                             search.alias, publishing.engine(), utc_now(), publishing.mail(),
                             (context.run.job_name, context.run.run_id))
        diff = outcome.report["diff"]
        context.add_asset_metadata({
            "report": dg.MetadataValue.md(outcome.markdown),
            "report_html": dg.MetadataValue.path(outcome.files[1]),
            "review": outcome.review.state,
            **{name: diff[name] for name in ("added", "changed", "removed", "unchanged")},
            "mailed": outcome.mailed,
        }, partition_key=key)
    return dg.MaterializeResult()


# -- the review gate ------------------------------------------------------------------------------------------


class Decision(Enum):
    approve = "approve"
    reject = "reject"


class ReviewDecision(dg.Config):
    """Decide in the UI: launch ``record_publish`` for the partition with ``decision: approve`` (or ``reject``)."""

    decision: Decision | None = Field(default=None, description="approve or reject the day(s)")
    reason: str | None = Field(default=None, description="why (kept with the decision)")
    by: str = Field(default="Dagster UI", description="who decides")


def review_gate(context: dg.AssetExecutionContext, config: ReviewDecision, publishing: PublishingResource,
                storage: StorageResource):
    """Let the run's days through only when each is approved (or needs no review) and no earlier day of its
    provider still waits; otherwise yield nothing, so nothing downstream publishes (the run succeeds)."""
    ledger, now = publishing.ledger(), utc_now()
    parts = run_parts(context.partition_keys)
    if config.decision:
        for _, (provider, day) in parts:
            ledger.decide(provider, day, config.decision == Decision.approve, config.by, now, config.reason)
    by_provider: dict[str, dict] = {}
    for _, (provider, day) in parts:
        output = layout.latest_output(storage.get_client(), provider, "indexing", day)
        by_provider.setdefault(provider, {})[day] = output.folder if output else ""
    reasons = [reason for provider, outputs in by_provider.items() if (reason := ledger.held(provider, outputs))]
    for provider, outputs in by_provider.items():
        ledger.mark(provider, list(outputs), released=not reasons, now=now)
    if reasons:
        for key, _ in parts:
            context.log_event(dg.AssetObservation(asset_key=context.asset_key, partition=key,
                                                  metadata={"held": "; ".join(reasons)}))
        context.log.info("held: " + "; ".join(reasons))
        return
    for key, (provider, day) in parts:
        context.add_asset_metadata({"state": ledger.get(provider, day).state}, partition_key=key)
    yield dg.MaterializeResult()


# -- gated promotion ------------------------------------------------------------------------------------------


def _stats(stats: IndexStats | None) -> dict:
    if stats is None:
        return {}
    reconciliation = stats.to_dict().get("reconciliation") or {}
    return {"indexed": stats.indexed, "deleted": stats.deleted, "failed": stats.failed,
            "reconciled": bool(reconciliation.get("ok", False)),
            "failures": dg.MetadataValue.json(stats.failures)}


def search_index(
    context: dg.AssetExecutionContext, publishing: PublishingResource, search: SearchIndexResource,
    registry: RegistryResource, storage: StorageResource, indexed_records: dict[Part, RecordSource],
) -> dg.MaterializeResult:
    """Each provider of the run gets a candidate index (its live index copied, the run's days applied in order,
    takedowns kept out); the gates judge it (checks ``index_*``), and only when every provider's pass does the
    alias flip onto them in one action naming what they replace; a failed canary flips it back by itself."""
    entries = registry.load()
    parts = run_parts(context.partition_keys)
    days: dict[str, list] = {}
    for _, (provider, day) in parts:
        days.setdefault(provider, []).append((day, indexed_records[provider, day]))
    ledger = publishing.ledger()
    for provider, provider_days in days.items():
        held = ledger.held(provider, {day: source.key for day, source in provider_days})
        if held:
            raise dg.Failure(f"not published: {held} (approve it with `ingest-assets review approve`)",
                             allow_retries=False)
    outcome = publishing.publisher(search).publish(
        days, storage.get_client(), {p: publishing.tolerance_of(entries[p]) for p in days},
        run_id=context.run.run_id, by=f"run {context.run.run_id}")
    for key, (provider, day) in parts:
        part = outcome[provider]
        context.add_asset_metadata({"index": part.candidate.name, "promoted": part.promoted, "note": part.note,
                                    "replaces": part.candidate.base or "", **_stats(part.candidate.stats.get(day))},
                                   partition_key=key)
    _record_failures(publishing, storage, outcome, context)
    return dg.MaterializeResult()


def _record_failures(publishing: PublishingResource, storage: StorageResource, outcome: dict[str, "Published"],
                     context: dg.AssetExecutionContext) -> None:
    """Each provider the run did not publish, kept as its last failure with the gates' own words."""
    for provider, part in outcome.items():
        failed = [r for r in part.results if not r.passed]
        if failed or not part.promoted:
            text = "; ".join(f"{r.gate}: {r.description} (remediation: {r.remediation})" for r in failed) or part.note
            publishing.failed(storage, provider, tuple(part.candidate.days), text, context)


class RebuildConfig(dg.Config):
    as_of: str | None = Field(default=None, description="YYYY-MM-DD; default today (UTC)")


def search_index_rebuild(context: dg.AssetExecutionContext, config: RebuildConfig, publishing: PublishingResource,
                         search: SearchIndexResource, storage: StorageResource,
                         registry: RegistryResource) -> dg.MaterializeResult:
    """Every record provider's published state (newest IndexRecord per id, deletions applied, held and rejected
    days left out, takedowns kept out) rebuilt from the layout into new per-provider indices, gated like a
    day's publish, and flipped in one action (an index of every provider, from before per-provider indices,
    leaves the alias then)."""
    as_of = datetime.fromisoformat(config.as_of).date() if config.as_of else utc_now().date()
    entries = registry.load()
    providers = entries.providers_of("records")
    outcome = publishing.publisher(search).rebuild(
        storage.get_client(), providers, as_of, {p: publishing.tolerance_of(entries[p]) for p in providers},
        run_id=context.run.run_id, by=f"run {context.run.run_id}")
    _record_failures(publishing, storage, outcome, context)
    return dg.MaterializeResult(metadata={
        "providers": len(outcome),
        "promoted": all(p.promoted for p in outcome.values()),
        "indices": dg.MetadataValue.json({p: part.candidate.name for p, part in outcome.items()}),
        "documents": sum(part.candidate.figures.get("count", 0) for part in outcome.values()),
    })


# -- the gates as blocking checks ----------------------------------------------------------------------------


def _gate_result(journal: "Journal", run_id: str, gate: str, providers: list[str] | None) -> dg.AssetCheckResult:
    """The gate's decisions about the indices the run built (of ``providers``; None: all of them)."""
    found = [(c.provider, r) for c in journal.built_in(run_id) if providers is None or c.provider in providers
             for r in journal.gate_results(c.name) if r.gate == gate]
    if not found:
        return dg.AssetCheckResult(passed=True, description="not judged: no candidate reached this gate",
                                   metadata={"judged": 0})
    failed = [(p, r) for p, r in found if not r.passed]
    shown = failed or found
    metadata = {"evidence": dg.MetadataValue.json({p: r.evidence for p, r in shown})}
    if failed:
        metadata["remediation"] = dg.MetadataValue.md("\n".join(f"- **{p}**: {r.remediation}" for p, r in failed))
    said = [f"{r.description}. {r.remediation}" if not r.passed and r.remediation else r.description for _, r in shown]
    return dg.AssetCheckResult(passed=not failed, description="; ".join(said)[:2000], metadata=metadata)


def gate_checks(asset: str, partitions: dg.PartitionsDefinition | None) -> list[dg.AssetChecksDefinition]:
    """One blocking check per gate on ``asset``: the decision its build recorded, with evidence and remediation
    (partitioned like the asset: each result on the provider and day it judged)."""

    def check_for(gate: str):
        def check(context: dg.AssetCheckExecutionContext, publishing: PublishingResource) -> dg.AssetCheckResult:
            journal, run_id = publishing.journal(), context.op_execution_context.run.run_id
            if partitions is None:
                return _gate_result(journal, run_id, gate, None)
            return judge_each(context, lambda provider, day: _gate_result(journal, run_id, gate, [provider]))

        check.__name__ = gate
        return dg.asset_check(asset=asset, name=gate, blocking=True, partitions_def=partitions,
                              description=gates.DESCRIPTIONS[gate])(check)

    return [check_for(gate) for gate in CHECKS]


# -- the review sensor and the failure hook -------------------------------------------------------------------


def review_sensor(job_name: str) -> dg.SensorDefinition:
    @dg.sensor(name="review_sensor", job_name=job_name, minimum_interval_seconds=60,
               default_status=dg.DefaultSensorStatus.RUNNING)
    def review_sensor(context: dg.SensorEvaluationContext, publishing: PublishingResource):
        """Approve the days whose review window passed, then publish each provider's earliest approved day that no
        run has taken (one run per day, in order: a provider's days are published oldest first)."""
        ledger = publishing.ledger()
        approved = ledger.expire(utc_now())
        for state in approved:
            context.log.info(f"auto-approved: {state.describe()}")
        known = set(context.instance.get_dynamic_partitions(record_providers.name))
        requests = [
            dg.RunRequest(run_key=f"publish|{state.provider}|{state.day.isoformat()}|{state.output}|{state.holds}",
                          partition_key=str(partition_key(state.provider, state.day)),
                          tags={REVIEW_TAG: f"{state.provider}|{state.day.isoformat()}", "ingest/trigger": "review"})
            for state in ledger.to_release() if state.provider in known
        ]
        waiting = [s.describe() for s in ledger.waiting() if s.state == "pending"]
        return dg.SensorResult(run_requests=requests, skip_reason=None if requests else (
            f"{len(waiting)} day(s) held for review: {'; '.join(waiting[:10])}" if waiting else "nothing to publish"))

    return review_sensor


# -- assembly -------------------------------------------------------------------------------------------------


def publishing_assets(partitions: dg.PartitionsDefinition, kind: str, group: str,
                      retry: dg.RetryPolicy) -> list[dg.AssetsDefinition]:
    """``provider_report``, ``review_gate`` and ``search_index`` on ``partitions`` (in ``group``), and the rebuild;
    ``kind`` names the search backend in the UI; ``retry`` is the record steps' retry policy."""
    partitioned = dict(partitions_def=partitions, group_name=group, backfill_policy=BACKFILL)
    return [
        dg.asset(kinds={"html"}, retry_policy=retry, **partitioned)(final_errors(provider_report)),
        dg.asset(deps=["provider_report"], output_required=False, **partitioned)(review_gate),
        dg.asset(deps=["review_gate"], kinds={kind}, retry_policy=retry, **partitioned)(final_errors(search_index)),
        dg.asset(group_name="search", kinds={kind}, deps=["search_index"])(final_errors(search_index_rebuild)),
    ]


def publishing_checks(partitions: dg.PartitionsDefinition) -> list[dg.AssetChecksDefinition]:
    return [*gate_checks("search_index", partitions), *gate_checks("search_index_rebuild", None)]
