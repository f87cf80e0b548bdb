"""Verification service / garbage collector: remove collections whose source is gone.

Each live collection's HarvestingURL is requested. Only 404 and 410 count as "gone"; a collection is
removed (members and collection object, in one repository transaction) once it has been gone on at
least ``min_misses`` checks spanning at least ``grace``. Timeouts, 5xx and any other answer never
remove anything and do not reset the count; a 2xx answer resets it. With a change feed, the removed
objects are published as ``deleted``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from sqlalchemy import delete, insert, select, update

from ingest_assets.core.errors import FetchError
from ingest_assets.core.http import HttpClient
from ingest_assets.repository.index import ObjectIndex, utc
from ingest_assets.repository.ingest import publish_changes
from ingest_assets.repository.backend import Repository
from ingest_assets.repository.tables import source_checks
from ingest_assets.resourcesync.feed import ChangeFeed

GONE = (404, 410)


@dataclass
class VerificationResult:
    checked: int = 0
    missing: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unreachable: dict[str, str] = field(default_factory=dict)


class GarbageCollector:
    def __init__(self, index: ObjectIndex, repository: Repository, http: HttpClient, *,
                 min_misses: int = 3, grace: timedelta = timedelta(days=7), feed: ChangeFeed | None = None):
        self.index = index
        self.repository = repository
        self.http = http
        self.min_misses = min_misses
        self.grace = grace
        self.feed = feed

    def run(self, now: datetime | None = None) -> VerificationResult:
        now = now or datetime.now(timezone.utc)
        result = VerificationResult()
        for pid, url in self.index.collections():
            if not url:
                continue
            result.checked += 1
            status = self._status(url, pid, result)
            if status is None:
                continue
            if status in GONE:
                result.missing.append(pid)
                if self._record_miss(pid, url, status, now):
                    self._remove(pid, now)
                    result.removed.append(pid)
            else:
                self._clear(pid)
        return result

    def _status(self, url: str, pid: str, result: VerificationResult) -> int | None:
        """HTTP status of the source, or ``None`` when it says nothing (timeouts, 5xx, refusals)."""
        try:
            with self.http.stream(url, method="HEAD") as (response, _hops):
                return response.status_code
        except FetchError as exc:
            if exc.status in GONE:
                return exc.status
            result.unreachable[pid] = str(exc)
            return None

    def _record_miss(self, pid: str, url: str, status: int, now: datetime) -> bool:
        """Count a 404/410; True when the collection has been gone long and often enough."""
        with self.index.engine.begin() as conn:
            row = conn.execute(select(source_checks).where(source_checks.c.pid == pid)).mappings().first()
            if row is None:
                conn.execute(insert(source_checks).values(pid=pid, url=url, misses=1, first_missing_at=now,
                                                          last_missing_at=now, last_status=status))
                misses, first = 1, now
            else:
                misses, first = row["misses"] + 1, utc(row["first_missing_at"])
                conn.execute(update(source_checks).where(source_checks.c.pid == pid)
                             .values(misses=misses, last_missing_at=now, last_status=status, url=url))
        return misses >= self.min_misses and now - first >= self.grace

    def _clear(self, pid: str) -> None:
        with self.index.engine.begin() as conn:
            conn.execute(delete(source_checks).where(source_checks.c.pid == pid))

    def _remove(self, pid: str, now: datetime) -> None:
        members = self.index.members(pid)
        with self.repository.transaction() as tx:
            for member in members:
                tx.delete(member)
            tx.delete(pid)
        self.index.remove([*members, pid])
        if self.feed is not None:
            publish_changes(self.feed, [], [*members, pid], now)
        self._clear(pid)
