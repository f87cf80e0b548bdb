"""Embedded search index: SQLite FTS5 files in a directory, no server needed.

Each physical index is ``<dir>/<alias>-<yyyymmddhhmmss>.sqlite3`` holding the documents (``docs``) and a
full-text table (``fts``, same rowids). ``<dir>/<alias>.alias`` names the index the alias points at; it is
replaced atomically (``os.replace``), so a full build swaps in like an Elasticsearch alias. Incremental
updates run in one transaction: readers see all of an update or none of it.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections.abc import Callable, Iterable
from contextlib import closing
from datetime import datetime
from pathlib import Path

from ingest_assets.core.errors import NotFoundError
from ingest_assets.records.indexing.naming import NO_INDEX_HINT, build_name, check_alias
from ingest_assets.records.indexing.results import (
    DEFAULT_MAX_FAILURE_RATE,
    IndexBuildRefused,
    IndexStats,
    Tally,
    utc_now,
)
from ingest_assets.records.indexing.search_index import SearchIndex

SCHEMA = """
CREATE TABLE IF NOT EXISTS docs (rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, document TEXT NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    title, creator, subject, description, place, provider, text, tokenize = 'unicode61 remove_diacritics 2'
);
"""
FTS_COLUMNS = ("title", "creator", "subject", "description", "place", "provider", "text")
RANK = "bm25(fts, 10.0, 5.0, 5.0, 2.0, 3.0, 3.0, 1.0)"  # weights follow FTS_COLUMNS
WRITE_LOCK_TIMEOUT = 600.0  # seconds a writer waits for another process's update of the same index
QUERY_PART = re.compile(r'"([^"]*)"?|(\S+)')
WORD = re.compile(r"\w+")


class EmbeddedSearchIndex(SearchIndex):
    """Search index in a local directory (SQLite FTS5)."""

    def __init__(self, directory: str | os.PathLike, *, clock: Callable[[], datetime] = utc_now):
        self.directory = Path(directory)
        self._clock = clock

    def full_build(
        self, alias: str, records: Iterable[dict], *, max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE
    ) -> IndexStats:
        """Load ``records`` into a new index file, then point ``alias`` at it and delete the previous one.
        Deletion records are counted, nothing is stored for them. Refuses the swap (IndexBuildRefused)
        when more than ``max_failure_rate`` of the input failed."""
        check_alias(alias)
        self.directory.mkdir(parents=True, exist_ok=True)
        previous = self._target(alias)
        name = self._new_index(alias)
        try:
            with closing(self._open(name)) as conn:
                tally = Tally(alias, name)
                self._load(conn, tally, records, store_deletes=False)
                conn.execute("INSERT INTO fts(fts) VALUES ('optimize')")
                conn.commit()
                stats = tally.finish(0, _count(conn))
            if tally.failure_rate > max_failure_rate:
                raise IndexBuildRefused(
                    f"{stats.failed} of {tally.input} documents failed (more than {max_failure_rate:.0%}); "
                    f"alias {alias!r} left unchanged", stats=stats,
                )
            self._point(alias, name)
        except BaseException:
            self._drop(name)
            raise
        if previous and previous != name:
            self._drop(previous)
        return stats

    def apply(self, alias: str, records: Iterable[dict]) -> IndexStats:
        """Upsert and delete (``deleted=True``) records in the index behind ``alias`` (created if missing),
        in one transaction."""
        check_alias(alias)
        self.directory.mkdir(parents=True, exist_ok=True)
        name = self._target(alias)
        if name is None:
            name = self._new_index(alias)
            self._open(name).close()
            self._point(alias, name)
        with closing(self._open(name)) as conn:
            before = _count(conn)
            tally = Tally(alias, name)
            try:
                self._load(conn, tally, records, store_deletes=True)
                conn.commit()
            except BaseException:
                conn.rollback()
                raise
            return tally.finish(before, _count(conn))

    def count(self, alias: str) -> int:
        with closing(self._read(alias)) as conn:
            return _count(conn)

    def search(self, alias: str, query: str, size: int = 10) -> list[dict]:
        """Documents matching all words of ``query``, best first. ``"a phrase"`` and ``prefix*`` work;
        '' or '*' matches all documents."""
        match = fts_query(query)
        with closing(self._read(alias)) as conn:
            if match is None:
                rows = conn.execute("SELECT document FROM docs ORDER BY rowid LIMIT ?", (size,))
            else:
                rows = conn.execute(
                    f"SELECT d.document FROM fts JOIN docs d ON d.rowid = fts.rowid WHERE fts MATCH ? "
                    f"ORDER BY {RANK} LIMIT ?", (match, size),
                )
            return [json.loads(document) for (document,) in rows]

    def _load(self, conn: sqlite3.Connection, tally: Tally, records: Iterable[dict], store_deletes: bool) -> None:
        for record_id, deleted, document in tally.valid(records):
            row = conn.execute("SELECT rowid FROM docs WHERE id = ?", (record_id,)).fetchone()
            if deleted:
                if row and store_deletes:
                    conn.execute("DELETE FROM docs WHERE rowid = ?", row)
                    conn.execute("DELETE FROM fts WHERE rowid = ?", row)
                tally.deleted(found=bool(row and store_deletes))
                continue
            try:
                columns = fts_columns(json.loads(document))
            except (ValueError, TypeError, AttributeError) as err:
                tally.failure(record_id, "index", "document_parsing_exception", f"document is not a JSON object: {err}")
                continue
            if row:
                conn.execute("UPDATE docs SET document = ? WHERE rowid = ?", (document, row[0]))
                conn.execute("DELETE FROM fts WHERE rowid = ?", row)
                rowid = row[0]
            else:
                rowid = conn.execute("INSERT INTO docs (id, document) VALUES (?, ?)", (record_id, document)).lastrowid
            conn.execute(f"INSERT INTO fts (rowid, {', '.join(FTS_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                         (rowid, *columns))
            tally.indexed(created=row is None)

    def _new_index(self, alias: str) -> str:
        return build_name(alias, self._clock(), lambda candidate: not self._reserve(candidate))

    def _reserve(self, name: str) -> bool:
        """Create the (empty) index file exclusively, so concurrent builds never share one."""
        try:
            os.close(os.open(self._file(name), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        except FileExistsError:
            return False
        return True

    def _file(self, name: str) -> Path:
        return self.directory / f"{name}.sqlite3"

    def _alias_file(self, alias: str) -> Path:
        return self.directory / f"{alias}.alias"

    def _target(self, alias: str) -> str | None:
        try:
            return self._alias_file(alias).read_text(encoding="utf-8").strip() or None
        except FileNotFoundError:
            return None

    def _point(self, alias: str, name: str) -> None:
        """Point ``alias`` at index ``name`` atomically."""
        temporary = self.directory / f".{alias}.alias.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(name + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self._alias_file(alias))

    def _drop(self, name: str) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{self._file(name)}{suffix}").unlink(missing_ok=True)

    def _open(self, name: str) -> sqlite3.Connection:
        conn = sqlite3.connect(self._file(name), timeout=WRITE_LOCK_TIMEOUT)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.executescript(SCHEMA)
        return conn

    def _read(self, alias: str) -> sqlite3.Connection:
        name = self._target(check_alias(alias))
        path = self._file(name) if name else None
        if path is None or not path.exists():
            raise NotFoundError(f"no search index behind alias {alias!r}", file=str(self.directory), hint=NO_INDEX_HINT)
        return sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=30)


def _count(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT count(*) FROM docs").fetchone()[0]


def fts_columns(document: dict) -> tuple[str, ...]:
    """The full-text columns (FTS_COLUMNS order) of an IndexRecord document."""
    source = document.get("sourceResource") or {}

    def names(*fields: str) -> list[str]:
        return [item.get("name", "") if isinstance(item, dict) else item
                for field in fields for item in source.get(field) or ()]

    providers = [agent.get("name") for agent in (document.get("provider"), document.get("dataProvider"))
                 if isinstance(agent, dict)]
    return (
        " ".join(source.get("title") or ()),
        " ".join(names("creator", "contributor", "publisher")),
        " ".join(names("subject", "genre")),
        " ".join(source.get("description") or ()),
        " ".join(names("spatial")),
        " ".join(filter(None, [*providers, *(document.get("intermediateProvider") or ())])),
        " ".join(_strings_in(source)),
    )


def _strings_in(source: dict) -> Iterable[str]:
    """Every string of a sourceResource (documents nest at most list -> object -> string)."""
    for key, value in source.items():
        if key == "@id":
            continue
        for item in value if isinstance(value, list) else (value,):
            if isinstance(item, str):
                yield item
            elif isinstance(item, dict):
                yield from (text for text in item.values() if isinstance(text, str))


def fts_query(query: str) -> str | None:
    """User query -> FTS5 MATCH expression: every word required, quoted so no input is a syntax error.
    ``"a phrase"`` stays a phrase, ``word*`` a prefix. None for '' or '*' (match all)."""
    terms = []
    for phrase, bare in QUERY_PART.findall(query):
        if phrase:
            words = WORD.findall(phrase)
            if words:
                terms.append('"' + " ".join(words) + '"')
            continue
        words = WORD.findall(bare)
        terms += [f'"{word}"' for word in words]
        if words and bare.endswith("*"):
            terms[-1] += "*"
    return " ".join(terms) or None
