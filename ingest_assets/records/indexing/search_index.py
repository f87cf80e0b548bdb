"""The search index as both backends (Elasticsearch, embedded SQLite FTS) offer it."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable

from ingest_assets.records.indexing.results import DEFAULT_MAX_FAILURE_RATE, IndexStats


class SearchIndex(ABC):
    """IndexRecords behind an alias, which is what readers query."""

    @abstractmethod
    def full_build(
        self, alias: str, records: Iterable[dict], *, max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE
    ) -> IndexStats:
        """Load ``records`` into a new physical index and swap ``alias`` onto it; refuses the swap
        (IndexBuildRefused) when more than ``max_failure_rate`` of the input failed."""

    @abstractmethod
    def apply(self, alias: str, records: Iterable[dict]) -> IndexStats:
        """Upsert and delete (``deleted=True``) records in the index behind ``alias`` (created if missing)."""

    @abstractmethod
    def count(self, alias: str) -> int: ...

    @abstractmethod
    def search(self, alias: str, query: str, size: int = 10) -> list[dict]:
        """Documents matching all words of ``query``, best first; '' or '*' matches all."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections (nothing to do for a backend that opens them per call)."""
