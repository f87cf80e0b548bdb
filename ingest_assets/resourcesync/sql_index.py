"""Embedded resource index: two SQL tables (SQLite by default, PostgreSQL too), one transaction per event."""

from __future__ import annotations

import json
from collections.abc import Iterator

from sqlalchemy import BigInteger, Column, Engine, Index, MetaData, String, Table, Text, func, select
from sqlalchemy.dialects import postgresql, sqlite

from ingest_assets.resourcesync.index import ResourceIndex

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
    Column("timestamp", String(24), nullable=False),
    Column("length", BigInteger),
    Column("md5", String(32)),
    Column("sha256", String(64)),
    Column("mime", String(255)),
    Index("rs_change_order", "resource_set", "datetime", "timestamp", "change_id"),
    Index("rs_change_recorded", "resource_set", "timestamp"),
)

_FIELDS = ("length", "md5", "sha256", "mime")


class SqlResourceIndex(ResourceIndex):
    """The index in two tables of the engine's database (created when missing)."""

    def __init__(self, engine: Engine, batch: int = 5000):
        self.engine = engine
        self.batch = batch
        metadata.create_all(engine)
        self._insert = postgresql.insert if engine.dialect.name == "postgresql" else sqlite.insert

    def apply(self, resource_key: str, resource: dict | None, change: dict) -> None:
        with self.engine.begin() as conn:
            conn.execute(resources_table.delete().where(resources_table.c.id == resource_key))
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
            conn.execute(self._insert(changes_table).values(row).on_conflict_do_nothing())

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
            query = query.where(t.c.datetime >= start)
        if end is not None:
            query = query.where(t.c.datetime < end)
        for row in self._stream(query.order_by(t.c.datetime, t.c.timestamp, t.c.change_id)):
            doc = row._asdict()
            doc["location"] = {"type": doc.pop("loc_type"), "value": doc.pop("loc_value")}
            yield doc

    def change_span(self, resource_set: str, recorded_after: str | None = None) -> tuple[str, str] | None:
        t = changes_table
        query = select(func.min(t.c.datetime), func.max(t.c.timestamp)).where(t.c.resource_set == resource_set)
        if recorded_after is not None:
            query = query.where(t.c.timestamp > recorded_after)
        with self.engine.connect() as conn:
            first, last = conn.execute(query).one()
        return None if first is None else (first, last)

    def close(self) -> None:
        self.engine.dispose()


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
