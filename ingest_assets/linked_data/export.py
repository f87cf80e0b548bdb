"""Export: the union of the current provider graphs as N-Quads (named by provider) and as one N-Triples dump."""

from __future__ import annotations

from collections.abc import Iterable
from typing import BinaryIO

from ingest_assets.linked_data.graphs import DEFAULT_BASE, ProviderGraphs, current_graphs
from ingest_assets.linked_data.store import TripleStore, iri


def export(
    store: TripleStore, providers: Iterable[str], nquads: BinaryIO, ntriples: BinaryIO, base: str = DEFAULT_BASE
) -> dict[str, int]:
    """Stream every listed provider's current version; returns triples written per provider."""
    current = current_graphs(store, base)
    counts: dict[str, int] = {}
    for provider in sorted(set(providers) & set(current)):
        name = iri(ProviderGraphs(provider, base).name)
        written = 0
        for triple in store.triples(current[provider]):
            statement = f"{triple.subject} {triple.predicate} {triple.object}"
            nquads.write(f"{statement} {name} .\n".encode())
            ntriples.write(f"{statement} .\n".encode())
            written += 1
        counts[provider] = written
    return counts
