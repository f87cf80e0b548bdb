"""Harvest: a provider's records as OriginalRecord dicts, from OAI-PMH, a JSON API, files or ResourceSync.

    run = harvest_records(provider, started=..., window=(day_start, next_day), http=http, checkpoint=cp)
    for record in run:      # {"id", "ingestDate", "provider", "document", "mimetype", "deleted"}
        ...
    run.stats               # HarvestStats: counts and the per-record errors that were skipped
    run.metadata()          # the counts as a dict; run.stats.errors_csv() the kept errors as CSV

The run is lazy: nothing is fetched before the first record is asked for, and memory holds one page.
Fatal problems (a page that cannot be fetched or parsed) raise an :class:`IngestError` naming provider,
page or file and URL; a bad record is skipped, counted and kept in ``run.stats.errors``.
A paged harvest (OAI-PMH, JSON API) that failed is resumed by the next run of the same request: it
re-yields the records of the pages before the failure from the checkpoint's spool, then fetches the rest
(see :mod:`.progress`), so each run's records are the whole list.

Each harvest type is a :class:`~.base.Harvester` subclass named in :data:`HARVESTERS` for its block's ``type``
(adding a type: its registry block in :mod:`ingest_assets.core.registry`, its class, its line here).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

from ingest_assets.core.http import HttpClient
from ingest_assets.core.registry import ProviderEntry
from ingest_assets.core.secrets import resolve_secrets
from ingest_assets.core.settings import Settings
from ingest_assets.records.harvest.api import ApiHarvester
from ingest_assets.records.harvest.base import HarvestContext, Harvester
from ingest_assets.records.harvest.checkpoint import Checkpoint, StorageCheckpoint
from ingest_assets.records.harvest.files import FileHarvester
from ingest_assets.records.harvest.oai import OaiHarvester
from ingest_assets.records.harvest.original import (
    MIMETYPE_SYMBOLS,
    HarvestStats,
    mimetype_from_symbol,
    mimetype_symbol,
)
from ingest_assets.records.harvest.requests import REQUEST_LOG, RequestLog
from ingest_assets.records.harvest.resourcesync import ResourceSyncHarvester

__all__ = [
    "HARVESTERS",
    "MIMETYPE_SYMBOLS",
    "Checkpoint",
    "HarvestRun",
    "HarvestStats",
    "REQUEST_LOG",
    "RequestLog",
    "StorageCheckpoint",
    "harvest_records",
    "mimetype_from_symbol",
    "mimetype_symbol",
]

# harvest block ``type`` -> its harvester
HARVESTERS: dict[str, type[Harvester]] = {
    "oai": OaiHarvester,
    "api": ApiHarvester,
    "file": FileHarvester,
    "resourcesync": ResourceSyncHarvester,
}


class HarvestRun(Iterator[dict]):
    """The records of one harvest (an iterator) plus its :class:`HarvestStats`, :class:`RequestLog` and mode."""

    def __init__(self, harvester: Harvester):
        self.harvester, self._records = harvester, harvester.records()
        self.stats, self.config, self.requests = harvester.stats, harvester.config, harvester.requests

    @property
    def mode(self) -> str:
        """``full`` or ``incremental`` (:attr:`Harvester.mode`; settled once the run is exhausted)."""
        return self.harvester.mode

    def __next__(self) -> dict:
        return next(self._records)

    def logs(self) -> dict[str, bytes | Iterator[bytes]]:
        """The ``_LOGS`` files of the harvest output (complete once the run is exhausted)."""
        return {
            "harvest-errors.csv": self.stats.errors_csv().encode("utf-8"),
            "harvest-log.txt": self.stats.log_text().encode("utf-8"),
            REQUEST_LOG: self.requests.chunks(),
        }

    def metadata(self) -> dict[str, int | bool]:
        """The counts, for asset metadata (complete once the run is exhausted)."""
        return self.stats.as_metadata()

    def close(self) -> None:
        self._records.close()


def harvest_records(
    provider: ProviderEntry,
    *,
    started: datetime,
    window: tuple[datetime, datetime] | None,
    http: HttpClient,
    checkpoint: Checkpoint,
    settings: Settings | None = None,
    s3_client: Callable[[], Any] | None = None,
) -> HarvestRun:
    """Harvest ``provider`` as its ``harvest:`` block says (:class:`ConfigError` when it has none).

    ``started`` (aware) is every record's ``ingestDate``; ``window`` (aware, half-open) restricts an OAI-PMH
    harvest to records changed in it (ignored when the block says ``full: true``, and by API and file
    harvests: they have no standard date filter, so they always fetch the whole source; a file block with
    ``delta: true`` holds changes only and is incremental); a ResourceSync
    harvest with a window takes the changes since its last run, without one a baseline. ``run.mode`` says
    which it was. The block's ``allow_private`` decides whether ``http`` may reach loopback/private addresses.
    The secrets the block names are read here (``{env: NAME}`` from ``settings``, by default the process's):
    one that cannot be read is a ConfigError naming entry and key. ``s3_client()`` makes the client a file
    harvest reads an ``s3://`` source with (None: boto3's defaults).
    """
    config = provider.require("harvest")
    secrets = resolve_secrets(provider, "harvest", settings)
    if config.full:
        window = None
    if http.allow_private != config.allow_private:
        http = copy.copy(http)
        http.allow_private = config.allow_private
    stats, requests = HarvestStats(provider.name), RequestLog()
    context = HarvestContext(started, window, http, checkpoint, stats, requests, secrets, s3_client)
    return HarvestRun(HARVESTERS[config.type](provider.name, config, context))
