"""What every harvest type shares: the run it belongs to and the set-up of a paged list's progress.

A harvest type is one :class:`Harvester` subclass (built from the provider's name, its ``harvest:`` block and
the :class:`HarvestContext` of the run) whose :meth:`Harvester.records` yields OriginalRecord dicts, plus one
line in :data:`ingest_assets.records.harvest.HARVESTERS` naming it for its block's ``type``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ingest_assets.core.http import HttpClient
from ingest_assets.core.registry import HarvestBlock
from ingest_assets.core.secrets import Secrets
from ingest_assets.records.harvest.checkpoint import Checkpoint
from ingest_assets.records.harvest.original import HarvestStats, ingest_date
from ingest_assets.records.harvest.progress import Progress
from ingest_assets.records.harvest.requests import RequestLog

FULL, INCREMENTAL = "full", "incremental"  # a harvest output's ``Summary mode``


@dataclass(frozen=True)
class HarvestContext:
    """One run of one provider's harvest: when it started (aware; every record's ``ingestDate``), the day window
    it may restrict itself to (aware, half-open; None for the whole source), where it fetches, checkpoints,
    counts and logs its requests, and the values of the secrets its block names (redacted from all it writes); a
    file harvest reads ``s3://`` sources with the client ``s3_client()`` makes (the platform storage's S3 settings;
    None: boto3's defaults and ``AWS_*`` environment)."""

    started: datetime
    window: tuple[datetime, datetime] | None
    http: HttpClient
    checkpoint: Checkpoint
    stats: HarvestStats
    requests: RequestLog
    secrets: Secrets = field(default_factory=Secrets)
    s3_client: Callable[[], Any] | None = None  # makes the S3 client of a file harvest's s3:// source

    @property
    def ingest_ts(self) -> int:
        return ingest_date(self.started)


class Harvester(ABC):
    """One harvest type. Subclasses read their block (``self.config``) and implement :meth:`records`."""

    def __init__(self, provider: str, config: HarvestBlock, context: HarvestContext):
        self.provider, self.config, self.context = provider, config, context
        self.http, self.checkpoint, self.stats, self.requests, self.secrets = (
            context.http, context.checkpoint, context.stats, context.requests, context.secrets
        )
        self.ingest_ts, self.window = context.ingest_ts, context.window

    @abstractmethod
    def records(self) -> Iterator[dict]:
        """The harvest's OriginalRecord dicts, lazily (nothing is fetched before the first is asked for)."""

    @property
    def mode(self) -> str:
        """:data:`FULL` when the run fetched the whole source (the state of the source, which the count-drop gate
        compares and a snapshot walks back to), :data:`INCREMENTAL` when it fetched changes only. A type that
        has no way to ask for changes only fetches everything: full."""
        return FULL

    def progress(self, kind: str, request: dict, position_key: str) -> Progress:
        """The :class:`Progress` of this run through the list ``request`` (``close()`` it when the run ends)."""
        return Progress(self.provider, self.checkpoint, kind, request, position_key, stats=self.stats,
                        ingest_ts=self.ingest_ts, bounds=self.config.bounds)

    def resume(self, progress: Progress) -> Generator[dict, None, Any]:
        """Re-yield the records a failed run of the same request spooled (their requests logged as one spooled
        line), then return where the list goes on (None: from its start)."""
        position = yield from progress.resume()
        if self.stats.resumed:
            self.requests.spooled(self.stats.pages, range(self.stats.records))
        return position
