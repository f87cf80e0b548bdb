"""EmbeddedSearchIndex (SQLite FTS5): builds, alias swap, incremental updates with deletes, search, CLI."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from ingest_assets.core.errors import IngestError
from ingest_assets.records.indexing import (
    EmbeddedSearchIndex,
    IndexBuildRefused,
    deletion_record,
    index_record,
    open_search_index,
)
from ingest_assets.records.indexing.embedded_index import FORMAT, WORD, fts_columns
from ingest_assets_tests.support import dpla_published

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def records(map_records):
    return [index_record(record) for record in map_records]


@pytest.fixture
def index(tmp_path, build_clock):
    search_index = open_search_index(tmp_path / "search", clock=build_clock)
    assert isinstance(search_index, EmbeddedSearchIndex)
    return search_index


def ids(docs):
    return sorted(doc["id"] for doc in docs)


def test_full_build_then_search(index, tmp_path, records):
    stats = index.full_build("dpla-map4", [*records, deletion_record("0" * 32)])

    assert (stats.indexed, stats.deleted, stats.failed, stats.created) == (3, 1, 0, 3)
    assert stats.index == "dpla-map4-20261122030000"
    rec = stats.reconciliation
    assert (rec.input, rec.accounted, rec.expected_count, rec.index_count, rec.ok) == (4, 4, 3, 3, True)
    assert (tmp_path / "search" / "dpla-map4.alias").read_text() == "dpla-map4-20261122030000\n"
    assert index.count("dpla-map4") == 3
    assert ids(index.search("dpla-map4", "hamsters", 10)) == [
        "4d85a6bd965dde8352c8235c43fe1c44", "c340ca5de0e46b0538213c65c650c8c6"]
    assert index.search("dpla-map4", "Paducah sun", 10) == [json.loads(records[2]["document"])]
    # phrase, prefix, subject and provider columns, diacritics folded, words all required
    assert ids(index.search("dpla-map4", '"dwarf hamsters"', 10)) == ["4d85a6bd965dde8352c8235c43fe1c44"]
    assert ids(index.search("dpla-map4", "hamst*", 10)) == [
        "4d85a6bd965dde8352c8235c43fe1c44", "c340ca5de0e46b0538213c65c650c8c6"]
    assert ids(index.search("dpla-map4", "Kentucky newspapers", 10)) == ["7781509fd5609a093a5c58dcf5017d4d"]
    assert index.search("dpla-map4", "hamsters Kentucky", 10) == []
    assert ids(index.search("dpla-map4", "Pádúcah", 10)) == ["7781509fd5609a093a5c58dcf5017d4d"]
    assert len(index.search("dpla-map4", "*", 2)) == 2


def test_query_syntax_never_errors(index, records):
    index.full_build("dpla-map4", records)
    for query in ('"unbalanced', "AND OR NOT", "title:(", "-", 'hamsters"', "NEAR(a b)"):
        index.search("dpla-map4", query, 5)
    assert ids(index.search("dpla-map4", 'hamsters"', 5)) == [
        "4d85a6bd965dde8352c8235c43fe1c44", "c340ca5de0e46b0538213c65c650c8c6"]


def test_rebuild_swaps_alias_and_keeps_previous_file(index, tmp_path, records):
    index.full_build("dpla-map4", records)
    stats = index.full_build("dpla-map4", records[:1])

    assert stats.index == "dpla-map4-20261122030001"
    assert (tmp_path / "search" / "dpla-map4.alias").read_text() == "dpla-map4-20261122030001\n"
    assert sorted(p.name for p in (tmp_path / "search").iterdir() if p.suffix == ".sqlite3") == [
        "dpla-map4-20261122030000.sqlite3", "dpla-map4-20261122030001.sqlite3"]  # kept for rollback
    assert index.count("dpla-map4") == 1
    assert [(i.name, i.count, i.aliased) for i in index.indices("dpla-map4")] == [
        ("dpla-map4-20261122030000", 3, False), ("dpla-map4-20261122030001", 1, True)]


def test_apply_upserts_and_deletes(index, records, map_records):
    index.full_build("dpla-map4", records)
    retitled = dict(map_records[0], sourceResource={**map_records[0]["sourceResource"],
                                                   "title": ["Children and their hamsters, 1996"]})
    stats = index.apply("dpla-map4", [
        index_record(retitled), deletion_record(records[1]["id"]), deletion_record("f" * 32),
        {"id": "c" * 32, "deleted": False, "document": "not json"},
    ])

    assert (stats.indexed, stats.created, stats.deleted, stats.removed, stats.failed) == (1, 0, 2, 1, 1)
    assert stats.failures[0]["id"] == "c" * 32 and stats.failures[0]["type"] == "document_parsing_exception"
    rec = stats.reconciliation
    assert (rec.input, rec.accounted, rec.count_before, rec.expected_count, rec.index_count, rec.ok) == (
        4, 4, 3, 2, 2, True)
    assert ids(index.search("dpla-map4", "hamsters", 10)) == ["4d85a6bd965dde8352c8235c43fe1c44"]
    assert index.search("dpla-map4", "play", 10) == []  # the old title is no longer searchable
    [hit] = index.search("dpla-map4", "their hamsters", 10)
    assert hit["sourceResource"]["title"] == ["Children and their hamsters, 1996"]


def test_an_id_twice_in_one_write_keeps_the_last_document(index, records, map_records):
    """A build inserts without looking ids up first; an id met again in the same write still updates its row."""
    retitled = index_record(dict(map_records[0], sourceResource={**map_records[0]["sourceResource"],
                                                                 "title": ["Children and their gerbils, 1996"]}))
    stats = index.full_build("dpla-map4", [records[0], records[1], retitled])

    assert (stats.indexed, stats.created, stats.reconciliation.index_count, stats.reconciliation.ok) == (3, 2, 2, True)
    assert index.search("dpla-map4", "*", 10) == [json.loads(retitled["document"]), json.loads(records[1]["document"])]
    assert ids(index.search("dpla-map4", "gerbils", 10)) == [records[0]["id"]]
    assert index.search("dpla-map4", "play", 10) == []  # the first title's words are gone


def test_documents_orjson_refuses_are_read_as_before(index, records):
    """The stdlib parser reads what orjson refuses (NaN); one nested too deeply for either is a failure of its own,
    and the other records are indexed."""
    odd = [{"id": "a" * 32, "deleted": False, "document": '{"id": "%s", "sourceResource": {"title": ["Not a number"]}, '
                                                           '"score": NaN}' % ("a" * 32)},
           {"id": "b" * 32, "deleted": False, "document": "[" * 100_000 + "]" * 100_000}]
    stats = index.full_build("dpla-map4", [*records, *odd])

    assert (stats.indexed, stats.failed, stats.failures[0]["id"]) == (4, 1, odd[1]["id"])
    assert stats.failures[0]["reason"] == "document is not a JSON object: nested too deeply to parse"
    assert ids(index.search("dpla-map4", "number", 10)) == ["a" * 32]


def test_a_document_with_a_lone_surrogate_is_a_failure_of_its_own(index, records):
    """JSON text may escape a lone surrogate, which SQLite cannot store: that record fails, the others are written."""
    odd = {"id": "c" * 32, "deleted": False, "document": '{"id": "%s", "sourceResource": {"title": ["x \\ud800"]}}' % ("c" * 32)}
    stats = index.apply("fresh", [*records, odd])

    assert (stats.indexed, stats.failed) == (len(records), 1)
    assert (stats.failures[0]["id"], stats.failures[0]["reason"]) == (
        odd["id"], "document is not a JSON object: a string holds a lone surrogate, which is not UTF-8")
    assert index.count("fresh") == len(records)


def test_apply_creates_missing_index(index, records):
    stats = index.apply("fresh", records[1:2])
    assert stats.index == "fresh-20261122030000" and stats.created == 1 and index.count("fresh") == 1


def test_failed_apply_changes_nothing(index, records):
    index.full_build("dpla-map4", records)

    def records_then_crash():
        yield deletion_record(records[0]["id"])
        raise RuntimeError("upstream reader broke")

    with pytest.raises(RuntimeError):
        index.apply("dpla-map4", records_then_crash())
    assert index.count("dpla-map4") == 3


def test_refused_build_keeps_previous_index(index, tmp_path, records):
    index.full_build("dpla-map4", records)
    broken = [{"id": f"{n:032x}", "deleted": False, "document": "[]"} for n in range(2)]
    with pytest.raises(IndexBuildRefused, match="2 of 3 documents failed"):
        index.full_build("dpla-map4", [records[0], *broken])
    assert (tmp_path / "search" / "dpla-map4.alias").read_text() == "dpla-map4-20261122030000\n"
    assert not (tmp_path / "search" / "dpla-map4-20261122030001.sqlite3").exists()
    assert index.count("dpla-map4") == 3


def test_bad_alias_and_missing_index(index):
    with pytest.raises(IngestError, match="search alias must match"):
        index.full_build("../etc", [])
    with pytest.raises(IngestError, match="no search index behind alias 'nothing'"):
        index.search("nothing", "x", 1)


def test_command_line_search(tmp_path, records):
    open_search_index(tmp_path / "search").full_build("dpla-map4", records)
    env = {**os.environ, "INGEST_HOME": str(tmp_path)}  # default index: <home>/search
    command = [sys.executable, "-m", "ingest_assets.cli", "search"]

    found = subprocess.run([*command, "paducah"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert found.returncode == 0, found.stderr
    assert found.stdout == (
        "7781509fd5609a093a5c58dcf5017d4d\tImage 1 of Paducah sun (Paducah, Ky. : 1898), February 20, 1906\t"
        "University of Kentucky\thttps://exploreuk.uky.edu/catalog/xt7cnp1wfn5x_1\n")
    assert "1 hit(s) shown, 3 document(s) in 'dpla-map4'" in found.stderr

    as_json = subprocess.run([*command, "hamsters", "--index", str(tmp_path / "search"), "--json", "--size", "1"],
                             cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert [json.loads(line)["id"] for line in as_json.stdout.splitlines()] in (
        ["4d85a6bd965dde8352c8235c43fe1c44"], ["c340ca5de0e46b0538213c65c650c8c6"])

    missing = subprocess.run([*command, "x", "--alias", "other"], cwd=REPO, env=env, capture_output=True,
                             text=True, timeout=60)
    assert missing.returncode == 1 and "no search index behind alias 'other'" in missing.stderr


def vocabulary(path: Path) -> list[tuple]:
    """Each word of a file's full-text index with the count of documents and of places holding it."""
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE VIRTUAL TABLE temp.words USING fts5vocab(main, fts, 'row')")
        return conn.execute("SELECT term, doc, cnt FROM temp.words ORDER BY term").fetchall()


