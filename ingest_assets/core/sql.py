"""SQL engines for the transactional tables (SQLite by default, PostgreSQL in production)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from sqlalchemy import DateTime, Engine, Table, TypeDecorator, create_engine, event
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import make_url


def make_engine(url: str) -> Engine:
    """An engine for ``url``; ``postgresql://`` uses psycopg 3, SQLite gets WAL and a busy timeout."""
    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(parsed, connect_args={"timeout": 30})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection, _record):
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=30000")
            cursor.close()

        return engine
    return create_engine(parsed, pool_pre_ping=True)


def insert_for(engine: Engine, table: Table):
    """``INSERT`` with ``ON CONFLICT`` for the engine's dialect (the one place that switches on it)."""
    return {"postgresql": postgresql.insert, "sqlite": sqlite.insert}[engine.dialect.name](table)


class UtcDateTime(TypeDecorator):
    """A timezone-aware datetime stored as UTC and read back aware on every dialect (SQLite keeps no zone)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("datetimes stored in SQL must be timezone-aware")
        return value.astimezone(timezone.utc)

    def process_result_value(self, value: datetime | None, dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)
