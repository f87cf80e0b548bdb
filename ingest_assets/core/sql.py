"""SQL engines for the transactional tables (SQLite by default, PostgreSQL in production), and the one upsert."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, DateTime, Engine, Table, TypeDecorator, create_engine, event, exc
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import make_url

from ingest_assets.core.errors import DatabaseError


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

        return _named_errors(engine)
    return _named_errors(create_engine(parsed, pool_pre_ping=True))


def _named_errors(engine: Engine) -> Engine:
    """A database that is down, restarting or dropped the connection raises a :class:`DatabaseError` naming it (one
    line from the driver, no password), not the driver's exception; constraint and SQL errors are left as they are.
    A pooled connection the server dropped while idle is replaced before use (``pool_pre_ping``)."""
    name = engine.url.render_as_string(hide_password=True)

    @event.listens_for(engine, "handle_error")
    def _name_the_database(context) -> None:
        if context.is_pre_ping:  # the pool's own check: it replaces the dropped connection
            return
        error = context.sqlalchemy_exception
        if context.is_disconnect or isinstance(error, (exc.OperationalError, exc.InterfaceError)):
            reason = str(context.original_exception).strip().splitlines()[0] if str(context.original_exception).strip() else ""
            raise DatabaseError(f"database unavailable: {type(context.original_exception).__name__}: {reason}".rstrip(": "),
                                file=name) from context.original_exception

    return engine


def insert_for(bind: Engine | Connection, table: Table):
    """``INSERT`` with ``ON CONFLICT`` for the dialect of ``bind`` (the one place that switches on it)."""
    return {"postgresql": postgresql.insert, "sqlite": sqlite.insert}[bind.dialect.name](table)


def upsert(conn: Connection, table: Table, row: Mapping[str, Any], keys: Sequence[str], *, update: bool = True) -> int:
    """Insert ``row`` in one statement; when a row with the same ``keys`` exists, set its other columns to
    ``row``'s (``update=False``: leave it as it is). Returns the number of rows written (0: kept as it was;
    counted with ``RETURNING``, since drivers' ``rowcount`` after ``ON CONFLICT`` differs)."""
    statement = insert_for(conn, table).values(**row)
    if update:
        statement = statement.on_conflict_do_update(
            index_elements=list(keys), set_={name: statement.excluded[name] for name in row if name not in keys})
    else:
        statement = statement.on_conflict_do_nothing(index_elements=list(keys))
    return len(conn.execute(statement.returning(*(table.c[name] for name in keys))).all())


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
