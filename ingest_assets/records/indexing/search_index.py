"""The search index as both backends (Elasticsearch, embedded SQLite FTS) offer it.

A backend implements the primitives (abstract methods): physical indices named by :mod:`.naming`, written,
copied, read and listed, and an alias whose update is one atomic action that names the indices it expects to
replace. ``apply`` and ``full_build`` are made of them here, once for every backend; gates, promotion and
rollback live in :mod:`ingest_assets.records.publishing`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ingest_assets.core.errors import IngestError
from ingest_assets.records.indexing.naming import check_alias
from ingest_assets.records.indexing.results import DEFAULT_MAX_FAILURE_RATE, IndexBuildRefused, IndexStats

MAX_IDS = 1000  # ids per ``documents`` call
# hits per ``search`` call: the servers refuse a page past ``index.max_result_window`` (10,000 by default and in the
# schema) with HTTP 400; the embedded backend keeps the same bound, so a caller sized for one works on every backend
MAX_HITS = 10_000
TAG_PAGE = 1000  # documents per page of a ``tagged`` scan


def check_hits(size: int) -> None:
    """A ``search`` size every backend answers (1 to :data:`MAX_HITS`), else ValueError."""
    if not 0 < size <= MAX_HITS:
        raise ValueError(f"a search returns 1 to {MAX_HITS} hits, not {size}")


@dataclass(frozen=True)
class PhysicalIndex:
    """One physical index of an alias: its provider (None: an index of every provider), build time, document
    count (None: the index does not answer one, a damaged file) and whether the alias points at it now."""

    name: str
    provider: str | None
    created: datetime
    count: int | None
    aliased: bool


@dataclass(frozen=True)
class IndexHealth:
    """Whether an index can serve: ``status`` green/yellow/red as Elasticsearch says it, ``ok`` the verdict
    (every shard the cluster can place is assigned), ``evidence`` the figures behind it."""

    ok: bool
    status: str
    evidence: dict[str, Any] = field(default_factory=dict)


class AliasChanged(IngestError):
    """An alias update named an index the alias no longer points at (another flip got there first)."""


class SearchIndex(ABC):
    """IndexRecords in physical indices behind an alias, which is what readers query."""

    # -- primitives every backend implements ------------------------------------------------------------

    @abstractmethod
    def create_index(self, alias: str, provider: str | None = None) -> str:
        """A new, empty physical index ``<alias>-[<provider>-]<yyyymmddhhmmss>`` (not behind the alias)."""

    @abstractmethod
    def write(self, index: str, records: Iterable[dict]) -> IndexStats:
        """Upsert and delete (``deleted=True``) records in the physical ``index``, then make them searchable.
        A malformed or refused document is counted and reported, never fatal; the stats reconcile the input
        against the index's count before and after."""

    @abstractmethod
    def copy(self, source: str, target: str) -> int:
        """Copy every document of physical index ``source`` into the new, empty ``target`` (memory bounded by a page);
        returns the number copied. A document that cannot be copied is an error: a copy is exact or fails."""

    @abstractmethod
    def count(self, target: str) -> int:
        """Documents behind an alias or in a physical index."""

    @abstractmethod
    def search(self, target: str, query: str, size: int = 10) -> list[dict]:
        """At most ``size`` (at most :data:`MAX_HITS`) documents matching all words of ``query``, best first;
        '' or '*' matches all."""

    @abstractmethod
    def documents(self, target: str, ids: Sequence[str]) -> dict[str, dict]:
        """The documents (id -> document) of those ``ids`` (at most :data:`MAX_IDS`) that the alias or
        physical index ``target`` holds."""

    @abstractmethod
    def tagged(self, target: str, tags: Sequence[str]) -> Iterator[tuple[str, list[str]]]:
        """``(id, which of tags it carries)`` for every document behind the alias or physical index ``target`` whose
        ``tags`` hold one of ``tags``, by id; read in pages of :data:`TAG_PAGE` from one snapshot of the index (a point
        in time, a read transaction), so memory stays bounded by a page and a flip meanwhile changes nothing."""

    @abstractmethod
    def indices(self, alias: str) -> list[PhysicalIndex]:
        """Every physical index named for ``alias``, oldest first, with its count and whether it is aliased."""

    @abstractmethod
    def aliased(self, alias: str) -> list[str]:
        """The physical indices ``alias`` points at now (sorted; empty when it points nowhere)."""

    @abstractmethod
    def update_alias(self, alias: str, add: Sequence[str] = (), remove: Sequence[str] = ()) -> None:
        """In one atomic action, point ``alias`` also at ``add`` and no longer at ``remove``. Every index of
        ``remove`` must be behind the alias when the action runs, else nothing changes and
        :class:`AliasChanged` is raised: naming what it replaces, a flip never races another."""

    @abstractmethod
    def drop(self, index: str) -> None:
        """Delete the physical ``index`` (nothing when it does not exist)."""

    @abstractmethod
    def health(self, index: str) -> IndexHealth:
        """Whether the physical ``index`` can serve (cluster and shard state, or file integrity)."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections (nothing to do for a backend that opens them per call)."""

    # -- made of the primitives -------------------------------------------------------------------------

    def apply(self, alias: str, records: Iterable[dict]) -> IndexStats:
        """Upsert and delete records in the one index behind ``alias`` (one is created behind it if missing)."""
        targets = self.aliased(check_alias(alias))
        if len(targets) > 1:
            raise IngestError(f"alias {alias!r} points at several indices {targets}", file=alias)
        if not targets:
            targets = [self.create_index(alias)]
            self.update_alias(alias, add=targets)
        return self.write(targets[0], records)

    def full_build(
        self, alias: str, records: Iterable[dict], *, max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE,
        provider: str | None = None,
    ) -> IndexStats:
        """Load ``records`` into a new physical index and point ``alias`` at it instead of the indices it pointed
        at, in one action; those are kept (for rollback) and pruned by publishing's retention. Deletion records
        on the fresh index find nothing and are counted as such. Refuses (IndexBuildRefused, the new index dropped, the alias
        unchanged) when more than ``max_failure_rate`` of the input failed."""
        previous = self.aliased(check_alias(alias))
        name = self.create_index(alias, provider)
        try:
            stats = self.write(name, records)
            rate = stats.failed / stats.reconciliation.input if stats.reconciliation.input else 0.0
            if rate > max_failure_rate:
                raise IndexBuildRefused(
                    f"{stats.failed} of {stats.reconciliation.input} documents failed (more than "
                    f"{max_failure_rate:.0%}); alias {alias!r} left unchanged", stats=stats,
                )
            self.update_alias(alias, add=[name], remove=previous)
        except BaseException:
            self.drop(name)
            raise
        return stats
