"""The triple store seen by the harvester: a few primitives that both backends implement.

Only :meth:`TripleStore.update` is atomic (one SPARQL 1.1 Update request is one transaction in Oxigraph;
the SPARQL 1.1 Update spec asks every service to treat a request atomically). Bulk loads, copies and
drops are not, so the importer only ever runs them on graphs no reader sees (not yet, or no longer, current).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:  # pyoxigraph loads with the first store or parse, not with the code location
    from pyoxigraph import BlankNode, Literal, NamedNode, Triple

Term: TypeAlias = "NamedNode | BlankNode | Literal | Triple"
DELETE_BATCH = 10_000  # subjects per VALUES block


def iri(value: str) -> str:
    """``<value>`` for SPARQL text; refuses characters that would break out of an IRI reference."""
    from pyoxigraph import NamedNode

    return str(NamedNode(value))


def batches(subjects: Iterable[Term], size: int = DELETE_BATCH) -> Iterator[list[Term]]:
    batch: list[Term] = []
    for subject in subjects:
        batch.append(subject)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def delete_subjects_sparql(graph: str, subjects: list[Term]) -> str:
    """One batched delete-by-subject: every triple of ``graph`` about ``subjects``, and about the blank
    nodes they point to (one level: ``<s> :address [ :city "X" ]`` leaves no orphan behind)."""
    values = " ".join(str(s) for s in subjects)
    name = iri(graph)
    return (
        f"DELETE {{ GRAPH {name} {{ ?s ?p ?o . ?o ?bp ?bo }} }} WHERE {{ VALUES ?s {{ {values} }} "
        f"GRAPH {name} {{ ?s ?p ?o OPTIONAL {{ ?o ?bp ?bo FILTER(isBlank(?o)) }} }} }}"
    )


class TripleStore(ABC):
    """A quad store holding one named graph per provider version plus a small metadata graph."""

    @abstractmethod
    def load(self, graph: str, ntriples: Path) -> None:
        """Bulk-add an N-Triples file to ``graph`` (not atomic)."""

    @abstractmethod
    def update(self, sparql: str) -> None:
        """Run one SPARQL 1.1 Update request atomically."""

    @abstractmethod
    def select(self, sparql: str) -> list[dict[str, Term]]:
        """Run a SPARQL SELECT; unbound variables are absent from a row."""

    @abstractmethod
    def triples(self, graph: str) -> Iterator[Triple]:
        """Stream every triple of ``graph``."""

    @abstractmethod
    def copy_without(self, source: str, target: str, subjects: set[Term]) -> None:
        """Copy ``source`` to ``target`` except what :meth:`delete_subjects` would delete (not atomic)."""

    def close(self) -> None:
        """Release the store (files, connections)."""

    def __enter__(self) -> "TripleStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def count(self, graph: str) -> int:
        rows = self.select(f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH {iri(graph)} {{ ?s ?p ?o }} }}")
        return int(rows[0]["n"].value) if rows and "n" in rows[0] else 0

    def delete_subjects(self, graph: str, subjects: Iterable[Term]) -> None:
        """Batched delete-by-subject (``VALUES``), one request per :data:`DELETE_BATCH` subjects (not atomic)."""
        for batch in batches(subjects):
            self.update(delete_subjects_sparql(graph, batch))

    @abstractmethod
    def drop(self, graph: str) -> None:
        """Remove ``graph`` and its triples (not atomic)."""
