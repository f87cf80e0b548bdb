"""Verification service / garbage collector: remove collections and items whose source is gone.

As the specification's collector "reads all the collections and items", the HarvestingURL of each live
collection, then of each live item (collection member) whose collection is still there, is requested (each
URL once per run: the items of one wiki page share it). Only 404 and 410 count as "gone"; an object is
removed once it has been gone on at least ``min_misses`` checks spanning at least ``grace``: a collection
with its members, an item alone, in one repository transaction. Timeouts, 5xx and any other answer never
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
        answers: dict[str, tuple[int | None, str]] = {}  # url -> (status or None, why it says nothing)
        removed = set()
        for pid, url in self.index.collections():
            if self._verify(pid, url, now, result, answers, lambda: [*self.index.members(pid), pid]):
                removed.add(pid)
        for pid, url, collection in self.index.items():
            if collection not in removed:  # an item of a removed collection went with it
                self._verify(pid, url, now, result, answers, lambda: [pid])
        return result

    def _verify(self, pid: str, url: str | None, now: datetime, result: VerificationResult,
                answers: dict[str, tuple[int | None, str]], objects) -> bool:
        """Check one object's source; remove ``objects()`` (its PIDs, the object's last) once it is gone."""
        if not url:
            return False
        result.checked += 1
        if url not in answers:
            answers[url] = self._status(url)
        status, reason = answers[url]
        if status is None:
            result.unreachable[pid] = reason
            return False
        if status not in GONE:
            self._clear([pid])
            return False
        result.missing.append(pid)
        if not self._record_miss(pid, url, status, now):
            return False
        self._remove(objects(), now)
        result.removed.append(pid)
        return True

    def _status(self, url: str) -> tuple[int | None, str]:
        """HTTP status of the source, or ``None`` (and why) when it says nothing (timeouts, 5xx, refusals)."""
        try:
            with self.http.stream(url, method="HEAD") as (response, _hops):
                return response.status_code, ""
        except FetchError as exc:
            if exc.status in GONE:
                return exc.status, ""
            return None, str(exc)

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

    def _clear(self, pids: list[str]) -> None:
        with self.index.engine.begin() as conn:
            conn.execute(delete(source_checks).where(source_checks.c.pid.in_(pids)))

    def _remove(self, pids: list[str], now: datetime) -> None:
        with self.repository.transaction() as tx:
            for pid in pids:
                tx.delete(pid)
        self.index.remove(pids)
        if self.feed is not None:
            publish_changes(self.feed, [], pids, now)
        self._clear(pids)
