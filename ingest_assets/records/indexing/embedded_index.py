"""Embedded search index: SQLite FTS5 files in a directory, no server needed.

Each physical index is ``<dir>/<name>.sqlite3`` (names from :mod:`.naming`) holding the documents (``docs``)
and a full-text index of them (``fts``, same rowids; contentless: the words' positions only, the text is the
documents'). ``<dir>/<alias>.alias`` lists the indices the alias points at,
one a line; it is updated under a file lock and replaced atomically (``os.replace``), so a flip is one action
like an Elasticsearch alias update. Writes run in one transaction: readers see all of an update or none of it.
A search over several indices ranks each by bm25 and merges them, as Elasticsearch merges its shards.
"""

from __future__ import annotations

import fcntl
import heapq
import json
import os
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import closing, contextmanager
from datetime import datetime
from pathlib import Path

import orjson

from ingest_assets.core import json_input
from ingest_assets.core.errors import IngestError, NotFoundError
from ingest_assets.records.indexing.naming import NO_INDEX_HINT, build_name, check_alias, parse_index
from ingest_assets.records.indexing.results import IndexStats, Tally, utc_now
from ingest_assets.records.indexing.search_index import (
    MAX_IDS, TAG_PAGE, AliasChanged, check_hits, IndexHealth, PhysicalIndex, SearchIndex,
)

DOCS_TABLE = "CREATE TABLE IF NOT EXISTS docs (rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, document TEXT NOT NULL)"
FTS_COLUMNS = ("title", "creator", "subject", "description", "place", "provider", "other")
FTS_TABLE = (f"CREATE VIRTUAL TABLE fts USING fts5({', '.join(FTS_COLUMNS)}, content = '', "
             "tokenize = 'unicode61 remove_diacritics 2')")
FORMAT = 1  # the files' layout (PRAGMA user_version); bump it whenever fts_columns gives other text (see _lay_out)
RANK = "bm25(fts, 10.0, 5.0, 5.0, 2.0, 3.0, 3.0, 1.0)"  # weights follow FTS_COLUMNS
WRITE_LOCK_TIMEOUT = 600.0  # seconds a writer waits for another process's update of the same index
BACKUP_PAGES = 4096  # pages copied per step of a copy (the source stays readable between steps)
INSERT_DOC = "INSERT INTO docs (id, document) VALUES (?, ?) ON CONFLICT (id) DO NOTHING"
INSERT_FTS = f"INSERT INTO fts (rowid, {', '.join(FTS_COLUMNS)}) VALUES ({', '.join('?' * (len(FTS_COLUMNS) + 1))})"
UNINDEX = f"INSERT INTO fts (fts, rowid, {', '.join(FTS_COLUMNS)}) VALUES ('delete', {', '.join('?' * (len(FTS_COLUMNS) + 1))})"
DOCUMENT_OF = "SELECT rowid, document FROM docs WHERE id = ?"
QUERY_PART = re.compile(r'"([^"]*)"?|(\S+)')
WORD = re.compile(r"\w+")


