"""What DPLA's downstream reads appears by itself: ``jsonl_export``, ``wikimedia_records`` and ``tag_sitemaps`` run
after a publication, as ingestion3's chain syncs a hub's JSON-L once its data is approved, refreshes Wikimedia after
the post-flip gate and regenerates the tag sitemaps after the index (``INGEST_AUTO_EXPORTS`` chooses which).

A publication is what the publication ledger records (``records/publishing/review.py``: a day is ``published`` once
its gates and canary passed and the alias serves it), the record the exports themselves check before they write: a
day held for review or rejected is never published, so never attempted. What is exported follows what the export
holds. A JSON-L export holds the provider's whole published state and the newest folder is the one DPLA's indexer
reads, so after any publication the provider's newest published day is exported: a backfilled older day is folded
into it, not exported on its own (a folder that would never be read). A Wikimedia export holds one day's records:
each day is exported when it is published. The tag sitemaps cover the whole index: once after any publication.
Reading the ledger is Python of ours: these conditions are evaluated in the code server, by
``exports_automation_sensor``, on the assets tagged for it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from datetime import date, datetime
from functools import cached_property
from typing import TYPE_CHECKING

import dagster as dg

from ingest_assets.core.settings import Settings
from ingest_assets.defs.records.partitions import partition_key, partition_parts
from ingest_assets.defs.resources import SqlResource
from ingest_assets.defs.shared import CODE_SERVER_AUTOMATION

if TYPE_CHECKING:
    from ingest_assets.records.publishing.review import Ledger


class Publications:
    """What the publication ledger says, read once per evaluation: every node of the conditions sees the same."""

    def __init__(self, sql: SqlResource):
        self.sql, self.read_at, self.read = sql, None, {}

    @cached_property
    def ledger(self) -> Ledger:
        from ingest_assets.records.publishing.review import Ledger  # SQLAlchemy: with the first evaluation

        return Ledger(self.sql.get_client())

    def _once(self, context: dg.AutomationContext, key: tuple, read: Callable[[], object]):
        if self.read_at != context.evaluation_time:
            self.read_at, self.read = context.evaluation_time, {}
        if key not in self.read:
            self.read[key] = read()
        return self.read[key]

    def latest(self, context: dg.AutomationContext) -> dict[str, tuple[date, datetime]]:
        """Provider -> (its newest published day, when it last published a day)."""
        return self._once(context, ("latest",), self.ledger.publications)

    def days(self, context: dg.AutomationContext, provider: str, after: datetime | None = None) -> list[date]:
        """The provider's published days (published after ``after``)."""
        return self._once(context, ("days", provider, after), lambda: self.ledger.published_days(provider, after))


class Published(dg.AutomationCondition):
    """True for the candidates that are published days (``newest``: each provider's newest published day); an
    unpartitioned target: once a day is published."""

    def __init__(self, publications: Publications, newest: bool):
        self.publications, self.newest = publications, newest
        super().__init__()

    @property
    def name(self) -> str:
        return "newest_published_day" if self.newest else "published_day"

    @staticmethod
    def subset(context: dg.AutomationContext, days: Iterable[tuple[str, date]]):
        """The candidates among ``days`` ((provider, day) pairs); an unpartitioned target: all of them when any."""
        keys = {str(partition_key(provider, day)) for provider, day in days}
        if context.partitions_def is None:
            return context.candidate_subset if keys else context.get_empty_subset()
        return context.candidate_subset.compute_intersection_with_partition_keys(
            {key for key in keys if context.partitions_def.has_partition_key(key)})  # a provider still registered

    def evaluate(self, context: dg.AutomationContext) -> dg.AutomationResult:
        latest = self.publications.latest(context)
        if self.newest or context.partitions_def is None:
            days = [(provider, day) for provider, (day, _) in latest.items()]
        else:  # the candidates here are the few days whose publication is remembered
            candidates = map(partition_parts, context.candidate_subset.expensively_compute_partition_keys())
            days = [(provider, day) for provider, day in candidates
                    if provider in latest and day in self.publications.days(context, provider)]
        return dg.AutomationResult(context, true_subset=self.subset(context, days))


class NewPublication(Published):
    """True, on the evaluation that first sees a provider publish, for the days it published since the previous
    evaluation (``newest``: for its newest published day instead); an unpartitioned target: when any provider
    published. The first evaluation only takes note: days published before automation are not exported by it."""

    @property
    def name(self) -> str:
        return "new_publication"

    def evaluate(self, context: dg.AutomationContext) -> dg.AutomationResult:
        latest = self.publications.latest(context)
        seen = {p: datetime.fromisoformat(at) for p, at in json.loads(context.cursor).items()} if context.cursor else None
        moved = [p for p, (_, at) in latest.items() if seen is not None and (p not in seen or at > seen[p])]
        if self.newest or context.partitions_def is None:
            days = [(p, latest[p][0]) for p in moved]
        else:
            days = [(p, day) for p in moved for day in self.publications.days(context, p, seen.get(p))]
        cursor = json.dumps({p: at.isoformat() for p, (_, at) in sorted(latest.items())})
        return dg.AutomationResult(context, true_subset=self.subset(context, days), cursor=cursor)


# the whole published state of the provider (the JSON-L) or of the hub (the sitemaps): the newest published day;
# one day's records (Wikimedia): each day published
NEWEST = {"jsonl_export": True, "wikimedia_records": False, "tag_sitemaps": True}


def after_publication(export: str, settings: Settings, sql: SqlResource) -> dict:
    """The ``dg.asset`` arguments that run ``export`` after a publication, once its inputs are not in progress and
    it is not running already (none when ``INGEST_AUTO_EXPORTS`` leaves it out). A publication is remembered until
    the export is requested or materialized on a later evaluation (one seen on the evaluation of a request or a
    materialization may be newer than what that export read: it is kept); a day no longer published by then (for
    the newest: no longer the newest) is not run. A request counts as handled: an export that fails (a refusal is
    final) is not tried again until the provider publishes again."""
    if export not in settings.auto_exports:
        return {}
    publications = Publications(sql)
    new = NewPublication(publications, NEWEST[export])
    handled = dg.AutomationCondition.newly_requested() | dg.AutomationCondition.newly_updated()
    condition = (new.since((handled & ~new).with_label("handled before it")) & Published(publications, NEWEST[export])
                 & ~dg.AutomationCondition.any_deps_in_progress()
                 & ~dg.AutomationCondition.in_progress()).with_label("after a publication")
    return {"automation_condition": condition, "tags": dict([CODE_SERVER_AUTOMATION])}


def exports_sensor() -> dg.AutomationConditionSensorDefinition:
    """Evaluates the exports' conditions in the code server every 30 s. A provider-day requested alone is one run
    (its JSON-L and Wikimedia exports together); several days of an export at once (a provider's first year
    published) are one backfill, 31 days a run (the exports' backfill policy), not a run each. Tagged
    ``ingest/trigger: publication``."""
    return dg.AutomationConditionSensorDefinition(
        "exports_automation_sensor", target=dg.AssetSelection.tag(*CODE_SERVER_AUTOMATION),
        default_status=dg.DefaultSensorStatus.RUNNING, use_user_code_server=True,
        run_tags={"ingest/trigger": "publication"},
        description="Runs jsonl_export, wikimedia_records and tag_sitemaps after a publication (INGEST_AUTO_EXPORTS)",
    )
