"""The object index: where repository objects are found without scanning the repository.

Members are recorded *before* they are written (state ``pending``) and confirmed after the repository
commit, so after a crash the index always names at least every object that may exist.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone

from sqlalchemy import Engine, and_, delete, select

from ingest_assets.core.sql import upsert

from ingest_assets.repository.model import RepositoryObject
from ingest_assets.repository.tables import create_tables, objects

_GUID_STRIP = re.compile(r"[\s-]+")


def utc(value: datetime | None) -> datetime | None:
    """SQLite hands back naive datetimes: they are UTC."""
    if value is None:
        return None
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def guid_key(resource_id: str) -> str | None:
    """The spec's step-3 test: a URI (http/urn) or > 31 characters once whitespace and hyphens are gone."""
    text = resource_id.strip()
    if re.match(r"^(https?://|urn:)", text, re.I):
        return text
    stripped = _GUID_STRIP.sub("", text)
    return stripped.lower() if len(stripped) > 31 else None


class ObjectIndex:
    def __init__(self, engine: Engine):
        self.engine = engine
        create_tables(engine)

    def find_collection(self, uri: str, provider_pid: str | None, resource_id: str | None) -> str | None:
        """The spec's update algorithm, steps 1-4: collection URI; provider + Resource ID; GUID; new."""
        queries = [and_(objects.c.kind == "collection", objects.c.uri == uri)]
        if provider_pid and resource_id:
            queries.append(and_(objects.c.kind == "collection", objects.c.provider_pid == provider_pid,
                                objects.c.resource_id == resource_id))
        key = guid_key(resource_id) if resource_id else None
        if key:
            queries.append(and_(objects.c.kind == "collection", objects.c.resource_key == key))
        with self.engine.connect() as conn:
            for condition in queries:
                pid = conn.execute(select(objects.c.pid).where(condition).order_by(objects.c.pid).limit(1)).scalar()
                if pid:
                    return pid
        return None

    def find_provider(self, uri: str) -> str | None:
        with self.engine.connect() as conn:
            return conn.execute(select(objects.c.pid).where(objects.c.kind == "provider", objects.c.uri == uri)
                                .limit(1)).scalar()

    def members(self, collection_pid: str) -> list[str]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(objects.c.pid).where(objects.c.collection_pid == collection_pid)
                                .order_by(objects.c.pid))
            return [row.pid for row in rows]

    def collections(self) -> list[tuple[str, str]]:
        """``(pid, harvesting_url)`` of every live collection (for the verification service)."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(objects.c.pid, objects.c.harvesting_url)
                                .where(objects.c.kind == "collection", objects.c.state == "live")
                                .order_by(objects.c.pid))
            return [(row.pid, row.harvesting_url) for row in rows]

    def items(self, batch: int = 1000) -> Iterator[tuple[str, str | None, str | None]]:
        """``(pid, harvesting_url, collection_pid)`` of every live collection member (for the verification
        service), in PID order, read ``batch`` rows at a time (no connection held between batches)."""
        last = ""
        while True:
            with self.engine.connect() as conn:
                rows = conn.execute(select(objects.c.pid, objects.c.harvesting_url, objects.c.collection_pid)
                                    .where(objects.c.kind == "member", objects.c.state == "live", objects.c.pid > last)
                                    .order_by(objects.c.pid).limit(batch)).all()
            if not rows:
                return
            yield from ((row.pid, row.harvesting_url, row.collection_pid) for row in rows)
            last = rows[-1].pid

    def get(self, pid: str) -> dict | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(objects).where(objects.c.pid == pid)).mappings().first()
            return dict(row) if row else None

    def plan(self, objs: Iterable[RepositoryObject], uris: dict[str, str]) -> None:
        """Record objects about to be written (``pending``) unless already indexed."""
        now = datetime.now(timezone.utc)
        with self.engine.begin() as conn:
            for obj in objs:
                upsert(conn, objects, self._row(obj, uris.get(obj.pid), "pending", now), ["pid"], update=False)

    def confirm(self, objs: Iterable[RepositoryObject], uris: dict[str, str], *, removed: Iterable[str] = ()) -> None:
        """After the repository commit: objects are live, ``removed`` PIDs leave the index."""
        now = datetime.now(timezone.utc)
        with self.engine.begin() as conn:
            gone = list(removed)
            if gone:
                conn.execute(delete(objects).where(objects.c.pid.in_(gone)))
            for obj in objs:
                upsert(conn, objects, self._row(obj, uris.get(obj.pid), "live", now), ["pid"])

    def remove(self, pids: Iterable[str]) -> None:
        with self.engine.begin() as conn:
            conn.execute(delete(objects).where(objects.c.pid.in_(list(pids))))

    @staticmethod
    def _row(obj: RepositoryObject, uri: str | None, state: str, now: datetime) -> dict:
        resource_id = obj.first("Resource_ID") or None
        return {"pid": obj.pid, "kind": obj.kind, "state": state, "uri": uri, "provider_pid": obj.provider,
                "collection_pid": obj.collection, "resource_id": resource_id,
                "resource_key": guid_key(resource_id) if resource_id else None,
                "harvesting_url": obj.harvesting_url, "updated_at": now}
