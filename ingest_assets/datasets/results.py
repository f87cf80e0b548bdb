"""The ``ingest_fileset_result`` table (SQLite and PostgreSQL via SQLAlchemy) and the JSON-lines results stream."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import IO

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    DateTime,
    Engine,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    func,
    select,
)
from sqlalchemy.dialects import postgresql

from ingest_assets.core.sql import upsert
from ingest_assets.datasets.model import FilesetResult, IngestRequest
from ingest_assets.datasets.status import is_retryable

metadata = MetaData()


def _text(name: str, *, exact: int | None = None, nullable: bool = True) -> Column:
    rule = f"= {exact}" if exact else ">= 1"
    return Column(name, Text, CheckConstraint(f"length({name}) {rule}"), nullable=nullable)


ingest_fileset_result = Table(
    "ingest_fileset_result",
    metadata,
    _text("ingest_type", nullable=False),
    _text("base_url", nullable=False),
    Column("updated", DateTime(timezone=True), server_default=func.now(), nullable=False),
    Column("hit", Boolean, nullable=False),
    _text("status"),
    _text("terminal_url"),
    _text("terminal_dt", exact=14),
    Column("terminal_status_code", Integer),
    _text("terminal_sha1hex", exact=40),
    _text("platform"),
    _text("platform_domain"),
    _text("platform_id"),
    _text("ingest_strategy"),
    Column("total_size", BigInteger),
    Column("file_count", Integer),
    _text("item_name"),
    _text("item_bundle_path"),
    Column("manifest", JSON().with_variant(postgresql.JSONB(), "postgresql")),
    PrimaryKeyConstraint("ingest_type", "base_url"),
    Index("ingest_fileset_result_terminal_url_idx", "terminal_url"),
)


class ResultStore:
    """Upserts results keyed on ``(ingest_type, base_url)`` and answers "was this already done?"."""

    def __init__(self, engine: Engine):
        self.engine = engine
        metadata.create_all(engine, checkfirst=True)

    def get(self, ingest_type: str, base_url: str) -> FilesetResult | None:
        table = ingest_fileset_result
        with self.engine.connect() as conn:
            row = conn.execute(
                select(table).where(table.c.ingest_type == ingest_type, table.c.base_url == base_url)
            ).mappings().first()
        if row is None:
            return None
        return FilesetResult(**{k: v for k, v in row.items() if k != "updated"})

    def upsert(self, result: FilesetResult) -> None:
        row = {**result.row(), "updated": datetime.now(timezone.utc)}
        with self.engine.begin() as conn:
            upsert(conn, ingest_fileset_result, row, ["ingest_type", "base_url"])


def write_result_line(stream: IO[str], request: IngestRequest | None, result: FilesetResult) -> None:
    """One JSON line per processed request (the results stream), with ``retryable`` spelled out."""
    stream.write(result.to_json(request, is_retryable(result.status)) + "\n")


@dataclass
class RunSummary:
    """Counts over one run's results, for run metadata (results themselves are not kept: flat memory)."""

    requests: int = 0
    hits: int = 0
    retryable: int = 0
    bytes: int = 0
    by_status: Counter[str] = field(default_factory=Counter)
    by_platform: Counter[str] = field(default_factory=Counter)

    def add(self, result: FilesetResult) -> None:
        self.requests += 1
        self.hits += result.hit
        self.retryable += is_retryable(result.status)
        self.bytes += (result.total_size or 0) if result.hit else 0
        self.by_status[result.status] += 1
        self.by_platform[result.platform or "none"] += 1
