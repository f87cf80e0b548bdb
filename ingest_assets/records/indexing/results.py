"""What an index run reports: counts, the first per-document failures, and a reconciliation of the input
against what the index holds afterwards. Shared by both search-index backends."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from ingest_assets.core.errors import IngestError
from ingest_assets.records.indexing.documents import MAX_ID_BYTES

MAX_FAILURES = 20  # per-document failures kept in IndexStats.failures (all are counted)
DEFAULT_MAX_FAILURE_RATE = 0.2  # a full build failing more of its input is not swapped in


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Reconciliation:
    """Input vs outcome, and the index's document count vs the count the outcome implies.

    expected_count = count_before + documents created - documents actually removed.
    """

    input: int
    accounted: int
    count_before: int
    expected_count: int
    index_count: int

    @property
    def balanced(self) -> bool:
        return self.input == self.accounted

    @property
    def ok(self) -> bool:
        return self.balanced and self.index_count == self.expected_count


@dataclass
class IndexStats:
    """Outcome of ``full_build`` or ``apply``. ``deleted`` includes deletes of ids the index did not hold."""

    alias: str
    index: str
    indexed: int = 0
    deleted: int = 0
    failed: int = 0
    failures: list[dict] = field(default_factory=list)
    created: int = 0
    removed: int = 0
    reconciliation: Reconciliation | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (for Dagster metadata / JSON), including the reconciliation verdicts."""
        out = asdict(self)
        if self.reconciliation is not None:
            out["reconciliation"].update(balanced=self.reconciliation.balanced, ok=self.reconciliation.ok)
        return out


class IndexBuildRefused(IngestError):
    """A full build failed too many documents; the alias was left on the previous index."""

    def __init__(self, message: str, *, stats: IndexStats):
        super().__init__(message, file=stats.index)
        self.stats = stats


class Tally:
    """Counts outcomes while records stream through a backend."""

    def __init__(self, alias: str, index: str):
        self.stats = IndexStats(alias=alias, index=index)
        self.input = 0

    def indexed(self, created: bool) -> None:
        self.stats.indexed += 1
        self.stats.created += created

    def deleted(self, found: bool) -> None:
        self.stats.deleted += 1
        self.stats.removed += found

    def failure(self, record_id: Any, op: str, error_type: str, reason: str, status: int | None = None) -> None:
        self.stats.failed += 1
        if len(self.stats.failures) < MAX_FAILURES:
            self.stats.failures.append(
                {"id": record_id, "op": op, "status": status, "type": error_type, "reason": reason}
            )

    @property
    def failure_rate(self) -> float:
        return self.stats.failed / self.input if self.input else 0.0

    def valid(self, records: Iterable[dict]) -> Iterator[tuple[str, bool, str]]:
        """(id, deleted, document) for each well-formed IndexRecord; malformed ones are counted as failures."""
        for record in records:
            self.input += 1
            record_id = record.get("id") if isinstance(record, dict) else None
            problem = _problem(record)
            if problem:
                self.failure(record_id, "validate", "invalid_index_record", problem)
                continue
            yield record_id, bool(record.get("deleted", False)), record.get("document") or ""

    def finish(self, count_before: int, index_count: int) -> IndexStats:
        stats = self.stats
        stats.reconciliation = Reconciliation(
            input=self.input,
            accounted=stats.indexed + stats.deleted + stats.failed,
            count_before=count_before,
            expected_count=count_before + stats.created - stats.removed,
            index_count=index_count,
        )
        return stats


def _problem(record: Any) -> str | None:
    if not isinstance(record, dict):
        return f"IndexRecord must be a dict, got {type(record).__name__}"
    record_id, deleted, document = record.get("id"), record.get("deleted", False), record.get("document")
    if not isinstance(record_id, str) or not record_id.strip():
        return f"id must be a non-empty string, got {record_id!r}"
    if len(record_id.encode("utf-8")) > MAX_ID_BYTES:
        return f"id is longer than {MAX_ID_BYTES} bytes"
    if not isinstance(deleted, bool):
        return f"deleted must be a boolean, got {deleted!r}"
    if not deleted and (not isinstance(document, str) or not document.strip()):
        return "document is empty"
    return None
