"""SQL tables of the repository ingest (portable DDL for SQLite and PostgreSQL).

* ``repository_objects``: the object index (lookups by collection URI, provider + Resource ID, GUID key,
  members of a collection) - queries, never scans of the repository;
* ``repository_watchdog`` / ``repository_last_success``: the spec's transaction bookkeeping;
* ``repository_source_checks``: 404/410 history of collection sources for the garbage collector.
"""

from __future__ import annotations

from sqlalchemy import Column, DateTime, Engine, Index, Integer, MetaData, String, Table, Text

metadata = MetaData()

objects = Table(
    "repository_objects", metadata,
    Column("pid", String(64), primary_key=True),
    Column("kind", String(16), nullable=False),
    Column("state", String(16), nullable=False),  # live | pending (planned, maybe written)
    Column("uri", Text),  # collection URI / provider page URI
    Column("provider_pid", String(64)),
    Column("collection_pid", String(64)),
    Column("resource_id", Text),
    Column("resource_key", String(255)),  # GUID-like Resource ID, normalized
    Column("harvesting_url", Text),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    Index("repository_objects_uri", "kind", "uri"),
    Index("repository_objects_provider_resource", "kind", "provider_pid", "resource_id"),
    Index("repository_objects_resource_key", "kind", "resource_key"),
    Index("repository_objects_collection", "collection_pid"),
)

watchdog = Table(
    "repository_watchdog", metadata,
    Column("harvested_source", String(512), primary_key=True),
    Column("token", String(64), nullable=False),
    Column("process_id", Integer),
    Column("host", String(255)),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

last_success = Table(
    "repository_last_success", metadata,
    Column("harvested_source", String(512), primary_key=True),
    Column("collection", String(1024), primary_key=True),  # "" = the general success time
    Column("success_at", DateTime(timezone=True), nullable=False),
)

source_checks = Table(
    "repository_source_checks", metadata,
    Column("pid", String(64), primary_key=True),
    Column("url", Text, nullable=False),
    Column("misses", Integer, nullable=False),
    Column("first_missing_at", DateTime(timezone=True), nullable=False),
    Column("last_missing_at", DateTime(timezone=True), nullable=False),
    Column("last_status", Integer),
)


def create_tables(engine: Engine) -> None:
    metadata.create_all(engine)
