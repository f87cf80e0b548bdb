"""A full harvest's absences are deletions: a record of the provider's state before a full harvest (its previous
complete full harvest and the incremental harvests since) that the full harvest no longer holds is gone at the
source. The indexing activity writes an index deletion for each, so the search index and the change feed drop
it, counted as ``Summary absent`` in the indexing ``_MANIFEST`` and in the reconciliation.

An incremental harvest never deletes by absence. A full harvest with unreadable records deletes only what it
can tell from them: the ids its error report names are not absent, and when it could not name every unreadable
record (more than the report keeps) it deletes nothing by absence.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from datetime import date
from functools import cached_property

from ingest_assets.records.harvest.original import SeenIds
from ingest_assets.storage import layout
from ingest_assets.storage.activities import RecordSource
from ingest_assets.storage.snapshot import snapshot_records, snapshot_sources

FULL = "full"
ERRORS = "harvest-errors.csv"


@dataclass
class Absences:
    """The local ids absent from a full harvest (:meth:`ids`, lazy), and why none were looked for."""

    harvest: RecordSource
    exclude: Collection[date] = ()
    skipped: str = ""
    count: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        summary = self.harvest.manifest().extra
        if summary.get("Summary mode") != FULL:
            self.skipped = "an incremental harvest deletes nothing by absence"
        elif int(summary.get("Summary failed", 0)) > len(self._unreadable):
            self.skipped = ("the harvest could not read records its error report does not name: absences cannot be "
                            "told from them")

    def ids(self) -> Iterator[str]:
        """Local ids of the previous state missing from the harvest (ids held in a temporary SQLite set)."""
        if self.skipped:
            return
        output = self.harvest.output
        previous = snapshot_sources(self.harvest.storage, output.provider, output.day, "harvest", self.exclude,
                                    before=output.started)
        if not previous:  # the provider's first harvest: nothing can be absent
            return
        seen = SeenIds()
        try:
            for record in self.harvest:
                seen.add(record["id"])
            for record_id in self._unreadable:
                seen.add(record_id)
            for record in snapshot_records(previous):
                if seen.add(record["id"]):
                    self.count += 1
                    yield record["id"]
        finally:
            seen.close()

    @cached_property
    def _unreadable(self) -> list[str]:
        """The ids of the records the harvest could not read, as its error report names them."""
        key = f"{self.harvest.key}/{layout.LOGS}/{ERRORS}"
        if not self.harvest.storage.exists(key):
            return []
        rows = csv.DictReader(io.StringIO(self.harvest.storage.read_bytes(key).decode("utf-8")))
        return [row["record"] for row in rows if row.get("record")]
