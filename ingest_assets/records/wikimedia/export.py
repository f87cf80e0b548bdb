"""The Wikimedia export of a provider's published day: the records eligible for Commons with the metadata ingestion3's
WikiMetadataEntry writes, in its layout: a folder of Parquet parts (snappy) and ``_SUCCESS``, as Spark writes it,
then ``_MANIFEST``. The columns are those of WikimediaMetadataExecutor's tuple, under the names Spark gives a
tuple's fields (ingest-wikimedia reads them by these names)::

    _1 dplaId   _2 wikiMarkup   _3 iiifManifest ('' when none)   _4 mediaMaster (list)   _5 title (the first, or '')

The records are the day's documents as the alias serves them now (Gate D: :mod:`.gate` first), read in pages of
:data:`~ingest_assets.records.indexing.search_index.MAX_IDS` and written in row groups of as many rows, so memory
stays bounded by a page; the folder appears whole or not at all.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from itertools import islice

import pyarrow as pa
import pyarrow.parquet as pq

from ingest_assets.core.version import software_version
from ingest_assets.records.enrichment.institutions import Institutions, institutions
from ingest_assets.records.indexing import SearchIndex
from ingest_assets.records.indexing.search_index import MAX_IDS
from ingest_assets.records.publishing import render
from ingest_assets.records.publishing.gates import GateResult
from ingest_assets.records.publishing.journal import Journal
from ingest_assets.records.publishing.report import read_report, write_report
from ingest_assets.records.publishing.review import PUBLISHED, Ledger
from ingest_assets.records.wikimedia.eligibility import block_list, judge, with_derived_manifest
from ingest_assets.records.wikimedia.gate import SAMPLE, GateRefused, judge_day
from ingest_assets.records.wikimedia.markup import wiki_markup
from ingest_assets.storage import layout
from ingest_assets.storage.activities import RecordSource, source_from_path
from ingest_assets.storage.backends import Storage
from ingest_assets.storage.manifest import Manifest

PART = "part-00000.snappy.parquet"
SUCCESS = "_SUCCESS"
ROW_GROUP = MAX_IDS  # rows per row group: one page of documents (a row's markup is about 1.5 KB)
COLUMNS = (("_1", "dplaId", pa.string()), ("_2", "wikiMarkup", pa.string()), ("_3", "iiifManifest", pa.string()),
           ("_4", "mediaMaster", pa.list_(pa.string())), ("_5", "title", pa.string()))
SCHEMA = pa.schema([pa.field(name, kind, metadata={"name": meaning}) for name, meaning, kind in COLUMNS])


@dataclass
class WikiExport:
    """What an export read and wrote: the day's documents, those no longer live, the eligible ones (the rows) and,
    per criterion, the records that failed it."""

    key: str
    read: int = 0
    not_live: int = 0
    eligible: int = 0
    failed: Counter = field(default_factory=Counter)
    bytes: int = 0

    def summary(self) -> dict[str, int]:
        return {"read": self.read, "not_live": self.not_live, "eligible": self.eligible,
                **{f"failed_{name}": self.failed[name] for name in ("institution", "asset", "rights", "id")}}


def wiki_row(document: dict) -> dict:
    """The row of an eligible record (its document with any derived IIIF manifest)."""
    titles = (document.get("sourceResource") or {}).get("title") or [""]
    return {"_1": document["id"], "_2": wiki_markup(document), "_3": document.get("iiifManifest") or "",
            "_4": list(document.get("mediaMaster") or ()), "_5": titles[0]}


def live_documents(index: SearchIndex, alias: str, ids: Iterable[str], export: WikiExport) -> Iterator[dict]:
    """The documents of ``ids`` the alias serves, a page at a time; those it no longer serves are counted."""
    stream = iter(ids)
    while page := list(islice(stream, MAX_IDS)):
        found = index.documents(alias, page)
        export.read += len(page)
        export.not_live += len(page) - len(found)
        yield from (found[i] for i in page if i in found)


def eligible_rows(documents: Iterable[dict], table: Institutions, blocked: Callable[[str], bool],
                  export: WikiExport) -> Iterator[dict]:
    for document in documents:
        document = with_derived_manifest(document)
        criteria = judge(document, table, blocked)
        if criteria.eligible:
            export.eligible += 1
            yield wiki_row(document)
        else:
            export.failed.update(criteria.failed())


def write_export(storage: Storage, export: WikiExport, rows: Iterable[dict], manifest: Manifest) -> WikiExport:
    """The folder ``export.key``: the rows in one Parquet part, ``_SUCCESS``, then ``_MANIFEST`` (its record count
    and summary filled in once every row is written)."""
    with storage.folder(export.key) as folder:
        with folder.open(PART) as handle, pq.ParquetWriter(handle, SCHEMA, compression="snappy") as writer:
            stream = iter(rows)
            while batch := list(islice(stream, ROW_GROUP)):
                writer.write_table(pa.Table.from_pylist(batch, schema=SCHEMA))
        folder.write_bytes(SUCCESS, b"")
        manifest.record_count = export.eligible
        manifest.extra.update({f"Summary {name}": str(value) for name, value in export.summary().items()})
        folder.write_bytes(layout.MANIFEST, manifest.to_bytes())
        export.bytes = folder.bytes_written
    return export


def export_day(storage: Storage, index: SearchIndex, alias: str, provider: str, day: date, started: datetime,
               ids: Iterable[str], source: str, table: Institutions, blocked: Callable[[str], bool]) -> WikiExport:
    """Export the eligible records among ``ids`` (the day's published documents, read through ``alias``) to a new
    folder of the day; ``source``: the indexing output they come from (the ``_MANIFEST``'s input)."""
    started = layout.next_free_second(started, lambda moment: not storage.exists(layout.wiki_key(provider, day, moment)))
    export = WikiExport(layout.wiki_key(provider, day, started))
    manifest = Manifest("wiki", provider, "wiki.parquet", 0, started, software_version(), day.isoformat(), [source],
                        {"Index": alias, "Institutions": table.source})
    rows = eligible_rows(live_documents(index, alias, ids, export), table, blocked, export)
    return write_export(storage, export, rows, manifest)


def _documents(source: RecordSource) -> Iterator[str]:
    return (record["id"] for record in source if not record.get("deleted"))


def export_published_day(storage: Storage, index: SearchIndex, alias: str, ledger: Ledger, journal: Journal,
                         provider: str, mint: Callable[[str], str], day: date, started: datetime,
                         table: Callable[[], Institutions] = institutions) -> tuple[GateResult, WikiExport]:
    """Gate D on ``provider``'s ``day``, then its export (``mint``: the provider's minter, for the block list); the
    day's report gains a Wikimedia section. A refused day raises :class:`GateRefused` and writes nothing."""
    state = ledger.get(provider, day)
    source = source_from_path(storage, state.output, "indexing") if state and state.state == PUBLISHED else None
    sample = list(islice(_documents(source), SAMPLE)) if source else []
    result = judge_day(provider, day, ledger, journal, index, alias, table, sample)
    if not result.passed:
        raise GateRefused(result, provider)
    export = export_day(storage, index, alias, provider, day, started, _documents(source), source.output.relative,
                        table(), block_list(mint))
    _report(source, storage, export, result)
    return result, export


def _report(source: RecordSource, storage: Storage, export: WikiExport, result: GateResult) -> None:
    """The day's report (kept with its indexing output) with the export's figures as its Wikimedia section."""
    report = read_report(source)
    if report is None:
        return
    report["wikimedia"] = {"output": storage.uri(export.key), **export.summary(), "gate": result.description}
    write_report(source, report, render.html(report))
