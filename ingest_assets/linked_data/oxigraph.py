"""Embedded Oxigraph (pyoxigraph, RocksDB on disk): the default triple store.

RocksDB admits one writer process; readers open a read-only snapshot beside it. A writer that finds the
store locked (another provider's import in another run process) waits and retries.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from itertools import groupby
from pathlib import Path

from pyoxigraph import BlankNode, NamedNode, Quad, QuerySolutions, RdfFormat, Store, Triple

from ingest_assets.core.errors import IngestError
from ingest_assets.linked_data.triplestore import Term, TripleStore


def _open_writable(path: Path, wait_seconds: float) -> Store:
    deadline = time.monotonic() + wait_seconds
    delay = 0.05
    while True:
        try:
            return Store(str(path))
        except OSError as exc:
            if "lock" not in str(exc).lower() or time.monotonic() >= deadline:
                raise IngestError(
                    f"cannot open the triple store for writing: {exc}", file=str(path), retryable=True
                ) from exc
            time.sleep(delay)
            delay = min(delay * 2, 2.0)


class OxigraphStore(TripleStore):
    def __init__(self, path: str | Path, *, writable: bool, wait_seconds: float = 1800.0):
        self.path = Path(path)
        if writable:
            self.path.mkdir(parents=True, exist_ok=True)
            self._store = _open_writable(self.path, wait_seconds)
        elif (self.path / "CURRENT").exists():  # a RocksDB store (not a missing or freshly mounted empty folder)
            self._store = Store.read_only(str(self.path))
        else:
            self._store = Store()  # nothing harvested yet: an empty snapshot

    def load(self, graph: str, ntriples: Path) -> None:
        self._store.bulk_load(path=str(ntriples), format=RdfFormat.N_TRIPLES, to_graph=NamedNode(graph))

    def update(self, sparql: str) -> None:
        self._store.update(sparql)

    def select(self, sparql: str) -> list[dict[str, Term]]:
        solutions = self._store.query(sparql)
        if not isinstance(solutions, QuerySolutions):
            raise TypeError("select() needs a SELECT query")
        names = [v.value for v in solutions.variables]
        return [{n: row[n] for n in names if row[n] is not None} for row in solutions]

    def triples(self, graph: str) -> Iterator[Triple]:
        for quad in self._store.quads_for_pattern(None, None, None, NamedNode(graph)):
            yield quad.triple

    def copy_without(self, source: str, target: str, subjects: set[Term]) -> None:
        source_node, target_node = NamedNode(source), NamedNode(target)
        skipped = set(subjects)
        for subject in subjects:  # and the blank nodes they point to, as delete_subjects does
            skipped.update(
                q.object for q in self._store.quads_for_pattern(subject, None, None, source_node)
                if isinstance(q.object, BlankNode)
            )
        self._store.bulk_extend(
            Quad(q.subject, q.predicate, q.object, target_node)
            for q in self._store.quads_for_pattern(None, None, None, source_node)
            if q.subject not in skipped
        )

    def drop(self, graph: str) -> None:
        """Delete in subject batches during one scan (far faster than one ``DROP GRAPH`` transaction),
        then drop what is left (blank-node subjects, which ``VALUES`` cannot name)."""
        node = NamedNode(graph)
        quads = self._store.quads_for_pattern(None, None, None, node)  # subject-ordered
        subjects = (s for s, _ in groupby(q.subject for q in quads) if not isinstance(s, BlankNode))
        self.delete_subjects(graph, subjects)
        self._store.remove_graph(node)

    def close(self) -> None:
        self._store = None  # RocksDB releases its lock when the last reference goes
