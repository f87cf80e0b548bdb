"""SQL tables of publishing (portable DDL for SQLite and PostgreSQL), created when first used.

* ``publish_days``: each provider day's way to the public: held for review, approved, rejected, published or
  rolled back, who decided and when, and the index that published it;
* ``publish_indices``: every index publishing built (candidate, promoted, refused, rolled back), what it
  replaces, the days it holds and the ids its gates and canary check;
* ``publish_actions``: every alias change (promotion, rollback, automatic rollback), the rollback history;
* ``publish_gates``: every gate decision with its evidence and remediation hint;
* ``publish_takedowns``: records kept out of the index until undone, with who, when and why.

(A provider's last failure is kept with its other state, by :mod:`ingest_assets.operations.failures`.)
"""

from __future__ import annotations

from sqlalchemy import Boolean, Column, Date, Engine, Index, Integer, MetaData, String, Table, Text

from ingest_assets.core.sql import UtcDateTime

metadata = MetaData()
NAME = 255  # an index or alias name

days = Table(
    "publish_days", metadata,
    Column("provider", String(64), primary_key=True),
    Column("day", Date, primary_key=True),
    Column("output", Text, nullable=False),  # the indexing output folder this state is about
    Column("review", Boolean, nullable=False),  # whether the provider required review
    Column("state", String(16), nullable=False),  # pending | approved | rejected | published | rolled_back
    Column("requested_at", UtcDateTime(), nullable=False),
    Column("deadline", UtcDateTime()),  # approved by itself then (None: only by a decision)
    Column("decided_at", UtcDateTime()),
    Column("decided_by", String(255)),
    Column("reason", Text),
    Column("released_at", UtcDateTime()),  # when a publish run last took it
    Column("holds", Integer, nullable=False),  # times a run held it back after its approval
    Column("published_at", UtcDateTime()),
    Column("index_name", String(NAME)),
)

indices = Table(
    "publish_indices", metadata,
    Column("name", String(NAME), primary_key=True),
    Column("alias", String(NAME), nullable=False),
    Column("provider", String(64)),  # None: an index of every provider
    Column("base", String(NAME)),  # the index it replaces (None: the provider's first)
    Column("state", String(16), nullable=False),  # candidate | promoted | refused | rolled_back
    Column("days", Text, nullable=False),  # JSON list of the ISO days it publishes
    Column("run_id", String(64)),
    Column("built_at", UtcDateTime(), nullable=False),
    Column("figures", Text, nullable=False),  # JSON: base_count, copied, count_before, expected, count, written...
    Column("samples", Text, nullable=False),  # JSON list of ids the fields gate reads
    Column("canary", Text, nullable=False),  # JSON {id: expected document, or null when it must be gone}
    Index("publish_indices_run", "run_id", "provider"),
)

actions = Table(
    "publish_actions", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("batch", String(64), nullable=False),  # the actions of one alias update
    Column("at", UtcDateTime(), nullable=False),
    Column("alias", String(NAME), nullable=False),
    Column("provider", String(64)),
    Column("action", String(16), nullable=False),  # promote | rollback | auto-rollback
    Column("from_index", String(NAME)),
    Column("to_index", String(NAME)),
    Column("by", String(255), nullable=False),
    Column("reason", Text),
    Column("run_id", String(64)),
    Index("publish_actions_provider", "alias", "provider", "at"),
)

gates = Table(
    "publish_gates", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", UtcDateTime(), nullable=False),
    Column("index_name", String(NAME), nullable=False),
    Column("provider", String(64)),
    Column("gate", String(32), nullable=False),
    Column("passed", Boolean, nullable=False),
    Column("description", Text, nullable=False),
    Column("evidence", Text, nullable=False),  # JSON
    Column("remediation", Text),
    Column("run_id", String(64)),
    Index("publish_gates_index", "index_name"),
)

takedowns = Table(
    "publish_takedowns", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("record_id", String(64), nullable=False),  # the DPLA id
    Column("provider", String(64), nullable=False),
    Column("local_id", Text),
    Column("reason", Text, nullable=False),
    Column("by", String(255), nullable=False),
    Column("at", UtcDateTime(), nullable=False),
    Column("undone_at", UtcDateTime()),
    Column("undone_by", String(255)),
    Index("publish_takedowns_record", "record_id"),
    Index("publish_takedowns_provider", "provider"),
)

def create_tables(engine: Engine) -> Engine:
    """Create the tables that are missing; returns ``engine``."""
    metadata.create_all(engine)
    return engine
