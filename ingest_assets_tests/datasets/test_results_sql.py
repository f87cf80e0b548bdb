"""The ingest_fileset_result table in SQLite and in a real PostgreSQL, and the DDL file it mirrors."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from sqlalchemy import inspect, text
from sqlalchemy.exc import IntegrityError

from ingest_assets.datasets.ingest import run_requests
from ingest_assets.datasets.model import FilesetResult
from ingest_assets.datasets.results import ResultStore
from ingest_assets.core.sql import make_engine

DDL = Path(__file__).resolve().parents[2] / "ingest_assets" / "schemas" / "datasets-ingest_fileset_result.sql"


def ddl_columns() -> list[str]:
    body = DDL.read_text().split("(", 1)[1]
    return [m.group(1) for m in re.finditer(r"^\s{4}([a-z_0-9]+)\s+[A-Z]", body, re.M)]


def exercise(store: ResultStore):
    row = FilesetResult(
        ingest_type="dataset",
        base_url="https://zenodo.org/records/4927605",
        status="success-file",
        hit=True,
        terminal_dt="20261122010203",
        terminal_sha1hex="a" * 40,
        platform="zenodo",
        ingest_strategy="web-file",
        total_size=231392,
        file_count=1,
        item_bundle_path="bundle.zip",
        manifest=[{"path": "ä b.pdf", "md5": "0" * 32, "extra": {"warc": "k", "offset": 3}}],
    )
    store.upsert(row)
    store.upsert(FilesetResult(**{**row.__dict__, "status": "mismatch-md5", "hit": False}))  # same key: update
    stored = store.get("dataset", row.base_url)
    assert (stored.status, stored.hit, stored.manifest, stored.item_bundle_path) == (
        "mismatch-md5", False, row.manifest, "bundle.zip")  # fmt: skip
    assert store.get("dataset", "https://elsewhere") is None
    with pytest.raises(IntegrityError):  # the CHECK constraints hold (terminal_dt has 14 characters)
        store.upsert(FilesetResult(ingest_type="dataset", base_url="x", status="success", terminal_dt="2026"))


def test_sqlite_table(tmp_path):
    store = ResultStore(make_engine(f"sqlite:///{tmp_path / 'r.sqlite3'}"))
    exercise(store)
    assert [c["name"] for c in inspect(store.engine).get_columns("ingest_fileset_result")] == ddl_columns()


def test_postgresql_table_matches_the_ddl_file(pg_url):
    engine = make_engine(pg_url)
    with engine.begin() as conn:
        conn.execute(text("DROP TABLE IF EXISTS ingest_fileset_result"))
    store = ResultStore(engine)
    exercise(store)
    columns = inspect(engine).get_columns("ingest_fileset_result")
    assert [c["name"] for c in columns] == ddl_columns()
    assert {c["name"]: str(c["type"]) for c in columns}["manifest"] == "JSONB"
    assert "item_bundle_path" in DDL.read_text() and "item_path_bundle" not in DDL.read_text().split("\n", 4)[4]
    with engine.connect() as conn:  # JSONB is queryable server side
        assert conn.execute(text("SELECT manifest->0->>'path' FROM ingest_fileset_result")).scalar() == "ä b.pdf"
    # the DDL file itself is valid PostgreSQL and yields the same table
    with engine.begin() as conn:
        conn.execute(text("DROP TABLE ingest_fileset_result"))
        conn.exec_driver_sql(DDL.read_text())
    assert [c["name"] for c in inspect(engine).get_columns("ingest_fileset_result")] == ddl_columns()
    exercise(ResultStore(engine))


def test_results_stream_and_postgresql_from_one_run(pg_url, platform, make_ctx):
    """A request file with a good line, a broken line and a 404: every line gets a result; rows land in PG."""
    platform.route("/files/data.csv", b"a,b\n1,2\n", content_type="text/csv")
    ctx = make_ctx(database_url=pg_url)
    lines = [
        json.dumps({"ingest_type": "dataset", "base_url": f"{platform.base}/files/data.csv", "link_source": "doi"}),
        "{not json",
        json.dumps({"ingest_type": "pdf", "base_url": "https://x"}),
        json.dumps({"ingest_type": "dataset", "base_url": f"{platform.base}/missing"}),
    ]
    stream = io.StringIO()
    summary = run_requests(lines, ctx, "requests.jsonl", stream)
    docs = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [d["status"] for d in docs] == ["success-file", "invalid-request", "invalid-request", "terminal-bad-status"]
    assert (summary.requests, summary.hits, summary.by_status["invalid-request"]) == (4, 1, 2)
    assert docs[0]["request"]["link_source"] == "doi" and docs[0]["retryable"] is False
    assert "line 2" in docs[1]["error_message"] and "requests.jsonl" in docs[1]["error_message"]
    assert "'pdf' is not 'dataset'" in docs[2]["error_message"]
    assert ctx.store.engine.dialect.name == "postgresql"
    assert ctx.store.get("dataset", f"{platform.base}/missing").terminal_status_code == 404
