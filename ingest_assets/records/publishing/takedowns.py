"""Takedowns that stick: records kept out of the search index and the change feed until the takedown is undone.

A takedown removes the records from every index of their provider at once (the live one, and those kept for
rollback, so a rollback cannot bring them back), publishes them as ``deleted`` through the provider's change
feed, and records who, when and why. Every later publish turns them into deletions on the way in
(:func:`~ingest_assets.records.publishing.candidates.without`), so a re-harvest of the same record never
returns it. Undoing it puts the record's newest published version back.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy import Engine, select, update

from ingest_assets.core.errors import IngestError, NotFoundError, UsageError
from ingest_assets.records.indexing import SearchIndex, deletion_record
from ingest_assets.records.indexing.naming import parse_index
from ingest_assets.records.indexing.search_index import MAX_HITS, MAX_IDS
from ingest_assets.records.publishing.tables import create_tables, takedowns
from ingest_assets.resourcesync.feed import DOCUMENT_MIME, ChangeFeed, record_path
from ingest_assets.storage import layout
from ingest_assets.storage.activities import RecordSource
from ingest_assets.storage.backends import Storage

# a takedown by query refuses more matches than this: narrow the query (one more is asked for, to know; a search
# returns at most MAX_HITS)
MAX_QUERY_MATCHES = MAX_HITS - 1


@dataclass(frozen=True)
class Takedown:
    record_id: str
    provider: str
    local_id: str | None
    reason: str
    by: str
    at: datetime
    undone_at: datetime | None = None
    undone_by: str | None = None


@dataclass(frozen=True)
class Target:
    """A record to take down: its DPLA id, provider and (when known) the local id it was given as."""

    record_id: str
    provider: str
    local_id: str | None = None
    title: str = ""


@dataclass(frozen=True)
class Outcome:
    """What a takedown or an undo did to the live index: its count before and after, checked."""

    count_before: int
    count_after: int
    changed: int  # documents removed from (or put back into) the live indices
    feed: dict[str, int]

    @property
    def consistent(self) -> bool:
        return abs(self.count_before - self.count_after) == self.changed


class Takedowns:
    def __init__(self, engine: Engine):
        self.engine = create_tables(engine)

    def active(self, provider: str | None = None) -> dict[str, Takedown]:
        query = select(takedowns).where(takedowns.c.undone_at.is_(None))
        if provider:
            query = query.where(takedowns.c.provider == provider)
        with self.engine.connect() as conn:
            return {row["record_id"]: _takedown(row) for row in conn.execute(query.order_by(takedowns.c.id)).mappings()}

    def suppressed(self, provider: str) -> set[str]:
        """The DPLA ids of ``provider`` kept out of the index."""
        return set(self.active(provider))

    def history(self) -> list[Takedown]:
        with self.engine.connect() as conn:
            return [_takedown(row) for row in conn.execute(select(takedowns).order_by(takedowns.c.id)).mappings()]

    def add(self, targets: Sequence[Target], reason: str, by: str, at: datetime) -> None:
        with self.engine.begin() as conn:
            for target in targets:
                conn.execute(takedowns.insert().values(record_id=target.record_id, provider=target.provider,
                                                       local_id=target.local_id, reason=reason, by=by, at=at))

    def undo(self, record_id: str, by: str, at: datetime) -> Takedown:
        current = self.active().get(record_id)
        if current is None:
            raise NotFoundError("no takedown of this record is in force", record=record_id,
                                hint="see `ingest-assets takedown --list`")
        with self.engine.begin() as conn:
            conn.execute(update(takedowns).where(takedowns.c.record_id == record_id, takedowns.c.undone_at.is_(None))
                         .values(undone_at=at, undone_by=by))
        return current


def _takedown(row) -> Takedown:
    return Takedown(row["record_id"], row["provider"], row["local_id"], row["reason"], row["by"], row["at"],
                    row["undone_at"], row["undone_by"])


def resolve(index: SearchIndex, alias: str, ids: Sequence[str], providers: Mapping[str, Callable[[str], str]]
            ) -> list[Target]:
    """The live records ``ids`` name: each a DPLA id, or a local id of one of ``providers`` (name -> its minter,
    ``local id -> DPLA id``, as its mapper mints them). An id the live index does not hold is a NotFoundError."""
    live = _live_by_provider(index, alias)
    found: dict[str, Target] = {}
    for provider, name in live.items():
        if provider not in providers:
            continue
        mint = providers[provider]
        minted = {mint(i): i for i in ids}
        for start in range(0, len(ids), MAX_IDS // 2):
            chunk = ids[start:start + MAX_IDS // 2]
            held = index.documents(name, [*chunk, *(mint(i) for i in chunk)])
            for record_id, document in held.items():
                given = minted.get(record_id, record_id)
                found.setdefault(given, Target(record_id, provider, given if given != record_id else None,
                                               _title(document)))
    unknown = [i for i in ids if i not in found]
    if unknown:
        raise NotFoundError(f"not in the live index {alias!r} as a DPLA id or a local id of "
                            f"{', '.join(providers) or 'any provider'}", record=", ".join(unknown[:5]),
                            hint="check the id (`ingest-assets search`), or name its provider with --provider")
    return [found[i] for i in ids]


def matching(index: SearchIndex, alias: str, provider: str, query: str) -> list[Target]:
    """The provider's live records matching ``query`` (at most MAX_QUERY_MATCHES: refuses more)."""
    name = _live_by_provider(index, alias).get(provider)
    if name is None:
        raise NotFoundError(f"nothing of the provider is live in {alias!r}", provider=provider,
                            hint="see `ingest-assets index status`")
    hits = index.search(name, query, MAX_QUERY_MATCHES + 1)
    if len(hits) > MAX_QUERY_MATCHES:
        raise UsageError(f"more than {MAX_QUERY_MATCHES} records match {query!r}", provider=provider,
                         hint="narrow the query")
    return [Target(doc["id"], provider, None, _title(doc)) for doc in hits]


