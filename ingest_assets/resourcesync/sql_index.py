"""Embedded resource index: SQL tables (SQLite by default, PostgreSQL too), one transaction per event.

An event reads its set's latest Resource List ``at`` (``rs_resourcelist``) in the transaction that writes
it, and :meth:`SqlResourceIndex.start_resource_list` waits for the events in flight: on SQLite because the
event's first statement takes the database's write lock, on PostgreSQL through a per-set advisory lock
(shared by events, exclusive for the Resource List). So an event either commits before the Resource List
is read (it is in the list) or is listed at its ``at`` or later.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from sqlalchemy import BigInteger, Column, Engine, Index, MetaData, String, Table, Text, func, inspect, select

from ingest_assets.core.sql import upsert
from ingest_assets.resourcesync.index import ResourceIndex
from ingest_assets.resourcesync.model import doc_id, listing_time

metadata = MetaData()

resources_table = Table(
    "rs_resource",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("resource_set", String(64), nullable=False),
    Column("loc_type", String(8), nullable=False),
    Column("loc_value", Text().with_variant(Text(collation="C"), "postgresql"), nullable=False),
    Column("length", BigInteger),
    Column("md5", String(32)),
    Column("sha256", String(64)),
    Column("mime", String(255)),
    Column("lastmod", String(24)),
    Column("ln", Text, nullable=False),
    Column("timestamp", String(24), nullable=False),
    Index("rs_resource_order", "resource_set", "loc_value", "loc_type"),
)

changes_table = Table(
    "rs_change",
    metadata,
    Column("change_id", String(40), primary_key=True),
    Column("resource_set", String(64), nullable=False),
    Column("loc_type", String(8), nullable=False),
    Column("loc_value", Text, nullable=False),
    Column("change", String(8), nullable=False),
    Column("lastmod", String(24)),
    Column("datetime", String(24), nullable=False),
    Column("listed", String(24), nullable=False),
    Column("timestamp", String(24), nullable=False),
    Column("length", BigInteger),
    Column("md5", String(32)),
    Column("sha256", String(64)),
    Column("mime", String(255)),
    Index("rs_change_order", "resource_set", "listed", "timestamp", "change_id"),
    Index("rs_change_recorded", "resource_set", "timestamp"),
)

resource_lists_table = Table(
    "rs_resourcelist",
    metadata,
    Column("resource_set", String(64), primary_key=True),
    Column("at", String(24), nullable=False),
)

_FIELDS = ("length", "md5", "sha256", "mime")


class SqlResourceIndex(ResourceIndex):
    """The index in three tables of the engine's database (created when missing)."""

    def __init__(self, engine: Engine, batch: int = 5000):
        self.engine = engine
        self.batch = batch
        _add_listed(engine)
        metadata.create_all(engine)

    def apply(self, resource_key: str, resource: dict | None, change: dict) -> dict:
        name = change["resource_set"]
        with self.engine.begin() as conn:
            self._lock(conn, name, shared=True)
            # SQLite: this first write takes the write lock, so the ``at`` read below is the latest
            conn.execute(resources_table.delete().where(resources_table.c.id == resource_key))
            t = resource_lists_table
            at = conn.execute(select(t.c.at).where(t.c.resource_set == name)).scalar()
            change = {**change, "listed": listing_time(change["datetime"], at)}
            if resource is not None:
                row = {k: resource[k] for k in ("resource_set", "lastmod", "timestamp", *_FIELDS)}
                conn.execute(
                    resources_table.insert(),
                    dict(
                        row,
                        id=resource_key,
                        loc_type=resource["location"]["type"],
                        loc_value=resource["location"]["value"],
                        ln=json.dumps(resource["ln"]),
                    ),
                )
            row = {k: v for k, v in change.items() if k != "location"}
            row.update(loc_type=change["location"]["type"], loc_value=change["location"]["value"])
            if upsert(conn, changes_table, row, ["change_id"], update=False) == 0:
                c = changes_table
                change = _change_doc(conn.execute(select(c).where(c.c.change_id == change["change_id"])).one())
        return change

    def start_resource_list(self, resource_set: str, at: str) -> None:
        with self.engine.begin() as conn:
            self._lock(conn, resource_set, shared=False)  # waits for the events in flight
            upsert(conn, resource_lists_table, {"resource_set": resource_set, "at": at}, ["resource_set"])

    def _lock(self, conn, resource_set: str, shared: bool) -> None:
        """PostgreSQL: the set's advisory lock until the transaction ends (SQLite serialises writers)."""
        if self.engine.dialect.name == "postgresql":
            key = int(doc_id("rs_resourcelist", resource_set)[:15], 16)
            lock = func.pg_advisory_xact_lock_shared if shared else func.pg_advisory_xact_lock
            conn.execute(select(lock(key)))

    def _stream(self, query) -> Iterator:
        with self.engine.connect() as conn:
            yield from conn.execution_options(yield_per=self.batch).execute(query)

    def get_resource(self, resource_key: str) -> dict | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(resources_table).where(resources_table.c.id == resource_key)).first()
        return None if row is None else _resource_doc(row)

    def resources(self, resource_set: str) -> Iterator[dict]:
        t = resources_table
        query = select(t).where(t.c.resource_set == resource_set).order_by(t.c.loc_value, t.c.loc_type)
        return map(_resource_doc, self._stream(query))

    def changes(self, resource_set: str, start: str | None = None, end: str | None = None) -> Iterator[dict]:
        t = changes_table
        query = select(t).where(t.c.resource_set == resource_set)
        if start is not None:
            query = query.where(t.c.listed >= start)
        if end is not None:
            query = query.where(t.c.listed < end)
        return map(_change_doc, self._stream(query.order_by(t.c.listed, t.c.timestamp, t.c.change_id)))

    def change_span(self, resource_set: str, recorded_after: str | None = None) -> tuple[str, str] | None:
        t = changes_table
        query = select(func.min(t.c.listed), func.max(t.c.timestamp)).where(t.c.resource_set == resource_set)
        if recorded_after is not None:
            query = query.where(t.c.timestamp > recorded_after)
        with self.engine.connect() as conn:
            first, last = conn.execute(query).one()
        return None if first is None else (first, last)

    def close(self) -> None:
        self.engine.dispose()


def _add_listed(engine: Engine) -> None:
    """Tables made before changes had a listing time: list the logged changes at their event time."""
    inspector = inspect(engine)
    if not inspector.has_table("rs_change") or "listed" in {c["name"] for c in inspector.get_columns("rs_change")}:
        return
    with engine.begin() as conn:
        conn.exec_driver_sql("ALTER TABLE rs_change ADD COLUMN listed VARCHAR(24)")
        conn.exec_driver_sql("UPDATE rs_change SET listed = datetime")
        conn.exec_driver_sql("DROP INDEX rs_change_order")  # was on datetime
        next(i for i in changes_table.indexes if i.name == "rs_change_order").create(conn)


def _change_doc(row) -> dict:
    doc = row._asdict()
    doc["location"] = {"type": doc.pop("loc_type"), "value": doc.pop("loc_value")}
    return doc


def _resource_doc(row) -> dict:
    return {
        "resource_set": row.resource_set,
        "location": {"type": row.loc_type, "value": row.loc_value},
        "length": row.length,
        "md5": row.md5,
        "sha256": row.sha256,
        "mime": row.mime,
        "lastmod": row.lastmod,
        "ln": json.loads(row.ln) if row.ln != "[]" else [],
        "timestamp": row.timestamp,
    }
