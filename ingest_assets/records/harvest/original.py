"""OriginalRecord dicts (``dpla.avro.v1.OriginalRecord``), the MimeType enum and per-harvest statistics."""

from __future__ import annotations

import csv
import io
import logging
import sqlite3
import tempfile
from dataclasses import dataclass, field
from datetime import datetime

from ingest_assets.core.errors import IngestError, ValidationError

log = logging.getLogger(__name__)

MIMETYPE_SYMBOLS = ("application_json", "application_xml", "text_turtle")
MAX_KEPT_ERRORS = 1000
LOOKUP_BATCH = 500  # ids looked up in the run's set at once (SQLite's oldest bound is 999 parameters)


def mimetype_symbol(mimetype: str) -> str:
    """``application/xml`` -> ``application_xml`` (Avro enum symbols cannot hold '/')."""
    symbol = mimetype.replace("/", "_")
    if symbol not in MIMETYPE_SYMBOLS:
        raise ValueError(f"mimetype {mimetype!r} is not one of the OriginalRecord MimeType symbols")
    return symbol


def mimetype_from_symbol(symbol: str) -> str:
    """``application_xml`` -> ``application/xml``."""
    if symbol not in MIMETYPE_SYMBOLS:
        raise ValueError(f"{symbol!r} is not an OriginalRecord MimeType symbol")
    return symbol.replace("_", "/", 1)


def ingest_date(started: datetime) -> int:
    """UNIX seconds of the harvest start (``started`` must be timezone-aware)."""
    if started.tzinfo is None or started.utcoffset() is None:
        raise ValueError("started must be a timezone-aware datetime")
    return int(started.timestamp())


def original_record(provider: str, local_id: str, ingest_ts: int, document: str, mimetype: str, deleted: bool) -> dict:
    """The OriginalRecord; a ValidationError for an id or document that cannot be stored as UTF-8 (a lone
    surrogate from a JSON ``\\ud800`` escape), so the harvest counts that record instead of failing its write."""
    for name, value in (("id", local_id), ("document", document)):
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                shown = local_id.encode("utf-8", "backslashreplace").decode("ascii")
                raise ValidationError(
                    f"{name} has an unpaired UTF-16 surrogate at character {exc.start} (not storable as UTF-8)",
                    provider=provider, record=shown,
                ) from None
    return {
        "id": local_id,
        "ingestDate": ingest_ts,
        "provider": provider,
        "document": document,
        "mimetype": mimetype_symbol(mimetype),
        "deleted": deleted,
    }