def take_down(index: SearchIndex, alias: str, store: Takedowns, targets: Sequence[Target], reason: str, by: str,
              at: datetime, feed_of: Callable[[str], ChangeFeed | None]) -> Outcome:
    """Remove ``targets`` from every index of their providers, publish them as deleted and record the takedown."""
    already = store.active()
    fresh = [t for t in targets if t.record_id not in already]
    before = index.count(alias)
    removed, feeds = 0, {"deleted": 0, "unchanged": 0}
    for provider, group in _by_provider(fresh).items():
        removed += _delete_everywhere(index, alias, provider, [t.record_id for t in group])
        feed = feed_of(provider)
        for target in group if feed else ():
            feeds[feed.delete(record_path(target.record_id), at)] += 1
    store.add(fresh, reason, by, at)
    return Outcome(before, index.count(alias), removed, feeds)


def undo(index: SearchIndex, alias: str, store: Takedowns, record_id: str, by: str, at: datetime,
         newest: Callable[[str, str], dict | None], feed_of: Callable[[str], ChangeFeed | None]) -> Outcome:
    """Lift the takedown of ``record_id`` and put its newest published version (``newest(provider, id)``, an
    IndexRecord or None) back into the provider's live index and change feed."""
    lifted = store.undo(record_id, by, at)
    before = index.count(alias)
    record = newest(lifted.provider, record_id)
    live = _live_by_provider(index, alias).get(lifted.provider)
    restored, feeds = 0, {"created": 0, "updated": 0, "unchanged": 0}
    if record is not None and not record.get("deleted") and live is not None:
        restored = index.write(live, [record]).created
        feed = feed_of(lifted.provider)
        if feed is not None:
            feeds[feed.put(record_path(record_id), record["document"].encode("utf-8"), at, DOCUMENT_MIME)] += 1
    return Outcome(before, index.count(alias), restored, feeds)


def newest_published(storage: Storage, provider: str, record_id: str, excluded: Collection[date]) -> dict | None:
    """The newest IndexRecord of ``record_id`` in the provider's indexing outputs of days not ``excluded``
    (newest output first, parts streamed, stopping at the first hit); None when none holds it."""
    for output in reversed(layout.complete_outputs(storage, provider, "indexing")):
        if output.day in excluded:
            continue
        for record in RecordSource(storage, output):
            if record["id"] == record_id:
                return record
    return None


def _delete_everywhere(index: SearchIndex, alias: str, provider: str, ids: list[str]) -> int:
    """Delete ``ids`` from each index of ``provider``; returns how many the live one held."""
    removed = 0
    for physical in index.indices(alias):
        if physical.provider != provider:
            continue
        stats = index.write(physical.name, [deletion_record(i) for i in ids])
        if not stats.reconciliation.ok:
            raise IngestError(f"takedown in {physical.name}: {stats.reconciliation}", provider=provider)
        removed += stats.removed if physical.aliased else 0
    return removed


def _live_by_provider(index: SearchIndex, alias: str) -> dict[str, str]:
    live = {}
    for name in index.aliased(alias):
        parsed = parse_index(alias, name)
        if parsed is not None and parsed.provider:
            live[parsed.provider] = name
    return live


def _by_provider(targets: Iterable[Target]) -> dict[str, list[Target]]:
    groups: dict[str, list[Target]] = {}
    for target in targets:
        groups.setdefault(target.provider, []).append(target)
    return groups


def _title(document: dict) -> str:
    titles = (document.get("sourceResource") or {}).get("title") or []
    return " / ".join(titles)[:120]
