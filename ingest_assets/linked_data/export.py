"""Export: the union of the current provider graphs as N-Quads (named by provider) and as one N-Triples dump.

With a change feed, each provider's N-Quads are also published as ``<provider>.nq`` of the feed's set
(``created``, ``updated`` when its graph changed, nothing when it did not), and the file of a provider
that is no longer exported (no current graph, or gone from the registry) is ``deleted``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from contextlib import nullcontext
from datetime import datetime
from pathlib import Path
from typing import BinaryIO

from ingest_assets.linked_data.graphs import DEFAULT_BASE, ProviderGraphs, current_graphs
from ingest_assets.linked_data.triplestore import TripleStore, iri
from ingest_assets.resourcesync.feed import ChangeFeed

NQUADS = "application/n-quads"
SUFFIX = ".nq"


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
