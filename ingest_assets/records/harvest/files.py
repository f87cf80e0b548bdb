"""File harvesting: hubs that deliver files (a folder, an S3 prefix, a list of URLs), ingestion3's file harvesters
as configuration of one harvest type (docs/harvest-files.md has the keys and one block per ingestion3 hub).

The files are listed and fetched by :mod:`.file_sources` (stable order, bounded) and read one at a time, each by
its content (:func:`ingest_assets.core.archives.kind_of`): a zip or a (compressed) tar member by member with the
archive checks, a gzip stream gunzipped as it is read, anything else as it is; the records in each file or
member by :mod:`.file_records`. Delete lists (``deletes:``) are read first, so a deletion wins over a record of
the same id in the same delivery (the first record of an id in a run is kept; ``order: descending`` puts the
newest file first where names sort by date). A block with ``delta: true`` is an incremental harvest: its
records and deletions apply onto the provider's last full harvest (the pipeline's state, ``ingest-assets
snapshot``), as ingestion3's NaraDeltaHarvester and NaraMergeUtil do.

A file that cannot be fetched, read or parsed ends the harvest with an error naming it; an archive member that
cannot (a refused or corrupt member, not well-formed XML) is counted with its name and the others are read; a bad
record likewise. Every file is one line of the request log (its path, S3 URI or URL, and its records' positions).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from ingest_assets.core import archives
from ingest_assets.core.errors import ArchiveError, LimitError, ParseError
from ingest_assets.core.registry import FileHarvest
from ingest_assets.records.harvest.base import FULL, INCREMENTAL, HarvestContext, Harvester
from ingest_assets.records.harvest.file_records import RecordReader
from ingest_assets.records.harvest.file_sources import Globs, SourceFile, open_source
from ingest_assets.records.harvest.original import SeenIds

XML_NAMES, JSON_NAMES = (".xml",), (".json", ".jsonl", ".ndjson")
CHECK_TIME_EVERY = 1024  # records between two looks at the clock
Read = Callable[[BinaryIO, str, str], Iterator[dict]]  # (stream, where, name) -> records


class FileHarvester(Harvester):
    config: FileHarvest

    def __init__(self, provider: str, config: FileHarvest, context: HarvestContext):
        super().__init__(provider, config, context)
        self.reader = RecordReader(provider, config, self.ingest_ts, self.stats)
        self.members = Globs(config.members)
        self.delete_members = Globs(config.deletes.include) if config.deletes else None
        self.deadline = 0.0
        self.files = self.late_deletes = 0

    @property
    def mode(self) -> str:
        return INCREMENTAL if self.config.delta else FULL

    def records(self) -> Iterator[dict]:
        self.deadline = time.monotonic() + self.config.limits.max_minutes * 60
        seen = SeenIds()
        try:
            source = open_source(self.provider, self.config, http=self.http, s3_client=self.context.s3_client)
            listing = source.listing()
            for entry in listing.deletes:
                yield from self.admitted(self.file(source, entry, self.reader.deleted_ids), seen)
            for entry in listing.records:
                yield from self.admitted(self.file(source, entry, self.reader.records), seen)
            self.report(listing.records, listing.deletes)
        finally:
            seen.close()

    def admitted(self, records: Iterator[dict], seen: SeenIds) -> Iterator[dict]:
        for record in records:
            if self.stats.admit(record, seen):
                if not self.stats.records % CHECK_TIME_EVERY:
                    self.check_time(None)
                yield record

    def file(self, source, entry: SourceFile, read: Read) -> Iterator[dict]:
        """The records of one listed file, logged as one request."""
        self.check_time(entry.location)
        self.files += 1
        first, number = self.stats.records, self.files
        with source.fetch(entry) as fetched:
            kind = archives.kind_of(fetched.path)
            if kind == "archive":
                yield from self.archive(fetched.path, entry, read)
            else:
                self.stats.pages += 1
                with fetched.path.open("rb") as raw:
                    size = fetched.path.stat().st_size
                    stream = self.gunzipped(raw, entry.location, size) if kind == "gzip" else raw
                    yield from self.stream(stream, entry.location, entry.name, read)
        params = {"deletes": True} if read == self.reader.deleted_ids else {}
        self.requests.request(number, entry.location, params, fetched.status, None, range(first, self.stats.records))

    def archive(self, path: Path, entry: SourceFile, read: Read) -> Iterator[dict]:
        limits = archives.Limits(**self.config.limits.archive_limits)
        for member in archives.scan(path, limits, label=entry.location, provider=self.provider):
            if isinstance(member, ArchiveError):
                self.stats.record_error(member)
                continue
            reader = read
            if read == self.reader.records and self.delete_members is not None and self.delete_members(member.name):
                reader = self.reader.deleted_ids  # a delete list among the records: its deletions win from here on
            elif not self.members(member.name):
                continue
            self.check_time(f"{entry.location}!{member.name}")
            self.stats.pages += 1
            where = f"{entry.location}!{member.name}"
            duplicates = self.stats.duplicates
            try:
                yield from self.stream(member.stream, where, member.name, reader)
            except ParseError as exc:  # an ArchiveError too: the member's bytes were corrupt
                self.stats.record_error(exc)
            if reader is not read:  # each record was admitted (or not) before the next was read
                self.late_deletes += self.stats.duplicates - duplicates

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
        return archives.gunzipped(raw, label=where, provider=self.provider, max_bytes=cap, buffer_size=256 * 1024)

    def check_time(self, where: str | None) -> None:
        if time.monotonic() > self.deadline:
            raise LimitError(f"the harvest ran past {self.config.limits.max_minutes} minutes (harvest.limits.max_minutes)",
                             provider=self.provider, file=where or self.config.source)

    def report(self, records: list[SourceFile], deletes: list[SourceFile]) -> None:
        """The harvest log's lines on what was read and left out."""
        self.stats.note(f"read {len(records)} file(s) of records and {len(deletes)} delete list(s) from "
                        f"{self.config.source} ({self.mode} harvest)")
        if self.reader.skipped:
            self.stats.note(f"skipped {self.reader.skipped} record(s) for which filter_xpath is false")
        if self.reader.dropped:
            self.stats.note(f"dropped {self.reader.dropped} record(s) whose status is "
                            f"{' or '.join(self.config.status.values)}")
        if self.late_deletes:
            self.stats.note(f"{self.late_deletes} deletion(s) from delete lists inside archives came after a record "
                            "of the same id (kept); list delete lists as files (deletes.include) to have them win")


def _content(head: bytes, name: str) -> str | None:
    """``xml`` or ``json`` by the first bytes (a UTF-8 BOM aside), else by the name; None when neither says."""
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if text[:1] == b"<":
        return "xml"
    if text[:1] in (b"{", b"["):
        return "json"
    lowered = name.lower().removesuffix(".gz")
    return "xml" if lowered.endswith(XML_NAMES) else "json" if lowered.endswith(JSON_NAMES) else None
