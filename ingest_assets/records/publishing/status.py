"""Status at a glance, as small models others can render (the command line prints them as text or JSON).

:func:`provider_status`: per provider, the last harvest day and its counts, the last failure with its stage and
message, the review state, what the live index holds for it, takedowns in force and the last days' history.
:func:`index_status`: the alias, the indices behind it, those kept for rollback with their counts, and the
latest alias actions.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from ingest_assets.records.audit.counts import DayCounts, day_counts
from ingest_assets.records.indexing import SearchIndex
from ingest_assets.records.publishing.journal import Action, Failure, Journal
from ingest_assets.records.publishing.review import DayState, Ledger
from ingest_assets.records.publishing.takedowns import Takedowns
from ingest_assets.storage import layout
from ingest_assets.storage.backends import Storage


@dataclass
class IndexEntry:
    name: str
    count: int
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
    provider: str
    label: str
    last_harvest: date | None
    counts: DayCounts | None
    last_failure: Failure | None
    review: DayState | None  # the newest day's
    waiting: list[DayState]  # days held for review or approved and not yet published
    live_index: str | None
    live_count: int | None
    kept_indices: list[str]
    takedowns: int
    history: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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


def provider_status(storage: Storage, index: SearchIndex, alias: str, engine, provider: str, label: str,
                    today: date, days: int = 7) -> ProviderStatus:
    """Everything a hub contact asks about ``provider``, from storage, the database and the search index."""
    harvests = layout.complete_outputs(storage, provider, "harvest")
    last = harvests[-1].day if harvests else None
    ledger = Ledger(engine)
    decided = {state.day: state for state in ledger.history(provider, days * 4)}
    history = []
    for n in range(days):
        day = today - timedelta(days=n)
        counts = day_counts(storage, provider, day)
        if counts is None and day not in decided:
            continue
        row = asdict(counts) if counts else {"provider": provider, "day": day}
        row["publication"] = decided[day].state if day in decided else None
        history.append(row)
    physical = [i for i in index.indices(alias) if i.provider == provider]
    live = next((i for i in physical if i.aliased), None)
    return ProviderStatus(
        provider=provider,
        label=label,
        last_harvest=last,
        counts=day_counts(storage, provider, last) if last else None,
        last_failure=Journal(engine).last_failure(provider),
        review=ledger.history(provider, 1)[0] if ledger.history(provider, 1) else None,
        waiting=ledger.waiting(provider),
        live_index=live.name if live else None,
        live_count=live.count if live else None,
        kept_indices=[i.name for i in physical if not i.aliased],
        takedowns=len(Takedowns(engine).active(provider)),
        history=history,
    )


def status_text(status: ProviderStatus) -> str:
    """The status as the lines a person reads."""
    lines = [f"{status.provider} ({status.label})"]
    if status.last_harvest and status.counts:
        c = status.counts
        lines.append(f"  last harvest   {status.last_harvest.isoformat()}: {c.harvested} harvested ({c.harvest_deleted} "
                     f"deleted, {c.harvest_failed} unreadable), {c.mapped} mapped ({c.mapping_failed} failed), "
                     f"{c.enriched} enriched, {c.indexed} indexed ({c.absent} absent)")
    else:
        lines.append("  last harvest   never")
    if status.live_index:
        lines.append(f"  live index     {status.live_index}: {status.live_count} documents"
                     + (f" ({len(status.kept_indices)} kept for rollback)" if status.kept_indices else ""))
    else:
        lines.append("  live index     nothing published")
    lines.append(f"  review         {status.review.describe() if status.review else 'no day registered'}")
    for state in status.waiting:
        lines.append(f"  waiting        {state.describe()}")
    failure = status.last_failure
    lines.append(f"  last failure   {_failure(failure) if failure else 'none recorded'}")
    lines.append(f"  takedowns      {status.takedowns} in force")
    if status.history:
        lines.append("  history        day         harvested  mapped  indexed  publication")
        for row in status.history:
            lines.append(f"                 {row['day'].isoformat()}  {row.get('harvested', '-'):>9}  "
                         f"{row.get('mapped', '-'):>6}  {row.get('indexed', '-'):>7}  {row['publication'] or '-'}")
    return "\n".join(lines)


def _failure(failure: Failure) -> str:
    when = failure.at.isoformat(timespec="seconds") if isinstance(failure.at, datetime) else failure.at
    day = f" (day {failure.day.isoformat()})" if failure.day else ""
    return f"{when}{day} in {failure.stage}: {failure.message.splitlines()[0] if failure.message else ''}"
