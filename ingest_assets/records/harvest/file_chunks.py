"""One listed file of a file harvest read into chunks of records, where a worker process (or the harvest itself) reads
it.

    reader = FileReader(provider, config, ingest_ts)   # picklable: a worker builds its own record reader from it
    for item in reader(FileTask(path, location, name, deletes=False)):
        ...    # Chunk(records, errors, failed, late) ..., then one FileRead(pages, skipped, dropped, notes)

The file is read by its content (:func:`ingest_assets.core.archives.kind_of`): a zip or a (compressed) tar member by
member with the archive checks, a gzip stream gunzipped as it is read, anything else as it is; the records in each
file or member by :class:`~.file_records.RecordReader`. A chunk holds at most :data:`CHUNK_RECORDS` records and
about :data:`CHUNK_BYTES` characters of documents (one record more at most), with the errors of the bad records
read since the last chunk (the first :data:`~.original.MAX_KEPT_ERRORS` of a file, the others counted), so what a
worker holds ahead of the harvest is bounded whatever the file.

A file that cannot be read or parsed raises an error naming it; an archive member that cannot (a refused or
corrupt member, not well-formed XML) is a bad record naming it, and the others are read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ingest_assets.core import archives
from ingest_assets.core.errors import ArchiveError, IngestError, ParseError
from ingest_assets.core.registry import FileHarvest
from ingest_assets.records.harvest.file_records import RecordReader
from ingest_assets.records.harvest.file_sources import Globs
from ingest_assets.records.harvest.original import MAX_KEPT_ERRORS

CHUNK_RECORDS = 256  # records in one chunk (the duplicate check looks a chunk's ids up at once)
CHUNK_BYTES = 1024 * 1024  # characters of documents in one chunk
GUNZIP_BUFFER = 256 * 1024
XML_NAMES, JSON_NAMES = (".xml",), (".json", ".jsonl", ".ndjson")
Read = Callable[[BinaryIO, str, str], Iterator[dict]]  # (stream, where, name) -> records


@dataclass(frozen=True)
class FileTask:
    path: str  # the local file (a remote one's fetched copy)
    location: str  # what errors name: the path, s3://bucket/key, the URL
    name: str  # below the folder or prefix: a name-id's name
    deletes: bool = False  # a delete list


@dataclass(frozen=True)
class Chunk:
    records: list[dict]  # OriginalRecord dicts, in the file's order
    errors: list[IngestError]  # the bad records' errors kept (the first of the file's)
    failed: int  # bad records, kept or counted only
    late: bool = False  # the records of a delete list found inside a data archive (they win over later records only)


@dataclass(frozen=True)
class FileRead:
    """A file's last item: its pages (the file, or each archive member read), records skipped by ``filter_xpath``
    and dropped by ``status``, and what the harvest log should say of it."""

    pages: int
    skipped: int
    dropped: int
    notes: tuple[str, ...]


class FileReader:
    """Reads the files of one block; the errors and notes of its :class:`RecordReader` come here (one file at a time)."""

    def __init__(self, provider: str, config: FileHarvest, ingest_ts: int):
        self.provider, self.config, self.ingest_ts = provider, config, ingest_ts
        self.reader = RecordReader(provider, config, ingest_ts, self)
        self.members = Globs(config.members)
        self.delete_members = Globs(config.deletes.include) if config.deletes else None
        self.errors: list[IngestError] = []
        self.failed = self.kept = self.pages = 0
        self.late = False
        self.notes: list[str] = []

    def __getstate__(self) -> dict:
        return {"provider": self.provider, "config": self.config, "ingest_ts": self.ingest_ts}

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state)

    def __call__(self, task: FileTask) -> Iterator[Chunk | FileRead]:
        self.errors, self.notes, self.failed, self.kept, self.pages, self.late = [], [], 0, 0, 0, False
        skipped, dropped = self.reader.skipped, self.reader.dropped
        records, size, late = [], 0, False
        try:
            for record in self.file(task):
                if self.late != late:  # a delete list inside an archive begins or ends: a chunk of its own
                    if records:
                        yield self.chunk(records, late)
                        records, size = [], 0
                    late = self.late
                records.append(record)
                size += len(record["document"])
                if len(records) >= CHUNK_RECORDS or size >= CHUNK_BYTES:
                    yield self.chunk(records, late)
                    records, size = [], 0
        except Exception:  # the records read before a file's error are harvested before it, as they were read
            if records or self.failed:
                yield self.chunk(records, late)
            raise
        if records or self.failed:
            yield self.chunk(records, late)
        yield FileRead(self.pages, self.reader.skipped - skipped, self.reader.dropped - dropped, tuple(self.notes))

    def chunk(self, records: list[dict], late: bool) -> Chunk:
        chunk = Chunk(records, self.errors, self.failed, late)
        self.errors, self.failed = [], 0
        return chunk

    def record_error(self, error: IngestError) -> None:
        self.failed += 1
        if self.kept < MAX_KEPT_ERRORS:
            self.kept += 1
            self.errors.append(error)

    def note(self, message: str) -> None:
        self.notes.append(message)

    def file(self, task: FileTask) -> Iterator[dict]:
        path, read = Path(task.path), self.reader.deleted_ids if task.deletes else self.reader.records
        kind = archives.kind_of(path)
        if kind == "archive":
            yield from self.archive(path, task.location, read)
            return
        self.pages += 1
        with path.open("rb") as raw:
            stream = self.gunzipped(raw, task.location, path.stat().st_size) if kind == "gzip" else raw
            yield from self.stream(stream, task.location, task.name, read)

    def archive(self, path: Path, location: str, read: Read) -> Iterator[dict]:
        limits = archives.Limits(**self.config.limits.archive_limits)
        for member in archives.scan(path, limits, label=location, provider=self.provider):
            if isinstance(member, ArchiveError):
                self.record_error(member)
                continue
            reader = read
            if read == self.reader.records and self.delete_members is not None and self.delete_members(member.name):
                reader = self.reader.deleted_ids  # a delete list among the records: its deletions win from here on
            elif not self.members(member.name):
                continue
            self.pages += 1
            self.late = reader is not read
            try:
                yield from self.stream(member.stream, f"{location}!{member.name}", member.name, reader)
            except ParseError as exc:  # an ArchiveError too: the member's bytes were corrupt
                self.record_error(exc)
            self.late = False

    def stream(self, stream: BinaryIO, where: str, name: str, read: Read) -> Iterator[dict]:
        """The records of a file's or member's bytes: gunzipped when they are gzip (a member ``.xml.gz``), refused
        when they hold an archive (not opened inside another) or the other kind of records than ``format`` says."""
        head = stream.peek(archives.SNIFF_BYTES)[:archives.SNIFF_BYTES]
        kind = archives.sniff(head)
        if kind == "gzip":
            stream = self.gunzipped(stream, where, None)
            head, kind = stream.peek(archives.SNIFF_BYTES)[:archives.SNIFF_BYTES], None
        if kind is not None:
            raise ParseError(f"holds a {kind} archive or stream (not opened inside another)", provider=self.provider,
                             file=where)
        found = _content(head, name)
        expected = "xml" if self.config.is_xml or read == self.reader.deleted_ids else "json"
        if found is not None and found != expected:
            raise ParseError(f"holds {found.upper()}, not the {expected.upper()} records harvest.format says",
                             provider=self.provider, file=where)
        yield from read(stream, where, name)

    def gunzipped(self, raw: BinaryIO, where: str, size: int | None) -> BinaryIO:
        limits = self.config.limits
        cap = limits.max_member_bytes
        if size is not None:
            cap = min(cap, max(limits.max_ratio * size, archives.RATIO_CHECK_FROM))
        return archives.gunzipped(raw, label=where, provider=self.provider, max_bytes=cap, buffer_size=GUNZIP_BUFFER)


def _content(head: bytes, name: str) -> str | None:
    """``xml`` or ``json`` by the first bytes (a UTF-8 BOM aside), else by the name; None when neither says."""
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if text[:1] == b"<":
        return "xml"
    if text[:1] in (b"{", b"["):
        return "json"
    lowered = name.lower().removesuffix(".gz")
    return "xml" if lowered.endswith(XML_NAMES) else "json" if lowered.endswith(JSON_NAMES) else None
