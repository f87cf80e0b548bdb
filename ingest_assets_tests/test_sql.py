"""The one upsert, on SQLite and on a real PostgreSQL server."""

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, select

from ingest_assets.core.sql import make_engine, upsert

table = Table("upsert_probe", MetaData(), Column("a", String(8), primary_key=True), Column("b", String(8), primary_key=True),
              Column("value", Integer, nullable=False))


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, tmp_path):
    url = f"sqlite:///{tmp_path / 'probe.sqlite3'}" if request.param == "sqlite" else request.getfixturevalue("pg_url")
    engine = make_engine(url)
    table.drop(engine, checkfirst=True)
    table.create(engine)
    yield engine
    table.drop(engine)
    engine.dispose()


def rows(engine) -> list[tuple]:
    with engine.connect() as conn:
        return [tuple(row) for row in conn.execute(select(table).order_by(table.c.a, table.c.b))]


def test_upsert_inserts_updates_or_keeps_on_the_composite_key(engine):
    with engine.begin() as conn:
        assert upsert(conn, table, {"a": "x", "b": "1", "value": 1}, ["a", "b"]) == 1
        assert upsert(conn, table, {"a": "x", "b": "2", "value": 2}, ["a", "b"], update=False) == 1
        upsert(conn, table, {"a": "x", "b": "1", "value": 10}, ["a", "b"])
        assert upsert(conn, table, {"a": "x", "b": "2", "value": 20}, ["a", "b"], update=False) == 0
    assert rows(engine) == [("x", "1", 10), ("x", "2", 2)]