@pytest.fixture
def published(shared_fixtures) -> list[dict]:
    """What DPLA published for real records (enrichment included), as index documents."""
    return [json.loads(path.read_text(encoding="utf-8")) for path in dpla_published.documents()]


def test_every_string_of_a_real_document_is_in_exactly_one_column(published):
    assert len(published) >= 10
    for document in published:
        source = {key: value for key, value in document["sourceResource"].items() if key != "@id"}
        columns = fts_columns(document)
        expected = sorted(WORD.findall(" ".join(flat_strings(source))))
        assert sorted(WORD.findall(" ".join(columns[:5] + columns[6:]))) == expected, document["id"]  # not providers


def flat_strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return [text for item in items for text in flat_strings(item)]


def test_updates_and_deletes_leave_the_words_a_fresh_build_has(index, tmp_path, published):
    """The contentless table forgets a document's words only when told the very text it indexed: after updating
    and deleting real documents, the index holds exactly the words of a build of what remains."""
    documents = published
    rows = [{"id": doc["id"], "document": json.dumps(doc)} for doc in documents]
    changed = [dict(doc, sourceResource={**doc["sourceResource"], "title": [f"Retitled {n} quokka"]})
               for n, doc in enumerate(documents[::2])]
    gone = [doc["id"] for doc in documents[1::4]]
    first = index.create_index("dpla-map4")
    index.write(first, rows)
    index.write(first, [*({"id": doc["id"], "document": json.dumps(doc)} for doc in changed),
                        *(deletion_record(i) for i in gone)])
    final = {doc["id"]: doc for doc in documents} | {doc["id"]: doc for doc in changed}
    fresh = EmbeddedSearchIndex(tmp_path / "fresh").create_index("dpla-map4")
    EmbeddedSearchIndex(tmp_path / "fresh").write(fresh, [{"id": i, "document": json.dumps(doc)}
                                                          for i, doc in final.items() if i not in gone])

    assert vocabulary(index.directory / f"{first}.sqlite3") == vocabulary(tmp_path / "fresh" / f"{fresh}.sqlite3")
    assert len(index.search(first, "quokka", 50)) == len([doc for doc in changed if doc["id"] not in gone])


