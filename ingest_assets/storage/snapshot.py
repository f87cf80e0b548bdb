"""A provider's records as of a date, rebuilt by walking back through its activity outputs.

Each day's newest complete output of the activity counts (a re-run of a day supersedes it). Walking from the
newest day back, the first version of a record seen is its newest; a deletion hides it (a record flagged
``deleted``, or an id ``hidden`` names for that output). A full harvest or an earlier snapshot holds the whole
state, so the walk stops there: for another activity, at the output derived from such a harvest (followed
back through the ``_MANIFEST`` inputs). Seen ids are kept in a temporary SQLite table, so memory stays flat
however many records the provider has.
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Callable, Collection, Iterable, Iterator
from datetime import date, datetime
from pathlib import Path

from ingest_assets.core.errors import ConfigError
from ingest_assets.storage import layout
from ingest_assets.storage.activities import RecordSource, source_from_path
from ingest_assets.storage.backends import Storage

COMPLETE_STATE_MODES = ("full", "snapshot")


def snapshot_sources(
    storage: Storage, provider: str, as_of: date, activity: str = "harvest", exclude: Collection[date] = (),
    before: datetime | None = None,
) -> list[RecordSource]:
    """The outputs of ``activity`` that make up the state at ``as_of``, newest first, leaving out the days
    ``exclude`` names (days never published, for instance) and outputs started at or after ``before``."""
    newest_per_day: dict[date, layout.ActivityOutput] = {}
    for output in layout.complete_outputs(storage, provider, activity):
        if output.day <= as_of and output.day not in exclude and (before is None or output.started < before):
            newest_per_day[output.day] = output  # complete_outputs is ordered by (day, started)
    sources = []
    for day in sorted(newest_per_day, reverse=True):
        source = RecordSource(storage, newest_per_day[day])
        sources.append(source)
        if holds_whole_state(source):
            break
    return sources


def harvest_of(source: RecordSource) -> RecordSource:
    """The harvest output ``source`` derives from (itself, for a harvest output)."""
    return source if source.output.activity == "harvest" else source_from_path(source.storage, source.key, "harvest")


def holds_whole_state(source: RecordSource) -> bool:
    """Whether ``source`` derives from a full harvest or a snapshot (the source's whole state, not changes); an
    output whose harvest is gone cannot say so, and the walk goes on past it."""
    try:
        return harvest_of(source).manifest().extra.get("Summary mode") in COMPLETE_STATE_MODES
    except ConfigError:
        return False


def snapshot_records(sources: list[RecordSource],
                     hidden: Callable[[RecordSource], Iterable[str]] | None = None) -> Iterator[dict]:
    """Newest version of each record across ``sources`` (newest first), deletions applied; ``hidden(source)``
    names ids deleted as of that output that its own records do not show (a mapping has no deletion records)."""
    with tempfile.TemporaryDirectory(prefix="ingest-snapshot-") as tmp:
        seen = sqlite3.connect(Path(tmp) / "seen.sqlite3")
        seen.execute("CREATE TABLE seen (id TEXT PRIMARY KEY) WITHOUT ROWID")
        try:
            for source in sources:
                for gone in hidden(source) if hidden else ():
                    seen.execute("INSERT OR IGNORE INTO seen VALUES (?)", (gone,))
                for record in source:
                    if seen.execute("INSERT OR IGNORE INTO seen VALUES (?)", (record["id"],)).rowcount == 0:
                        continue
                    if not record.get("deleted"):
                        yield record
        finally:
            seen.close()
