"""Status at a glance, as small models others render: the command line prints them as text or JSON, the
``hub_status`` asset draws the status page from :func:`hub_overview`.

:func:`hub_overview`: the operations overview (per registry entry its days with their counts, the last good day,
the last failure, a registry problem) with publishing's columns filled in: what the live index holds for each
provider and its review state. It is the one source of both the status page and ``ingest-assets status``.
:func:`provider_statuses`: per record provider, that overview and the rest of publishing's view: its live and
kept indices, the days still waiting, takedowns in force, each day's publication state.
:func:`index_status`: the alias, the indices behind it, those kept for rollback with their counts, and the
latest alias actions.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from typing import Any

from ingest_assets.core.errors import IngestError
from ingest_assets.core.registry import Registry
from ingest_assets.operations.overview import WINDOW_DAYS, HubOverview, ProviderOverview, build_overview
from ingest_assets.records.indexing import PhysicalIndex, SearchIndex
from ingest_assets.records.publishing.journal import Action, Journal
from ingest_assets.records.publishing.review import DayState, Ledger
from ingest_assets.records.publishing.takedowns import Takedowns
from ingest_assets.storage import layout
from ingest_assets.storage.backends import Storage
from ingest_assets.storage.manifest import Manifest


@dataclass
class IndexEntry:
    name: str
    count: int | None  # None: the index does not answer a count
    created: str
    role: str  # live | kept | candidate (newer than the live one, not promoted) | refused | rolled_back


@dataclass
class IndexStatus:
    alias: str
    targets: list[str]
    count: int
    providers: dict[str, list[IndexEntry]]  # provider ("*": indices of every provider) -> its indices, newest first
    actions: list[Action]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ProviderStatus:
    overview: ProviderOverview
    live_index: str | None
    live_count: int | None
    kept_indices: list[str]
    review: DayState | None  # the newest day's
    waiting: list[DayState]  # days held for review, or approved and not yet published
    takedowns: int
    publication: dict[date, str] = field(default_factory=dict)  # day -> its state on the way to the public
    wikimedia: dict[date, int] = field(default_factory=dict)  # day -> records its newest Wikimedia export holds

    @property
    def provider(self) -> str:
        return self.overview.name

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values: the provider's facts, and its days with data (newest first) with their state."""
        view = self.overview
        return {
            "provider": view.name, "label": view.label, "problem": view.problem,
            "last_harvest": view.days[-1].day.isoformat() if view.days else None,
            "last_good_day": view.last_good_day.isoformat() if view.last_good_day else None,
            "last_failure": json.loads(view.last_failure.to_json()) if view.last_failure else None,
            "live_index": self.live_index, "live_count": self.live_count, "kept_indices": self.kept_indices,
            "review": _state(self.review), "waiting": [_state(s) for s in self.waiting], "takedowns": self.takedowns,
            "history": [{**c.as_table_row(), "publication": self.publication.get(c.day),
                         "wikimedia_eligible": self.wikimedia.get(c.day)} for c in reversed(view.days)],
        }


@dataclass
class HubStatus:
    """What ``ingest-assets status`` shows: the registry's problems (a file that no longer loads, refused
    entries), then each record provider's status."""

    registry: str  # the registry file
    registry_problems: list[str]
    providers: list[ProviderStatus]

    def to_dict(self) -> dict[str, Any]:
        return {"registry": self.registry, "registry_problems": self.registry_problems,
                "providers": [p.to_dict() for p in self.providers]}

    def text(self, days: int = 7) -> str:
        lines = [f"registry {self.registry}: {len(self.registry_problems)} problem(s)",
                 *(f"  {problem}" for problem in self.registry_problems)] if self.registry_problems else []
        blocks = ["\n".join(lines)] if lines else []
        blocks += [status_text(p, days) for p in self.providers] or ["no record providers in the registry"]
        return "\n\n".join(blocks)


def index_status(index: SearchIndex, journal: Journal, alias: str, actions: int = 10) -> IndexStatus:
    physical = index.indices(alias)
    targets = index.aliased(alias)
    providers: dict[str, list[IndexEntry]] = {}
    for group in sorted({i.provider or "*" for i in physical}):
        mine = [i for i in physical if (i.provider or "*") == group]
        live = max((i.created for i in mine if i.aliased), default=None)
        entries = []
        for i in sorted(mine, key=lambda i: i.created, reverse=True):
            state = journal.state_of(i.name)
            if i.aliased:
                role = "live"
            elif state in ("refused", "rolled_back"):
                role = state
            elif live is not None and i.created > live:
                role = "candidate"
            else:
                role = "kept"
            entries.append(IndexEntry(i.name, i.count, i.created.isoformat(), role))
        providers[group] = entries
    count = index.count(alias) if targets else 0
    return IndexStatus(alias, targets, count, providers, journal.actions(alias, limit=actions))


def live_counts(index: SearchIndex, alias: str) -> dict[str, tuple[str, int | None]]:
    """Per provider, its index behind ``alias`` and that index's document count."""
    return {i.provider: (i.name, i.count) for i in _physical(index, alias) if i.aliased and i.provider}


def review_states(engine) -> dict[str, str]:
    """Per provider, its newest day's state on the way to the public (``2026-01-15 pending``)."""
    return {state.provider: f"{state.day.isoformat()} {state.state.replace('_', ' ')}"
            for state in Ledger(engine).newest_days()}