class EmbeddedSearchIndex(SearchIndex):
    """Search index in a local directory (SQLite FTS5)."""

    def __init__(self, directory: str | os.PathLike, *, clock: Callable[[], datetime] = utc_now):
        self.directory = Path(directory)
        self._clock = clock

    # -- physical indices -----------------------------------------------------------------------------

    def create_index(self, alias: str, provider: str | None = None) -> str:
        self.directory.mkdir(parents=True, exist_ok=True)
        name = build_name(alias, self._clock(), lambda candidate: not self._reserve(candidate), provider)
        self._open(name).close()
        return name

    def write(self, index: str, records: Iterable[dict]) -> IndexStats:
        """In one transaction: readers see all of the update or none of it."""
        with closing(self._open(self._existing(index))) as conn:
            before = _count(conn)
            tally = Tally(index, index)
            try:
                self._load(conn, tally, records)
                conn.commit()
            except BaseException:
                conn.rollback()
                raise
            return tally.finish(before, _count(conn))

    def copy(self, source: str, target: str) -> int:
        """SQLite's online backup, page by page (the full-text index comes along, nothing is tokenized again)."""
        with closing(_read_only(self._file(self._existing(source)))) as origin, \
                closing(sqlite3.connect(self._file(self._existing(target)), timeout=WRITE_LOCK_TIMEOUT)) as copy:
            origin.backup(copy, pages=BACKUP_PAGES)
            return _count(copy)

    def drop(self, index: str) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{self._file(check_alias(index))}{suffix}").unlink(missing_ok=True)

    def health(self, index: str) -> IndexHealth:
        """Green when the file passes SQLite's ``quick_check``, red otherwise (or when it is missing)."""
        path = self._file(check_alias(index))
        if not path.exists():
            return IndexHealth(False, "red", {"engine": "sqlite", "file": str(path), "problem": "missing"})
        try:
            with closing(_read_only(path)) as conn:
                verdict = conn.execute("PRAGMA quick_check").fetchone()[0]
        except sqlite3.DatabaseError as err:  # not a database any more
            verdict = str(err)
        ok = verdict == "ok"
        return IndexHealth(ok, "green" if ok else "red", {"engine": "sqlite", "file": str(path), "quick_check": verdict})

    def indices(self, alias: str) -> list[PhysicalIndex]:
        behind = set(self.aliased(alias))
        found = []
        for path in self.directory.glob(f"{check_alias(alias)}-*.sqlite3"):
            parsed = parse_index(alias, path.name.removesuffix(".sqlite3"))
            if parsed is not None:
                found.append(PhysicalIndex(parsed.name, parsed.provider, parsed.created, self._count_of(parsed.name),
                                           parsed.name in behind))
        return sorted(found, key=lambda index: (index.created, index.name))

    def _count_of(self, name: str) -> int | None:
        """The index's document count, None when its file cannot be read (listed still, so it can be seen)."""
        try:
            return self.count(name)
        except IngestError:
            return None

    # -- the alias --------------------------------------------------------------------------------------

    def aliased(self, alias: str) -> list[str]:
        try:
            text = self._alias_file(check_alias(alias)).read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        return sorted(line.strip() for line in text.splitlines() if line.strip())

    def update_alias(self, alias: str, add: Sequence[str] = (), remove: Sequence[str] = ()) -> None:
        """Compare and swap under an exclusive lock on ``<alias>.alias.lock``; the file is replaced atomically."""
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self.directory / f"{check_alias(alias)}.alias.lock", "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            current = set(self.aliased(alias))
            gone = sorted(set(remove) - current)
            if gone:
                raise AliasChanged(f"alias {alias!r} no longer points at {gone} (it points at {sorted(current)}): "
                                   "another update got there first; nothing changed", file=str(self.directory))
            for name in add:
                self._existing(name)
            self._point(alias, sorted((current - set(remove)) | set(add)))

    # -- reading ----------------------------------------------------------------------------------------

    def count(self, target: str) -> int:
        total = 0
        for path in self._files(target):
            with _reading(path) as conn:
                total += _count(conn)
        return total

    def search(self, target: str, query: str, size: int = 10) -> list[dict]:
        """Documents matching all words of ``query``, best first (each index ranked by bm25, then merged).
        ``"a phrase"`` and ``prefix*`` work; '' or '*' matches all documents."""
        check_hits(size)
        match = fts_query(query)
        ranked: list[tuple[float, int, int, str]] = []
        for number, path in enumerate(self._files(target)):
            with _reading(path) as conn:
                if match is None:
                    rows = conn.execute("SELECT 0, rowid, document FROM docs ORDER BY rowid LIMIT ?", (size,))
                else:
                    rows = conn.execute(
                        f"SELECT {RANK}, d.rowid, d.document FROM fts JOIN docs d ON d.rowid = fts.rowid "
                        f"WHERE fts MATCH ? ORDER BY {RANK} LIMIT ?", (match, size),
                    )
                ranked += [(rank, number, rowid, document) for rank, rowid, document in rows]
        return [json.loads(document) for *_, document in sorted(ranked)[:size]]

    def documents(self, target: str, ids: Sequence[str]) -> dict[str, dict]:
        wanted = list(dict.fromkeys(ids))
        if len(wanted) > MAX_IDS:
            raise ValueError(f"at most {MAX_IDS} ids per call, got {len(wanted)}")
        found: dict[str, dict] = {}
        marks = ", ".join("?" * len(wanted))
        for path in self._files(target) if wanted else ():
            with _reading(path) as conn:
                for record_id, document in conn.execute(f"SELECT id, document FROM docs WHERE id IN ({marks})", wanted):
                    found.setdefault(record_id, json.loads(document))
        return found

    def tagged(self, target: str, tags: Sequence[str]) -> Iterator[tuple[str, list[str]]]:
        """Each index file's tagged documents by id (SQLite's JSON functions on the stored document), merged."""
        wanted = list(dict.fromkeys(tags))
        if not wanted:
            return iter(())
        return heapq.merge(*(_tagged_in(path, wanted) for path in self._files(target)))

    # -- files ------------------------------------------------------------------------------------------

    def _load(self, conn: sqlite3.Connection, tally: Tally, records: Iterable[dict]) -> None:
        cursor = conn.cursor()  # one cursor for every statement: conn.execute makes a new one each call
        for record_id, deleted, document in tally.valid(records):
            if deleted:
                row = cursor.execute(DOCUMENT_OF, (record_id,)).fetchone()
                if row:
                    cursor.execute("DELETE FROM docs WHERE rowid = ?", row[:1])
                    _unindex(cursor, *row)
                tally.deleted(found=bool(row))
                continue
            try:
                columns = fts_columns(_decode(document))
            except (ValueError, TypeError, AttributeError) as err:
                tally.failure(record_id, "index", "document_parsing_exception", f"document is not a JSON object: {err}")
                continue
            # insert first, look up only when the id is taken: a new id (most of a build) costs no SELECT
            created = cursor.execute(INSERT_DOC, (record_id, document)).rowcount == 1
            if created:
                rowid = cursor.lastrowid
            else:
                rowid, stored = cursor.execute(DOCUMENT_OF, (record_id,)).fetchone()
                cursor.execute("UPDATE docs SET document = ? WHERE rowid = ?", (document, rowid))
                _unindex(cursor, rowid, stored)
            cursor.execute(INSERT_FTS, (rowid, *columns))
            tally.indexed(created=created)

    def _reserve(self, name: str) -> bool:
        """Create the (empty) index file exclusively, so concurrent builds never share one."""
        try:
            os.close(os.open(self._file(name), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        except FileExistsError:
            return False
        return True

    def _file(self, name: str) -> Path:
        return self.directory / f"{name}.sqlite3"

    def _existing(self, index: str) -> str:
        if not self._file(check_alias(index)).exists():
            raise NotFoundError(f"no search index {index!r}", file=str(self.directory),
                                hint="see `ingest-assets index status` for the indices kept")
        return index

    def _alias_file(self, alias: str) -> Path:
        return self.directory / f"{alias}.alias"

    def _point(self, alias: str, names: list[str]) -> None:
        """Write the alias file (one index name a line) atomically."""
        temporary = self.directory / f".{alias}.alias.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write("".join(f"{name}\n" for name in names))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self._alias_file(alias))

    def _open(self, name: str) -> sqlite3.Connection:
        conn = sqlite3.connect(self._file(name), timeout=WRITE_LOCK_TIMEOUT)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        if conn.execute("PRAGMA user_version").fetchone()[0] != FORMAT:
            _lay_out(conn)
        return conn

    def _files(self, target: str) -> list[Path]:
        """The index files behind ``target``: a physical index, or every index its alias points at."""
        if self._file(check_alias(target)).exists() and not self._alias_file(target).exists():
            return [self._file(target)]
        paths = [self._file(name) for name in self.aliased(target)]
        if not paths or not all(path.exists() for path in paths):
            raise NotFoundError(f"no search index behind alias {target!r}", file=str(self.directory), hint=NO_INDEX_HINT)
        return paths


def _read_only(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=30)


@contextmanager
def _reading(path: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection to ``path`` whose SQLite errors come out as an IngestError naming the file (a
    damaged file is not worth a retry, a locked one is)."""
    try:
        with closing(_read_only(path)) as conn:
            yield conn
    except sqlite3.DatabaseError as err:
        raise IngestError(f"search index file cannot be read: {err}", file=str(path),
                          retryable=isinstance(err, sqlite3.OperationalError),
                          hint="see `ingest-assets index status`; roll back from it or rebuild it") from err


def _tagged_in(path: Path, wanted: list[str]) -> Iterator[tuple[str, list[str]]]:
    """The tagged documents of one index file by id, a page at a time in one read transaction (one snapshot)."""
    query = (f"SELECT id, json_extract(document, '$.tags') FROM docs WHERE id > ? AND EXISTS (SELECT 1 FROM "
             f"json_each(docs.document, '$.tags') WHERE value IN ({', '.join('?' * len(wanted))})) ORDER BY id LIMIT ?")
    with _reading(path) as conn:
        conn.execute("BEGIN")
        after = ""
        while True:
            rows = conn.execute(query, (after, *wanted, TAG_PAGE)).fetchall()
            for record_id, carried in rows:
                yield record_id, [tag for tag in json.loads(carried) if tag in wanted]
            if len(rows) < TAG_PAGE:
                return
            after = rows[-1][0]


def _lay_out(conn: sqlite3.Connection) -> None:
    """Give the file this version's tables, in one transaction (readers see the file as it was until it commits):
    a new file gets them empty; one another version wrote keeps its documents and gets its full-text table made
    anew from them (format 0 kept a copy of every column and a catch-all of each document's text)."""
    with conn:
        conn.execute("BEGIN IMMEDIATE")  # the write lock first: another process may be laying it out
        if conn.execute("PRAGMA user_version").fetchone()[0] == FORMAT:
            return
        conn.execute(DOCS_TABLE)
        conn.execute("DROP TABLE IF EXISTS fts")
        conn.execute(FTS_TABLE)
        documents = conn.execute("SELECT rowid, document FROM docs")
        conn.executemany(INSERT_FTS, ((rowid, *fts_columns(_decode(document))) for rowid, document in documents))
        conn.execute(f"PRAGMA user_version = {FORMAT}")


def _unindex(cursor: sqlite3.Cursor, rowid: int, document: str) -> None:
    """Take a stored document's words out of the contentless full-text table: FTS5 needs the very text it
    indexed, which ``fts_columns`` of the stored document gives while :data:`FORMAT` holds."""
    cursor.execute(UNINDEX, (rowid, *fts_columns(_decode(document))))


def _count(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT count(*) FROM docs").fetchone()[0]


def _decode(document: str) -> object:
    """A stored document parsed by orjson (up to twice the stdlib's speed on index documents); what orjson refuses
    (NaN, a lone surrogate) by the kernel's stdlib parser, so the same documents pass and fail with the same
    messages; one nested too deeply for both, or holding a lone surrogate (SQLite could not store its text), is
    its record's ValueError."""
    try:
        return orjson.loads(document)
    except orjson.JSONDecodeError:
        parsed = json_input.loads(document)
    try:  # only here: orjson refuses lone surrogates, so what it parsed is valid UTF-8
        json.dumps(parsed, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("a string holds a lone surrogate, which is not UTF-8") from None
    return parsed


NAMED = frozenset({"creator", "contributor", "publisher", "subject", "genre", "spatial"})  # names in columns
UNNAMED = frozenset({"title", "description", "@id"})  # in columns of their own, or no text


def fts_columns(document: dict) -> tuple[str, ...]:
    """The full-text columns (FTS_COLUMNS order) of an IndexRecord document: every string of its sourceResource
    is in exactly one of them, so a search for words anywhere in it finds them once (``other`` holds the
    strings no named column takes)."""
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
        " ".join(_others(source)),
    )


def _others(source: dict) -> list[str]:
    """The strings of a sourceResource no named column holds (documents nest at most list -> object -> string):
    its other fields' and, of the named fields' objects, every string but the name; gathered into a list (cheaper
    than a generator feeding ``join``)."""
    strings = []
    for key, value in source.items():
        if key in UNNAMED:
            continue
        named = key in NAMED
        for item in value if isinstance(value, list) else (value,):
            if isinstance(item, str):
                if not named:
                    strings.append(item)
            elif isinstance(item, dict):
                strings += [text for field, text in item.items()
                            if isinstance(text, str) and not (named and field == "name")]
    return strings


def fts_query(query: str) -> str | None:
    """User query -> FTS5 MATCH expression: every word required (in any column), quoted so no input is a syntax
    error. ``"a phrase"`` stays a phrase (within one column, as Elasticsearch keeps one within a field), ``word*``
    a prefix. None for '' or '*' (match all)."""
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
