"""The spec's transaction handling: a ``watchdog`` lease per harvested source and ``last_success`` times.

* :meth:`Bookkeeping.claim` starts an ingest: refused (``None``) while another ingest's watchdog entry
  is younger than MaximumIngestDuration; an older entry is taken over (a crash is assumed). Claim and
  take-over are single conditional statements, so two processes can never both win.
* :meth:`heartbeat` refreshes the entry (after each collection's removal) and fails if it was taken over.
* :meth:`collection_done` stores a collection's restart point; :meth:`finish` deletes the watchdog entry
  and stores the general success time (the time up to which updates were queried) in one transaction.
"""

from __future__ import annotations

import os
import socket
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from sqlalchemy import Engine, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from ingest_assets.core.errors import IngestError
from ingest_assets.core.sql import upsert
from ingest_assets.repository.index import utc
from ingest_assets.repository.tables import create_tables, last_success, watchdog


class LeaseLost(IngestError):
    """Another process took over this ingest's watchdog entry: stop writing."""


@dataclass(frozen=True)
class Lease:
    source: str
    token: str
    started_at: datetime


def _now() -> datetime:
    return datetime.now(timezone.utc)


class Bookkeeping:
    def __init__(self, engine: Engine, *, max_duration: timedelta = timedelta(hours=24)):
        self.engine = engine
        self.max_duration = max_duration
        create_tables(engine)

    def claim(self, source: str) -> Lease | None:
        now = _now()
        lease = Lease(source, uuid.uuid4().hex, now)
        row = {"token": lease.token, "process_id": os.getpid(), "host": socket.gethostname()[:255],
               "started_at": now, "updated_at": now}
        try:
            with self.engine.begin() as conn:
                conn.execute(insert(watchdog).values(harvested_source=source, **row))
            return lease
        except IntegrityError:
            pass
        with self.engine.begin() as conn:
            taken = conn.execute(update(watchdog).where(watchdog.c.harvested_source == source,
                                                        watchdog.c.updated_at < now - self.max_duration)
                                 .values(**row)).rowcount
        return lease if taken == 1 else None

    def watchdog_entry(self, source: str) -> dict | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(watchdog).where(watchdog.c.harvested_source == source)).mappings().first()
        if row is None:
            return None
        return {**row, "started_at": utc(row["started_at"]), "updated_at": utc(row["updated_at"])}

    def is_running(self, source: str) -> bool:
        """True while a watchdog entry younger than MaximumIngestDuration exists."""
        entry = self.watchdog_entry(source)
        return entry is not None and _now() - entry["updated_at"] < self.max_duration

    def heartbeat(self, lease: Lease) -> None:
        with self.engine.begin() as conn:
            self._heartbeat(conn, lease)

    def _heartbeat(self, conn, lease: Lease) -> None:
        updated = conn.execute(update(watchdog).where(watchdog.c.harvested_source == lease.source,
                                                      watchdog.c.token == lease.token)
                               .values(updated_at=_now())).rowcount
        if updated != 1:
            raise LeaseLost("watchdog entry was taken over by another ingest", file=lease.source)

    def last_success(self, source: str, collection: str = "") -> datetime | None:
        with self.engine.connect() as conn:
            value = conn.execute(select(last_success.c.success_at).where(
                last_success.c.harvested_source == source, last_success.c.collection == collection)).scalar()
        return utc(value)

    def _store_success(self, conn, source: str, collection: str, when: datetime) -> None:
        upsert(conn, last_success, {"harvested_source": source, "collection": collection, "success_at": when},
               ["harvested_source", "collection"])

    def collection_done(self, lease: Lease, collection: str, when: datetime) -> None:
        """A collection's restart point (only while this process still holds the watchdog)."""
        with self.engine.begin() as conn:
            self._heartbeat(conn, lease)
            self._store_success(conn, lease.source, collection, when)

    def finish(self, lease: Lease, queried_until: datetime | None) -> None:
        """Delete the watchdog entry; with ``queried_until``, store it as the general success time."""
        with self.engine.begin() as conn:
            removed = conn.execute(delete(watchdog).where(watchdog.c.harvested_source == lease.source,
                                                          watchdog.c.token == lease.token)).rowcount
            if removed != 1:
                raise LeaseLost("watchdog entry was taken over by another ingest", file=lease.source)
            if queried_until is not None:
                self._store_success(conn, lease.source, "", queried_until)
