"""One paged harvest's progress through its list: resume, spool, checkpoint, deduplicate.

The policy shared by the OAI-PMH and JSON API harvesters:

* After every page that has a next one, the records of that page that were yielded are spooled, THEN
  the checkpoint is saved: ``{"kind", "request", "page": n, "spooled": <records spooled for pages 1..n>,
  <position key>: <where page n+1 starts>}`` (a crash between the two leaves a spooled page that the
  checkpoint does not count; it is ignored, and replaced when that page is fetched again).
* A run whose request equals the checkpoint's first re-yields the spooled records of pages 1..n (page
  order, one spool file in memory at a time, restamped with this run's ``ingestDate``), then continues
  from the position: the failed run's output was discarded whole, so this run's output holds the whole
  list. A spool holding another number of records than the checkpoint counts is an :class:`IngestError`
  (resuming would lose records; clearing the checkpoint restarts the list).
* Any other checkpoint (another request, kind, or one without a spool count) is ignored and cleared with
  every spool, and the list starts from its beginning. Checkpoint and spool are cleared once the list is
  complete.
* A record id is yielded once per run, whether spooled or fetched (``stats.duplicates`` counts repeats);
  the ids are kept in a temporary SQLite file, so memory stays flat.
* Every list ends: past ``bounds.max_pages`` pages, ``bounds.max_minutes`` minutes, or after
  ``bounds.max_stale_pages`` consecutive pages of one list without a record not yet seen (fresh tokens
  forever, the same records under new tokens) the run stops with a :class:`LimitError`; a retry would meet the same bound.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Generator, Iterable, Iterator
from typing import Any

from ingest_assets.core.errors import IngestError, LimitError
from ingest_assets.records.harvest.checkpoint import Checkpoint
from ingest_assets.core.registry import PageBounds
from ingest_assets.records.harvest.original import HarvestStats, SeenIds

log = logging.getLogger(__name__)


class Progress:
    """Where one run is in the list of ``request``; ``close()`` it when the run ends, however it ends."""

    def __init__(
        self, provider: str, checkpoint: Checkpoint, kind: str, request: dict, position_key: str, *,
        stats: HarvestStats, ingest_ts: int, bounds: PageBounds,
    ):
        self.provider, self.checkpoint, self.kind, self.request = provider, checkpoint, kind, request
        self.position_key, self.stats, self.ingest_ts, self.bounds = position_key, stats, ingest_ts, bounds
        self.deadline = time.monotonic() + bounds.max_minutes * 60
        self.stale_pages = 0
        self.seen = SeenIds()
        self.spooled = 0
        self.extra: dict = {}  # what the harvester saved beside the position (the run's failures so far, ...)
        self._page: list[dict] = []

    def resume(self) -> Generator[dict, None, Any]:
        """Yield the spooled records if the checkpoint is this request's, then return its position (else None)."""
        state = self.checkpoint.load()
        if not self._resumable(state):
            if state:
                log.info("harvest %s: ignoring a checkpoint this run cannot resume: %s", self.provider, state.get("request"))
            self.checkpoint.clear()
            return None
        pages, expected = state["page"], state["spooled"]
        self.stats.resumed, self.stats.pages = True, pages
        self.extra = dict(state.get("extra") or {})
        log.info("harvest %s: resuming after page %d (%d spooled records) at %r", self.provider, pages, expected,
                 state[self.position_key])
        for record in self.checkpoint.spooled(self.request, pages):
            self.spooled += 1
            record["ingestDate"] = self.ingest_ts
            if self.stats.admit(record, self.seen):
                yield record
        if self.spooled != expected:
            raise IngestError(
                f"the spool of pages 1-{pages} holds {self.spooled} records, the checkpoint counts {expected}: "
                "resuming would lose records; clear the harvest checkpoint to restart the list",
                provider=self.provider,
            )
        return state[self.position_key]

    def start_list(self) -> None:
        """The next pages belong to another list (another set): stale pages are counted per list."""
        self.stale_pages = 0

    def page(self, records: Iterable[dict]) -> Iterator[dict]:
        """Yield the records of one page not yet yielded in this run, keeping them for :meth:`save`."""
        self._page = []
        for record in records:
            if self.stats.admit(record, self.seen):
                self._page.append(record)
                yield record
        self.stale_pages = 0 if self._page else self.stale_pages + 1

    def save(self, page: int, position: Any, url: str, extra: dict | None = None) -> None:
        """Page ``page`` (fetched from ``url``) is done and the next one starts at ``position``: a
        :class:`LimitError` if the list has run past one of its bounds, else spool the page, then checkpoint
        (with ``extra``, handed back as :attr:`extra` when the run is resumed)."""
        self._check_bounds(page, url)
        self.checkpoint.spool_page(self.request, page, self._page)
        self.spooled += len(self._page)
        self._page = []
        state = {"kind": self.kind, "request": self.request, "page": page, "spooled": self.spooled,
                 self.position_key: position}
        self.checkpoint.save({**state, "extra": extra} if extra else state)

    def _check_bounds(self, page: int, url: str) -> None:
        bounds = self.bounds
        if self.stale_pages >= bounds.max_stale_pages:
            reason = f"{self.stale_pages} pages in a row brought no new record"
        elif page >= bounds.max_pages:
            reason = f"the list goes on past {bounds.max_pages} pages"
        elif time.monotonic() > self.deadline:
            reason = f"the list goes on past {bounds.max_minutes} minutes"
        else:
            return
        raise LimitError(
            f"harvest stopped after page {page}: {reason}; raise harvest.bounds if the source is right",
            provider=self.provider, file=url,
        )

    def finish(self) -> None:
        """The list is complete: nothing left to resume."""
        self.checkpoint.clear()

    def close(self) -> None:
        self.seen.close()

    def _resumable(self, state: dict | None) -> bool:
        counts = [state.get(key) for key in ("page", "spooled")] if state else []
        return bool(
            state
            and state.get("kind") == self.kind
            and state.get("request") == self.request
            and state.get(self.position_key)
            and all(type(count) is int and count >= 0 for count in counts)
        )