@dataclass
class HarvestStats:
    """Counts for one harvest run; per-record errors are counted and the first ones kept for the report."""

    provider: str
    pages: int = 0
    records: int = 0
    deleted: int = 0
    failed: int = 0
    duplicates: int = 0
    repaired_pages: int = 0
    restarts: int = 0
    resumed: bool = False
    expected: int | None = None  # e.g. OAI-PMH completeListSize, when the source announces it
    errors: list[IngestError] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the run decided and why, for its harvest log

    def note(self, message: str) -> None:
        """Log ``message`` and keep it for :meth:`log_text`."""
        log.info("harvest %s: %s", self.provider, message)
        self.notes.append(message)

    def log_text(self) -> str:
        """The harvest log: one line per note."""
        return "".join(f"{note}\n" for note in self.notes)

    def record_error(self, error: IngestError) -> None:
        self.failed += 1
        if len(self.errors) < MAX_KEPT_ERRORS:
            self.errors.append(error)
            log.warning("harvest: skipped record: %s", error)
        elif len(self.errors) == self.failed - 1:
            log.warning("harvest %s: more than %d bad records; counting the rest only", self.provider, MAX_KEPT_ERRORS)

    def record_errors(self, errors: list[IngestError], failed: int) -> None:
        """``failed`` bad records, of which ``errors`` were kept (the first ones) where they were read."""
        for error in errors:
            self.record_error(error)
        if failed > len(errors):
            if len(self.errors) == self.failed:
                log.warning("harvest %s: more than %d bad records; counting the rest only", self.provider, MAX_KEPT_ERRORS)
            self.failed += failed - len(errors)

    def admit_all(self, records: list[dict], seen: SeenIds) -> list[dict]:
        """The ``records`` whose id was not yet yielded in this run (the first of an id in ``records`` included),
        counted as harvested; the others counted as duplicates."""
        fresh = [record for record, new in zip(records, seen.add_all([record["id"] for record in records])) if new]
        self.duplicates += len(records) - len(fresh)
        self.records += len(fresh)
        self.deleted += sum(record["deleted"] for record in fresh)
        return fresh

    def admit(self, record: dict, seen: SeenIds) -> bool:
        """Count ``record`` as harvested, unless its id was already yielded in this run (a duplicate)."""
        if not seen.add(record["id"]):
            self.duplicates += 1
            return False
        self.records += 1
        self.deleted += record["deleted"]
        return True

    def as_metadata(self) -> dict[str, int | bool]:
        data = {
            "pages": self.pages,
            "records": self.records,
            "deleted": self.deleted,
            "failed": self.failed,
            "duplicates": self.duplicates,
            "repaired_pages": self.repaired_pages,
            "restarts": self.restarts,
            "resumed": self.resumed,
        }
        if self.expected is not None:
            data["expected"] = self.expected
        return data

    def errors_csv(self) -> str:
        """The kept per-record errors as CSV: provider, file (page URL or file), record, message."""
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["provider", "file", "record", "message"])
        for error in self.errors:
            writer.writerow([error.provider or self.provider, error.file or "", error.record or "", error.message])
        return out.getvalue()


class SeenIds:
    """Record ids already yielded in this run, kept in a temporary SQLite file so memory stays flat. Each id is
    stored with the batch that brought it (0: one added alone), so a batch is one insert of all its ids, and a
    lookup only when some were there before it."""

    def __init__(self):
        self._dir = tempfile.TemporaryDirectory(prefix="harvest-ids-")
        self._db = sqlite3.connect(f"{self._dir.name}/ids.sqlite3")
        self._db.execute("PRAGMA journal_mode=OFF")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.execute("CREATE TABLE ids (id TEXT PRIMARY KEY, batch INTEGER NOT NULL) WITHOUT ROWID")
        # inserts run in one implicit transaction that is never committed: the file is thrown away
        self._insert = self._db.cursor()  # one cursor for every insert (a new one per record costs a third more)
        self._batches = 0

    def add(self, local_id: str) -> bool:
        """Remember ``local_id``; False if it was already seen."""
        return self._insert.execute("INSERT OR IGNORE INTO ids VALUES (?, 0)", (local_id,)).rowcount == 1

    def add_all(self, ids: list[str]) -> list[bool]:
        """Remember ``ids``; for each, whether it is new (seen neither before nor earlier in ``ids``)."""
        self._batches += 1
        distinct = list(dict.fromkeys(ids))
        before = self._db.total_changes
        self._insert.executemany("INSERT OR IGNORE INTO ids VALUES (?, ?)", [(i, self._batches) for i in distinct])
        if self._db.total_changes - before == len(distinct):  # none seen before (the usual case)
            if len(distinct) == len(ids):
                return [True] * len(ids)
            new = set(distinct)
        else:
            new = set()
            for start in range(0, len(distinct), LOOKUP_BATCH):
                part = distinct[start:start + LOOKUP_BATCH]
                rows = self._insert.execute(f"SELECT id, batch FROM ids WHERE id IN ({', '.join('?' * len(part))})", part)
                new.update(local_id for local_id, batch in rows if batch == self._batches)
        answers = []
        for local_id in ids:
            answers.append(local_id in new)
            new.discard(local_id)  # a later one of the same id is a duplicate
        return answers

    def close(self) -> None:
        self._db.close()
        self._dir.cleanup()
