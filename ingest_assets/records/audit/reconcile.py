"""Counts that reconcile across the record stages of one provider and day (what the blocking checks judge).

    harvest:  records the source announced (OAI-PMH ``completeListSize``) = harvested + unreadable + duplicates
    mapping:  harvested = mapped + mapping failures + deletions
    indexing: enriched + harvest deletions + absences = index documents + index deletions (IndexRecords written)

The counts come from the ``_MANIFEST`` files. Only when they disagree are the outputs read, to name the ids
that went missing: the id sets live in a temporary SQLite file, so memory stays flat at any size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import date
from itertools import chain

from ingest_assets.records.harvest.original import SeenIds
from ingest_assets.records.mapping import mapper_for, minter_for
from ingest_assets.core.registry import ProviderEntry
from ingest_assets.records.indexing.absences import Absences
from ingest_assets.storage import layout
from ingest_assets.storage.activities import RecordSource, latest_source
from ingest_assets.storage.backends import Storage

MAX_MISSING = 20  # missing ids named in a result (all are counted)


@dataclass(frozen=True)
class Balance:
    """One stage's books: the terms of ``left`` must add up to those of ``right``; ``missing`` names ids lost."""

    stage: str
    provider: str
    day: date
    left: tuple[tuple[str, int], ...]
    right: tuple[tuple[str, int], ...]
    missing: tuple[str, ...] = ()
    missing_count: int = 0

    @property
    def balanced(self) -> bool:
        return sum(n for _, n in self.left) == sum(n for _, n in self.right)

    def equation(self) -> str:
        left, right = (" + ".join(f"{name} {n}" for name, n in side) for side in (self.left, self.right))
        return f"{left} {'=' if self.balanced else '≠'} {right}"

    def describe(self) -> str:
        text = f"{self.stage} of {self.provider} on {self.day.isoformat()}: {self.equation()}"
        if self.missing_count:
            more = f" (first {len(self.missing)})" if self.missing_count > len(self.missing) else ""
            text += f"; {self.missing_count} missing id(s){more}: {', '.join(self.missing)}"
        return text


def _summary(source: RecordSource | None, key: str) -> int:
    return int(source.manifest().extra.get(f"Summary {key}", 0)) if source else 0


def _deletions(harvest: RecordSource) -> int:
    """Records the harvest marked deleted: its summary's count, or counted in its output when it has none (a
    harvest output written by other software)."""
    summary = harvest.manifest().extra
    if "Summary deleted" in summary:
        return int(summary["Summary deleted"])
    return sum(1 for record in harvest if record["deleted"])


def _count(source: RecordSource | None) -> int:
    return source.manifest().record_count if source else 0


def harvest_balance(storage: Storage, provider: str, day: date) -> Balance | None:
    """The harvest against the size its source announced; None when the source announced none."""
    harvest = latest_source(storage, provider, "harvest", day)
    if harvest is None or "Summary expected" not in harvest.manifest().extra:
        return None
    return Balance(
        "harvest", provider, day, (("announced", _summary(harvest, "expected")),),
        (("harvested", _count(harvest)), ("unreadable", _summary(harvest, "failed")),
         ("duplicates", _summary(harvest, "duplicates"))),
    )


def mapping_balance(storage: Storage, entry: ProviderEntry, day: date) -> Balance | None:
    """Harvested = mapped + failures + deletions, against the harvest the mapping read. A harvested, undeleted
    record not in the mapping output is missing unless mapping it again fails (a failure is accounted for; a
    record that maps was lost)."""
    provider = entry.name
    mapping = latest_source(storage, provider, "mapping", day)
    inputs = _inputs(mapping) if mapping else []
    if len(inputs) != 1:
        return None
    [harvest] = inputs
    balance = Balance(
        "mapping", provider, day, (("harvested", _count(harvest)),),
        (("mapped", _count(mapping)), ("mapping failures", _summary(mapping, "failed")),
         ("deletions", _summary(mapping, "deleted"))),
    )
    if balance.balanced:
        return balance
    mapper = mapper_for(entry)
    mapped = (record["id"] for record in mapping)
    unmapped = _absent((r for r in harvest if not r["deleted"]), mapped, lambda r: mapper.mint(r["id"]))
    lost = (mapper.mint(r["id"]) for r in unmapped if mapper.map(r).record is not None)
    return _with_missing(balance, lost)


def indexing_balance(storage: Storage, entry: ProviderEntry, day: date) -> Balance | None:
    """Enriched + harvest deletions + absences (records a full harvest no longer holds) = IndexRecords written
    (documents and deletions), against the outputs the indexing read; missing ids are those of enriched records,
    harvest deletions and absences without an IndexRecord."""
    provider = entry.name
    indexing = latest_source(storage, provider, "indexing", day)
    inputs = _inputs(indexing) if indexing else []
    if len(inputs) != 2:
        return None
    enrichment, harvest = inputs
    balance = Balance(
        "indexing", provider, day,
        (("enriched", _count(enrichment)), ("harvest deletions", _deletions(harvest)),
         ("absences", _summary(indexing, "absent"))),
        (("index documents and deletions", _count(indexing)),),
    )
    if balance.balanced:
        return balance
    mint = minter_for(entry)
    wanted = chain((r["id"] for r in enrichment), (mint(r["id"]) for r in harvest if r["deleted"]),
                   (mint(i) for i in Absences(harvest).ids()))
    return _with_missing(balance, _absent(wanted, (r["id"] for r in indexing), lambda key: key))


def _inputs(source: RecordSource) -> list[RecordSource]:
    """The outputs ``source`` was made from, as its ``_MANIFEST`` names them (its own books, not the newest)."""
    return [RecordSource(source.storage, layout.parse_output(key)) for key in source.manifest().inputs]


def _absent(items: Iterable, present: Iterable[str], key: Callable) -> Iterator:
    """The ``items`` whose ``key`` is not among ``present`` (held in a temporary SQLite set)."""
    seen = SeenIds()
    try:
        for record_id in present:
            seen.add(record_id)
        for item in items:
            if seen.add(key(item)):
                yield item
    finally:
        seen.close()


def _with_missing(balance: Balance, lost: Iterable[str]) -> Balance:
    first: list[str] = []
    count = 0
    for record_id in lost:
        count += 1
        if len(first) < MAX_MISSING:
            first.append(record_id)
    return replace(balance, missing=tuple(first), missing_count=count)

