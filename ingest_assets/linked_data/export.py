"""Export: the union of the current provider graphs as N-Quads (named by provider) and as one N-Triples dump.

With a change feed, each provider's N-Quads are also published as ``<provider>.nq`` of the feed's set
(``created``, ``updated`` when its graph changed, nothing when it did not), and the file of a provider
that is no longer exported (no current graph, or gone from the registry) is ``deleted``.

:func:`write_export` keeps an export in the platform storage: ``_linked_data/<yyyymmdd>/<ts>-export/`` with
``graphs.nq.gz``, ``combined.nt.gz`` and a ``_MANIFEST``, written atomically and never overwritten.
"""

from __future__ import annotations

import gzip
import tempfile
from collections.abc import Iterable
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import BinaryIO

from ingest_assets.core.version import software_version

from ingest_assets.linked_data.graphs import DEFAULT_BASE, ProviderGraphs, current_graphs
from ingest_assets.linked_data.triplestore import TripleStore, iri
from ingest_assets.resourcesync.feed import ChangeFeed
from ingest_assets.storage.backends import Storage
from ingest_assets.storage.layout import MANIFEST, hub_dated_key, next_free_second
from ingest_assets.storage.manifest import Manifest

NQUADS = "application/n-quads"
SUFFIX = ".nq"
AREA = "linked_data"
EXPORT_FILES = ("graphs.nq.gz", "combined.nt.gz")


@dataclass(frozen=True)
class ExportResult:
    key: str  # the export's folder in the storage
    counts: dict[str, int]  # triples per provider

    @property
    def triples(self) -> int:
        return sum(self.counts.values())


def write_export(store: TripleStore, storage: Storage, providers: Iterable[str], started: datetime, *,
                 base: str = DEFAULT_BASE, feed: ChangeFeed | None = None) -> ExportResult:
    """:func:`export` into a new folder of ``storage`` (gzip N-Quads and N-Triples, and a manifest naming the
    triples per provider); an export in the same second as the last takes the next second."""
    started = next_free_second(started, lambda moment: not storage.exists(hub_dated_key(AREA, moment, "export")))
    key = hub_dated_key(AREA, started, "export")
    with storage.folder(key) as folder:
        with folder.open(EXPORT_FILES[0]) as nq_raw, folder.open(EXPORT_FILES[1]) as nt_raw:
            with gzip.GzipFile(fileobj=nq_raw, mode="wb") as nq, gzip.GzipFile(fileobj=nt_raw, mode="wb") as nt:
                counts = export(store, providers, nq, nt, base, feed, started)
        manifest = Manifest(
            activity="export",
            provider=",".join(sorted(counts)),
            schema="N-Quads+N-Triples",
            record_count=sum(counts.values()),
            start_time=started,
            software_version=software_version(),
            partition="",
            extra={f"Triples {provider}": str(count) for provider, count in counts.items()},
        )
        folder.write_bytes(MANIFEST, manifest.to_bytes())
    return ExportResult(key, counts)


def export(
    store: TripleStore,
    providers: Iterable[str],
    nquads: BinaryIO,
    ntriples: BinaryIO,
    base: str = DEFAULT_BASE,
    feed: ChangeFeed | None = None,
    at: datetime | None = None,
) -> dict[str, int]:
    """Stream every listed provider's current version; returns triples written per provider. ``feed``
    (with ``at``, the export's time) publishes the provider files."""
    current = current_graphs(store, base)
    counts: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="linked-data-export-") as tmp:
        for provider in sorted(set(providers) & set(current)):
            name = iri(ProviderGraphs(provider, base).name)
            own = Path(tmp) / f"{provider}{SUFFIX}"
            written = 0
            with open(own, "wb") if feed is not None else nullcontext() as single:
                for triple in store.triples(current[provider]):
                    statement = f"{triple.subject} {triple.predicate} {triple.object}"
                    quad = f"{statement} {name} .\n".encode()
                    nquads.write(quad)
                    if single is not None:
                        single.write(quad)
                    ntriples.write(f"{statement} .\n".encode())
                    written += 1
            counts[provider] = written
            if feed is not None:
                feed.put(f"{provider}{SUFFIX}", own, at, NQUADS)
                own.unlink()
    if feed is not None:
        for path in [p for p in feed.paths() if p.removesuffix(SUFFIX) not in counts]:
            feed.delete(path, at)
    return counts