def hub_overview(storage: Storage, index: SearchIndex, alias: str, engine, registry: Registry, now: datetime,
                 days: int = WINDOW_DAYS) -> HubOverview:
    """The hub overview of every registry entry over ``days`` days, with the records each provider has live in
    the index behind ``alias`` and its review state."""
    return _overview(storage, registry, now, days, live_counts(index, alias), review_states(engine))


def _overview(storage: Storage, registry: Registry, now: datetime, days: int, live: dict[str, tuple[str, int | None]],
              states: dict[str, str]) -> HubOverview:
    return build_overview(storage, registry, now, days, live_in_index=lambda p: live.get(p, (None, None))[1],
                          review_state=states.get)


def _physical(index: SearchIndex, alias: str) -> list[PhysicalIndex]:
    """The physical indices of ``alias`` ([] when the backend does not answer: a status never fails for it)."""
    try:
        return index.indices(alias)
    except IngestError:
        return []


def provider_statuses(storage: Storage, index: SearchIndex, alias: str, engine, registry: Registry, now: datetime,
                      days: int = 7, only: str | None = None) -> HubStatus:
    """Everything a hub contact asks about each record provider (or ``only`` one), over its last ``days`` days
    with data, from storage, the database and the search index; and the registry's problems."""
    physical = _physical(index, alias)
    live = {i.provider: (i.name, i.count) for i in physical if i.aliased and i.provider}
    kept: dict[str, list[str]] = {}
    for i in physical:
        if not i.aliased and i.provider:
            kept.setdefault(i.provider, []).append(i.name)
    overview = _overview(storage, registry, now, days, live, review_states(engine))
    ledger, takedowns = Ledger(engine), Takedowns(engine).active()
    statuses = []
    for provider in overview.providers:
        if (only and provider.name != only) or ("records" not in provider.capabilities and not provider.problem):
            continue
        history = ledger.history(provider.name, days * 4)
        statuses.append(ProviderStatus(
            overview=provider,
            live_index=live.get(provider.name, (None, None))[0],
            live_count=provider.live_in_index,
            kept_indices=kept.get(provider.name, []),
            review=history[0] if history else None,
            waiting=ledger.waiting(provider.name),
            takedowns=sum(1 for t in takedowns.values() if t.provider == provider.name),
            publication={state.day: state.state for state in history},
            wikimedia=wikimedia_eligible(storage, provider.name, [c.day for c in provider.days]),
        ))
    return HubStatus(registry.source, list(overview.registry_notes), statuses)


def wikimedia_eligible(storage: Storage, provider: str, days: list[date]) -> dict[date, int]:
    """Per day, the records eligible for Wikimedia Commons its newest export holds (days not exported: absent)."""
    found = {}
    for day in days:
        exports = layout.wiki_outputs(storage, provider, day)
        if exports:
            found[day] = Manifest.from_bytes(storage.read_bytes(f"{exports[-1]}/{layout.MANIFEST}")).record_count
    return found


def status_text(status: ProviderStatus, days: int = 7) -> str:
    """The status as the lines a person reads."""
    view = status.overview
    lines = [f"{view.name} ({view.label})"]
    if view.problem:
        lines.append(f"  REFUSED        {view.problem}")
    if view.days:
        c = view.days[-1]
        lines.append(f"  last harvest   {c.day.isoformat()}: {c.harvested} harvested ({c.harvest_deleted} deleted, "
                     f"{c.harvest_failed} unreadable), {c.mapped} mapped ({c.mapping_failed} failed), {c.enriched} "
                     f"enriched, {c.indexed} indexed ({c.index_deletions} deletions, {c.absent} absent)")
    else:
        lines.append("  last harvest   never")
    if status.live_index:
        lines.append(f"  live index     {status.live_index}: {status.live_count} documents"
                     + (f" ({len(status.kept_indices)} kept for rollback)" if status.kept_indices else ""))
    else:
        lines.append("  live index     nothing published")
    lines.append(f"  review         {status.review.describe() if status.review else 'no day registered'}")
    lines += [f"  waiting        {state.describe()}" for state in status.waiting]
    failure = view.last_failure
    lines.append(f"  last failure   {_failure(failure) if failure else 'none recorded'}")
    lines.append(f"  takedowns      {status.takedowns} in force")
    shown = list(reversed(view.days))[:days]
    if shown:
        lines.append("  history        day         harvested  mapped  indexed  wikimedia  publication")
        lines += [f"                 {c.day.isoformat()}  {c.harvested:>9}  {c.mapped:>6}  {c.indexed:>7}  "
                  f"{status.wikimedia.get(c.day, '-'):>9}  {status.publication.get(c.day, '-').replace('_', ' ')}"
                  for c in shown]
    return "\n".join(lines)


def _state(state: DayState | None) -> dict[str, Any] | None:
    return json.loads(json.dumps(asdict(state), default=str)) if state else None


def _failure(failure) -> str:
    day = f" (day {failure.days_text})" if failure.days_text else ""
    message = failure.message.splitlines()[0] if failure.message else ""
    return f"{failure.when.isoformat(timespec='seconds')}{day} in {failure.stage}: {message} ({failure.run_url})"
