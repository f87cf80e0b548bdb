"""What DPLA's downstream reads appears by itself: ``jsonl_export``, ``wikimedia_records`` and ``tag_sitemaps`` run
after a publication, as ingestion3's chain syncs a hub's JSON-L once its data is approved, refreshes Wikimedia after
the post-flip gate and regenerates the tag sitemaps after the index (``INGEST_AUTO_EXPORTS`` chooses which).

A publication is what the publication ledger records (``records/publishing/review.py``: a day is ``published`` once
its gates and canary passed and the alias serves it), the record the exports themselves check before they write.
A provider's newest published day is exported after it publishes any day: a day held for review or rejected is
never published, so never attempted; a backfilled older day is folded into the newest day's export (each export
holds the provider's whole published state, and the newest folder is the one DPLA's indexer reads), not exported
on its own. Reading the ledger is Python of ours: these conditions are evaluated in the code server, by
``exports_automation_sensor``, on the assets tagged for it."""

from __future__ import annotations

import json
from datetime import date, datetime
from functools import cached_property
from typing import TYPE_CHECKING

import dagster as dg

from ingest_assets.core.settings import Settings
from ingest_assets.defs.records.partitions import partition_key
from ingest_assets.defs.resources import SqlResource
from ingest_assets.defs.shared import CODE_SERVER_AUTOMATION

if TYPE_CHECKING:
    from ingest_assets.records.publishing.review import Ledger


class Publications:
    """Each provider's newest published day and last publication time (``Ledger.publications``), read once per
    evaluation: every node of the conditions sees the same ledger."""

    def __init__(self, sql: SqlResource):
        self.sql, self.read_at, self.read = sql, None, {}

    @cached_property
    def ledger(self) -> Ledger:
        from ingest_assets.records.publishing.review import Ledger  # SQLAlchemy: with the first evaluation

        return Ledger(self.sql.get_client())

    def of(self, context: dg.AutomationContext) -> dict[str, tuple[date, datetime]]:
        if self.read_at != context.evaluation_time:
            self.read_at, self.read = context.evaluation_time, self.ledger.publications()
        return self.read


class NewestPublished(dg.AutomationCondition):
    """True for each provider's newest published day (an unpartitioned target: once a day is published)."""

    def __init__(self, publications: Publications):
        self.publications = publications
        super().__init__()

    @property
    def name(self) -> str:
        return "newest_published_day"

    @staticmethod
    def days(context: dg.AutomationContext, days: dict[str, date]):
        """The candidates among ``days`` (provider -> day); an unpartitioned target: all of them when any."""
        if context.partitions_def is None:
            return context.candidate_subset if days else context.get_empty_subset()
        keys = {str(partition_key(provider, day)) for provider, day in days.items()}
        return context.candidate_subset.compute_intersection_with_partition_keys(
            {key for key in keys if context.partitions_def.has_partition_key(key)})  # a provider still registered

    def evaluate(self, context: dg.AutomationContext) -> dg.AutomationResult:
        newest = {provider: day for provider, (day, _) in self.publications.of(context).items()}
        return dg.AutomationResult(context, true_subset=self.days(context, newest))


class NewPublication(NewestPublished):
    """True, on the evaluation that first sees a provider publish a day (any day), for that provider's newest
    published day (an unpartitioned target: when any provider published). The first evaluation only takes note of
    what is published: days published before automation are not exported by it."""

    @property
    def name(self) -> str:
        return "new_publication"

    def evaluate(self, context: dg.AutomationContext) -> dg.AutomationResult:
        published = self.publications.of(context)
        seen = {p: datetime.fromisoformat(at) for p, at in json.loads(context.cursor).items()} if context.cursor else None
        new = {p: day for p, (day, at) in published.items() if seen is not None and (p not in seen or at > seen[p])}
        cursor = json.dumps({p: at.isoformat() for p, (_, at) in sorted(published.items())})
        return dg.AutomationResult(context, true_subset=self.days(context, new), cursor=cursor)


def after_publication(export: str, settings: Settings, sql: SqlResource) -> dict:
    """The ``dg.asset`` arguments that run ``export`` after a publication, for the provider's newest published
    day, once its inputs are not in progress and it is not running already (none when ``INGEST_AUTO_EXPORTS``
    leaves it out). A publication is remembered until the export is requested or materialized on a later
    evaluation (one seen on the evaluation of a request or a materialization may be newer than what that export
    read: it is kept). A request counts as handled: an export that fails (a refusal is final) is not tried again
    until the provider publishes again."""
    if export not in settings.auto_exports:
        return {}
    publications = Publications(sql)
    new = NewPublication(publications)
    handled = dg.AutomationCondition.newly_requested() | dg.AutomationCondition.newly_updated()
    condition = (new.since((handled & ~new).with_label("handled before it")) & NewestPublished(publications)
                 & ~dg.AutomationCondition.any_deps_in_progress()
                 & ~dg.AutomationCondition.in_progress()).with_label("after a publication")
    return {"automation_condition": condition, "tags": dict([CODE_SERVER_AUTOMATION])}


def exports_sensor() -> dg.AutomationConditionSensorDefinition:
    """Evaluates the exports' conditions in the code server every 30 s; each request is a run of its own (a
    provider-day's JSON-L and Wikimedia exports in one run), tagged ``ingest/trigger: publication``."""
    return dg.AutomationConditionSensorDefinition(
        "exports_automation_sensor", target=dg.AssetSelection.tag(*CODE_SERVER_AUTOMATION),
        default_status=dg.DefaultSensorStatus.RUNNING, use_user_code_server=True, emit_backfills=False,
        run_tags={"ingest/trigger": "publication"},
        description="Runs jsonl_export, wikimedia_records and tag_sitemaps after a publication (INGEST_AUTO_EXPORTS)",
    )
