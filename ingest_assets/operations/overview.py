"""The hub overview: per provider what its days did and how it stands, built from the storage layout alone
(``_MANIFEST`` counts, the recorded last failure) and the registry. The model is separate from its renderings
(:mod:`.page`, the ``hub_status`` asset's table)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from ingest_assets.core.registry import CAPABILITY_KEYS, Registry
from ingest_assets.operations.failures import Failure, last_failure
from ingest_assets.operations.registry_health import registry_problems
from ingest_assets.storage.counts import DayCounts, day_counts
from ingest_assets.storage import layout
from ingest_assets.storage.backends import Storage

WINDOW_DAYS = 90


@dataclass(frozen=True)
class ProviderOverview:
    name: str
    label: str
    capabilities: tuple[str, ...]
    days: tuple[DayCounts, ...]  # the days with data inside the window, oldest first
    last_good_day: date | None  # the newest day indexed
    last_failure: Failure | None
    live_in_index: int | None = None  # records of the provider in the live index (None: not known)
    review_state: str | None = None  # the provider's review state (None: none recorded)
    problem: str | None = None  # why the registry refused the entry


@dataclass(frozen=True)
class HubOverview:
    generated: datetime
    window: tuple[date, date]  # first and last day the counts cover
    providers: tuple[ProviderOverview, ...]
    registry_notes: tuple[str, ...] = field(default_factory=tuple)


def build_overview(storage: Storage, registry: Registry, now: datetime, days: int = WINDOW_DAYS,
                   live_in_index: Callable[[str], int | None] = lambda provider: None,
                   review_state: Callable[[str], str | None] = lambda provider: None) -> HubOverview:
    """The overview of every registry entry (refused ones included, with their problem) over the ``days`` days
    that end with the newest day any record provider has data for (today when none has)."""
    record_providers = set(registry.providers_of("records"))
    harvested = {p: layout.output_days(storage, p, "harvest") for p in record_providers}
    last = max((d[-1] for d in harvested.values() if d), default=now.date())
    first = last - timedelta(days=days - 1)
    providers = []
    for name in sorted({*registry, *registry.problems}):
        if name in registry.problems:
            providers.append(ProviderOverview(name, name, (), (), None, last_failure(storage, name),
                                              problem=str(registry.problems[name])))
            continue
        entry = registry[name]
        capabilities = tuple(c for c, key in CAPABILITY_KEYS.items() if entry.has(key))
        counted = tuple(c for d in harvested.get(name, []) if first <= d <= last and (c := day_counts(storage, name, d)))
        last_good = next((d for d in reversed(layout.output_days(storage, name, "indexing"))
                          if layout.latest_output(storage, name, "indexing", d)), None)
        providers.append(ProviderOverview(
            name, entry.label, capabilities, counted, last_good, last_failure(storage, name),
            live_in_index(name), review_state(name),
        ))
    return HubOverview(now, (first, last), tuple(providers), tuple(registry_problems(registry)))
