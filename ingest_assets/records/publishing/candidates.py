"""A provider's candidate index: a copy of what is live for it, with the run's days applied in order.

The copy comes from the provider's index behind the alias; a provider with none (its first publish, or an
index lost) is seeded from its published state in storage instead. Records under a takedown become
deletions on the way in. While records stream, the build keeps what the gates and the canary will check:
a sample of ids (some already there, some written now) and a few records this build added, changed or removed.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date

from ingest_assets.core.errors import ConfigError
from ingest_assets.records.indexing import IndexStats, SearchIndex, deletion_record
from ingest_assets.records.indexing.naming import parse_index

SAMPLE = 5  # ids of each kind (already there, written now) the fields gate reads
CANARY = 3  # records the canary looks for through the alias after the flip
POOL = 100  # first documents and deletions of a build considered for the canary


@dataclass
class Candidate:
    """A built, not yet promoted index of one provider, and what its gates and canary check."""

    name: str
    alias: str
    provider: str
    base: str | None  # the index it replaces (None: the provider had none)
    days: list[date]
    stats: dict[date, IndexStats] = field(default_factory=dict)
    figures: dict[str, int] = field(default_factory=dict)
    samples: list[str] = field(default_factory=list)
    canary: dict[str, dict | None] = field(default_factory=dict)  # id -> document expected (None: gone)


def live_indices(index: SearchIndex, alias: str) -> dict[str | None, list[str]]:
    """The indices behind ``alias`` by provider (None: indices of every provider, from before per-provider ones)."""
    live: dict[str | None, list[str]] = {}
    for name in index.aliased(alias):
        parsed = parse_index(alias, name)
        if parsed is not None:
            live.setdefault(parsed.provider, []).append(name)
    return live


def live_index(index: SearchIndex, alias: str, provider: str) -> str | None:
    """The provider's index behind ``alias`` (None when it has none). An alias still pointing at an index of
    every provider, or at several of this provider, is a ConfigError saying what to do."""
    live = live_indices(index, alias)
    if None in live:
        raise ConfigError(f"alias {alias!r} still points at {live[None]}, an index of every provider",
                          provider=provider, hint="materialize search_index_rebuild once: it splits it into "
                                                  "per-provider indices")
    mine = live.get(provider, [])
    if len(mine) > 1:
        raise ConfigError(f"alias {alias!r} points at several indices of the provider {mine}", provider=provider,
                          hint="keep one with `ingest-assets index rollback --to INDEX`")
    return mine[0] if mine else None


def without(records: Iterable[dict], suppressed: set[str]) -> Iterator[dict]:
    """``records`` with every document under a takedown turned into its deletion."""
    for record in records:
        if suppressed and not record.get("deleted") and record.get("id") in suppressed:
            yield deletion_record(record["id"])
        else:
            yield record


class _Watch:
    """Keeps, while records stream, what the gates and canary need (bounded: a few ids of each kind)."""

    def __init__(self, seed: str, watched: list[str]):
        self.random = random.Random(seed)
        self.watched = set(watched)  # ids already there, sampled before the days were applied
        self.removed: set[str] = set()
        self.written: list[str] = []  # reservoir of documents written
        self.seen = 0
        self.documents: list[str] = []  # the first POOL documents
        self.deletions: list[str] = []  # the first POOL deletions

    def __call__(self, records: Iterable[dict]) -> Iterator[dict]:
        for record in records:
            record_id = record.get("id") if isinstance(record, dict) else None
            if isinstance(record_id, str):
                self._see(record_id, bool(record.get("deleted")))
            yield record

    def _see(self, record_id: str, deleted: bool) -> None:
        if deleted:
            if record_id in self.watched:
                self.removed.add(record_id)
            if len(self.deletions) < POOL:
                self.deletions.append(record_id)
            return
        self.removed.discard(record_id)
        self.seen += 1
        if len(self.documents) < POOL:
            self.documents.append(record_id)
        if len(self.written) < SAMPLE:
            self.written.append(record_id)
        elif (slot := self.random.randrange(self.seen)) < SAMPLE:
            self.written[slot] = record_id


def build_candidate(
    index: SearchIndex,
    alias: str,
    provider: str,
    days: list[tuple[date, Iterable[dict]]],
    *,
    suppressed: set[str],
    seed: Iterable[dict] | None = None,
    fresh: bool = False,
) -> Candidate:
    """A new index of ``provider``: a copy of its live index (else ``seed``, its published state), then each
    day's IndexRecords in order; ``fresh``: no copy, ``seed`` (when given) and the days hold everything. A build
    that fails is dropped; one that completes is kept for its gates."""
    if fresh:
        mine = live_indices(index, alias).get(provider, [])
        base = mine[0] if len(mine) == 1 else None
    else:
        base = live_index(index, alias, provider)
    name = index.create_index(alias, provider)
    candidate = Candidate(name, alias, provider, base, [day for day, _ in days])
    try:
        figures = candidate.figures
        if base is not None:
            figures["base_count"] = index.count(base)
        if base is not None and not fresh:
            figures["copied"] = index.copy(base, name)
        elif seed is not None and (base is None or fresh):
            figures["seeded"] = index.write(name, without(seed, suppressed)).created
        figures["count_before"] = index.count(name)
        watch = _Watch(name, [doc["id"] for doc in index.search(name, "*", SAMPLE)])
        for day, records in days:
            candidate.stats[day] = index.write(name, watch(without(records, suppressed)))
        _totals(candidate)
        figures["count"] = index.count(name)
        candidate.samples = [i for i in sorted(watch.watched) if i not in watch.removed] + watch.written
        candidate.canary = _canary(index, candidate, watch)
    except BaseException:
        index.drop(name)
        raise
    return candidate


def _totals(candidate: Candidate) -> None:
    stats = list(candidate.stats.values())
    figures = candidate.figures
    figures["input"] = sum(s.reconciliation.input for s in stats)
    figures["written"] = sum(s.indexed for s in stats)
    figures["deleted"] = sum(s.removed for s in stats)
    figures["failed"] = sum(s.failed for s in stats)
    figures["expected"] = stats[-1].reconciliation.expected_count if stats else figures["count_before"]


def _canary(index: SearchIndex, candidate: Candidate, watch: _Watch) -> dict[str, dict | None]:
    """Up to CANARY records this build made differ from the index it replaces (added or changed documents,
    else removed ones), with what the alias must answer after the flip; a build that changed nothing watches
    a document that must still be found."""
    before = index.documents(candidate.base, watch.documents + watch.deletions) if candidate.base else {}
    after = index.documents(candidate.name, watch.documents)
    changed = [i for i in watch.documents if i in after and before.get(i) != after[i]]
    canary: dict[str, dict | None] = {i: after[i] for i in changed[:CANARY]}
    gone = [i for i in watch.deletions if i in before and i not in after]
    for record_id in gone[: CANARY - len(canary)]:
        canary[record_id] = None
    if not canary:
        canary = {doc["id"]: doc for doc in index.search(candidate.name, "*", 1)}
    return canary