LEGACY = """
CREATE TABLE docs (rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, document TEXT NOT NULL);
CREATE VIRTUAL TABLE fts USING fts5(
    title, creator, subject, description, place, provider, text, tokenize = 'unicode61 remove_diacritics 2'
);
"""


def test_a_file_an_earlier_version_wrote_is_searched_then_laid_out_anew_on_its_next_write(index, records, map_records):
    """Format 0 (the full-text table kept its own text, plus a catch-all column) is read as it is; the first write
    rebuilds its full-text table from its documents, in the write's own file, before applying the write."""
    name = index.create_index("dpla-map4")
    path = index.directory / f"{name}.sqlite3"
    path.unlink()
    with closing(sqlite3.connect(path)) as conn:
        conn.executescript(LEGACY)
        for rowid, record in enumerate(records, start=1):
            conn.execute("INSERT INTO docs VALUES (?, ?, ?)", (rowid, record["id"], record["document"]))
            conn.execute("INSERT INTO fts (rowid, title, text) VALUES (?, ?, ?)",
                         (rowid, *fts_columns(json.loads(record["document"]))[:1], "legacy catch-all"))
        conn.commit()
    assert ids(index.search(name, "hamsters", 10)) == ["4d85a6bd965dde8352c8235c43fe1c44"]
    assert len(index.search(name, "catch-all", 10)) == 3

    retitled = dict(map_records[0], sourceResource={**map_records[0]["sourceResource"], "title": ["Gerbils, 1996"]})
    stats = index.write(name, [index_record(retitled), deletion_record(records[1]["id"])])

    assert (stats.indexed, stats.removed, stats.reconciliation.ok) == (1, 1, True)
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == FORMAT
    assert index.search(name, "catch-all", 10) == []
    assert ids(index.search(name, "gerbils", 10)) == [records[0]["id"]]
    assert index.search(name, "play", 10) == []  # the old title's words are gone
    assert ids(index.search(name, "Paducah", 10)) == [records[2]["id"]]  # a description word: the rebuilt columns


def test_the_format_changes_with_the_text_the_columns_give():
    """Deleting from the contentless table needs the very text it indexed, so text that fts_columns gives other
    than before is a new FORMAT (files of the old one are then laid out anew): this pins both together."""
    document = {"sourceResource": {"@id": "x", "title": ["A"], "creator": ["B", {"name": "C", "role": "D"}],
                                   "genre": [{"name": "E"}], "description": ["F"], "spatial": [{"name": "G", "state": "H"}],
                                   "date": [{"displayDate": "I"}], "type": ["J"]},
                "provider": {"name": "K"}, "dataProvider": {"name": "L"}, "intermediateProvider": ["M"]}
    assert (FORMAT, fts_columns(document)) == (1, ("A", "B C", "E", "F", "G", "K L M", "D H I J"))
