"""File harvesting: hubs that deliver files (a folder, an S3 prefix, a list of URLs), ingestion3's file harvesters
as configuration of one harvest type (docs/harvest-files.md has the keys and one block per ingestion3 hub).

The files are listed and fetched by :mod:`.file_sources` (stable order, bounded) and read by :mod:`.file_chunks`
(by content: archives member by member, gzip gunzipped as it is read; the records by :mod:`.file_records`), in
``workers`` worker processes (:mod:`ingest_assets.core.workers`; default: one per CPU, one file at a time each) or,
for one file or ``workers: 1``, in this process. The records come out in the listing's order whatever the
workers, a bounded number of chunks read ahead of it. Delete lists (``deletes:``) are read first, so a deletion
wins over a record of the same id in the same delivery (the first record of an id in a run is kept, the run's
ids checked a chunk at a time; ``order: descending`` puts the newest file first where names sort by date). A
block with ``delta: true`` is an incremental harvest: its records and deletions apply onto the provider's last
full harvest (the pipeline's state, ``ingest-assets snapshot``), as ingestion3's NaraDeltaHarvester and
NaraMergeUtil do.

A file that cannot be fetched, read or parsed ends the harvest with an error naming it (a worker that dies too);
an archive member that cannot (a refused or corrupt member, not well-formed XML) is counted with its name and the
others are read; a bad record likewise. Every file is one line of the request log (its path, S3 URI or URL, and
its records' positions).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass

from ingest_assets.core.errors import LimitError, context
from ingest_assets.core.registry import FileHarvest
from ingest_assets.core.workers import InProcess, WorkerPool, default_workers, open_workers
from ingest_assets.records.harvest.base import FULL, INCREMENTAL, HarvestContext, Harvester
from ingest_assets.records.harvest.file_chunks import Chunk, FileRead, FileReader, FileTask
from ingest_assets.records.harvest.file_sources import Fetched, Source, SourceFile, open_source
from ingest_assets.records.harvest.original import SeenIds

Files = Iterator[tuple[int, tuple[SourceFile, bool]]]  # (number in the run, (entry, a delete list)), in order


@dataclass(frozen=True)
class _Reading:
    """A file given to the pool: its number in the run (its request log line), its entry, its local copy (removed
    with ``copy``) and its items."""

    number: int
    entry: SourceFile
    deletes: bool
    fetched: Fetched
    copy: ExitStack
    items: Iterator[Chunk | FileRead]


class FileHarvester(Harvester):
    config: FileHarvest

    def __init__(self, provider: str, config: FileHarvest, context: HarvestContext):
        super().__init__(provider, config, context)
        self.reader = FileReader(provider, config, self.ingest_ts)  # the workers' (a copy each), and this process's
        self.deadline = 0.0
        self.skipped = self.dropped = self.late_deletes = 0  # filter_xpath false; status dropped; deletions too late

    @property
    def mode(self) -> str:
        return INCREMENTAL if self.config.delta else FULL

    def records(self) -> Iterator[dict]:
        self.deadline = time.monotonic() + self.config.limits.max_minutes * 60
        seen = SeenIds()
        try:
            source = open_source(self.provider, self.config, http=self.http, s3_client=self.context.s3_client)
            listing = source.listing()
            files = [(entry, True) for entry in listing.deletes] + [(entry, False) for entry in listing.records]
            workers = min(self.config.workers or default_workers(len(files)), len(files))
            with open_workers(self.reader, workers) as pool, ExitStack() as copies:
                yield from self.read(source, enumerate(files, 1), pool, copies, seen)
            self.report(listing.records, listing.deletes)
        finally:
            seen.close()

    def read(self, source: Source, files: Files, pool: WorkerPool | InProcess, copies: ExitStack,
             seen: SeenIds) -> Iterator[dict]:
        """The files' records in the listing's order, ``pool.workers`` files read at a time (each fetched when its
        turn to be read comes; its local copy kept until its records are admitted, in ``copies`` on an error)."""
        reading: deque[_Reading] = deque()
        for _ in range(pool.workers):
            self.start(source, files, pool, copies, reading)
        while reading:
            file = reading.popleft()
            first = self.stats.records
            with context(provider=self.provider, file=file.entry.location):  # a worker that died reading it
                yield from self.admitted(file.items, file.entry.location, seen)
            file.copy.close()
            self.requests.request(file.number, file.entry.location, {"deletes": True} if file.deletes else {},
                                  file.fetched.status, None, range(first, self.stats.records))
            self.start(source, files, pool, copies, reading)

    def start(self, source: Source, files: Files, pool: WorkerPool | InProcess, copies: ExitStack,
              reading: deque[_Reading]) -> None:
        """Fetch the next file, if there is one, and give it to the pool."""
        following = next(files, None)
        if following is None:
            return
        number, (entry, deletes) = following
        self.check_time(entry.location)
        copy = ExitStack()
        copies.callback(copy.close)
        fetched = copy.enter_context(source.fetch(entry))
        task = FileTask(str(fetched.path), entry.location, entry.name, deletes)
        if not pool.ready:  # the workers are starting: this process reads the file meanwhile
            items = self.reader(task)
        else:
            with context(provider=self.provider, file=entry.location):  # a worker that died: the file it was given
                items = pool.submit(task)
        reading.append(_Reading(number, entry, deletes, fetched, copy, items))

    def admitted(self, items: Iterator[Chunk | FileRead], where: str, seen: SeenIds) -> Iterator[dict]:
        """A file's records whose id this run has not harvested yet (the first of an id wins); its bad records
        counted, its time checked once a chunk."""
        for item in items:
            if isinstance(item, FileRead):
                self.stats.pages += item.pages
                self.skipped += item.skipped
                self.dropped += item.dropped
                for note in item.notes:
                    self.stats.note(note)
                continue
            self.stats.record_errors(item.errors, item.failed)
            fresh = self.stats.admit_all(item.records, seen)
            if item.late:  # each was admitted (or not) before the records after it were read
                self.late_deletes += len(item.records) - len(fresh)
            self.check_time(where)
            yield from fresh

    def check_time(self, where: str | None) -> None:
        if time.monotonic() > self.deadline:
            raise LimitError(f"the harvest ran past {self.config.limits.max_minutes} minutes (harvest.limits.max_minutes)",
                             provider=self.provider, file=where or self.config.source)

    def report(self, records: list[SourceFile], deletes: list[SourceFile]) -> None:
        """The harvest log's lines on what was read and left out."""
        self.stats.note(f"read {len(records)} file(s) of records and {len(deletes)} delete list(s) from "
                        f"{self.config.source} ({self.mode} harvest)")
        if self.skipped:
            self.stats.note(f"skipped {self.skipped} record(s) for which filter_xpath is false")
        if self.dropped:
            self.stats.note(f"dropped {self.dropped} record(s) whose status is "
                            f"{' or '.join(self.config.status.values)}")
        if self.late_deletes:
            self.stats.note(f"{self.late_deletes} deletion(s) from delete lists inside archives came after a record "
                            "of the same id (kept); list delete lists as files (deletes.include) to have them win")

