"""Graph names and the "current graph" pointer.

A provider's graph is named from its registry name only: ``<base><provider>`` (the name readers and
exports use). Its triples live in a version graph ``<base><provider>:<timestamp>-<random>``; a small
metadata graph ``<base>_meta`` says which version is current, which ``modified`` it holds (and each VoID
subset's, on a node ``<name>#subset-<hash of the subset IRI>``) and which versions wait to be dropped.
Moving the pointer is one SPARQL update, so a new version becomes visible in one step and every reader
goes through the pointer.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass, field
from datetime import datetime

from ingest_assets.core.modified import parse_modified
from ingest_assets.linked_data.triplestore import TripleStore, iri
from ingest_assets.core.registry import NAME_RE
from ingest_assets.storage.layout import timestamp

DEFAULT_BASE = "urn:x-ingest-assets:graph:"
VOCAB = "urn:x-ingest-assets:linked-data#"
# our own vocabulary's terms as SPARQL text (plain strings: nothing here needs pyoxigraph at import)
CURRENT, MODIFIED, MODIFIED_TEXT, IMPORTED, DISCARD, SUBSET_OF, DATASET = (
    f"<{VOCAB}{name}>" for name in ("current", "modified", "modifiedText", "imported", "discard", "subsetOf", "dataset")
)
XSD_DATETIME = "http://www.w3.org/2001/XMLSchema#dateTime"


def _literal(text: str, datatype: str | None = None) -> str:
    """A literal as SPARQL text, escaped by pyoxigraph."""
    from pyoxigraph import Literal, NamedNode

    return str(Literal(text, datatype=NamedNode(datatype)) if datatype else Literal(text))


def _datetime(moment: datetime) -> str:
    return _literal(moment.isoformat(), XSD_DATETIME)


@dataclass(frozen=True)
class GraphState:
    current: str | None = None
    modified: datetime | None = None
    modified_text: str | None = None
    imported: datetime | None = None
    discard: tuple[str, ...] = ()
    subsets: dict[str, datetime] = field(default_factory=dict)  # VoID subset IRI -> its harvested ``modified``


@dataclass(frozen=True)
class SubsetStamp:
    """What the pointer update records: the subsets it imported, and whether it forgets all others."""

    modified: tuple[tuple[str, datetime, str], ...] = ()  # (subset IRI, modified, its text)
    replace_all: bool = False


@dataclass(frozen=True)
class ProviderGraphs:
    """Every graph IRI one provider may write, derived from its registry name."""

    provider: str
    base: str = DEFAULT_BASE

    def __post_init__(self) -> None:
        if not NAME_RE.fullmatch(self.provider):
            raise ValueError(f"invalid provider name {self.provider!r}")

    @property
    def name(self) -> str:
        return f"{self.base}{self.provider}"

    @property
    def meta(self) -> str:
        return f"{self.base}_meta"

    def new_version(self, now: datetime) -> str:
        return f"{self.name}:{timestamp(now)}-{secrets.token_hex(4)}"

    def owns(self, graph: str) -> bool:
        return graph.startswith(f"{self.name}:")

    def read_state(self, store: TripleStore) -> GraphState:
        rows = store.select(
            f"SELECT ?p ?o WHERE {{ GRAPH {iri(self.meta)} {{ {iri(self.name)} ?p ?o }} }}"
        )
        values: dict[str, list[str]] = {}
        for row in rows:
            values.setdefault(str(row["p"]), []).append(row["o"].value)
        one = {key: found[0] for key, found in values.items() if len(found) == 1}
        return GraphState(
            current=one.get(CURRENT),
            modified=parse_modified(one[MODIFIED]) if MODIFIED in one else None,
            modified_text=one.get(MODIFIED_TEXT),
            imported=parse_modified(one[IMPORTED]) if IMPORTED in one else None,
            discard=tuple(sorted(values.get(DISCARD, []))),
            subsets=self._read_subsets(store),
        )

    def _read_subsets(self, store: TripleStore) -> dict[str, datetime]:
        rows = store.select(
            f"SELECT ?d ?m WHERE {{ GRAPH {iri(self.meta)} {{ ?k {SUBSET_OF} {iri(self.name)} ; "
            f"{DATASET} ?d ; {MODIFIED} ?m }} }}"
        )
        return {row["d"].value: parse_modified(row["m"].value) for row in rows}

    def _subset_key(self, dataset: str) -> str:
        return iri(f"{self.name}#subset-{hashlib.sha256(dataset.encode()).hexdigest()[:32]}")

    def _stamp_subsets(self, stamp: SubsetStamp, where: str) -> list[str]:
        """Replace the recorded ``modified`` of the stamped subsets (of every subset with ``replace_all``)."""
        meta, me = iri(self.meta), iri(self.name)
        keys = " ".join(self._subset_key(dataset) for dataset, _, _ in stamp.modified)
        if not stamp.replace_all and not keys:
            return []
        scope = "" if stamp.replace_all else f"VALUES ?k {{ {keys} }} "
        updates = [f"DELETE {{ GRAPH {meta} {{ ?k ?p ?o }} }} WHERE {{ {where} {scope}"
                   f"GRAPH {meta} {{ ?k {SUBSET_OF} {me} . ?k ?p ?o }} }}"]
        if keys:
            triples = " ".join(
                f"{self._subset_key(dataset)} {SUBSET_OF} {me} ; {DATASET} {iri(dataset)} ; "
                f"{MODIFIED} {_datetime(modified)} ; {MODIFIED_TEXT} {_literal(text)} ."
                for dataset, modified, text in stamp.modified
            )
            updates.append(f"INSERT {{ GRAPH {meta} {{ {triples} }} }} WHERE {{ {where} }}")
        return updates

    def mark_discard(self, graph: str) -> str:
        """Record a graph about to be written (or to be dropped), so an interrupted run is cleaned up."""
        return f"INSERT DATA {{ GRAPH {iri(self.meta)} {{ {iri(self.name)} {DISCARD} {iri(graph)} }} }}"

    def forget_discard(self, graph: str) -> str:
        return f"DELETE DATA {{ GRAPH {iri(self.meta)} {{ {iri(self.name)} {DISCARD} {iri(graph)} }} }}"

    def _stamp(self, modified: datetime | None, modified_text: str | None, imported: datetime, where: str) -> str:
        """Replace the harvested ``modified`` (none, for a VoID that gives none) and import time, if ``where``
        matches."""
        meta, me = iri(self.meta), iri(self.name)
        dated = "" if modified is None else (
            f"{me} {MODIFIED} {_datetime(modified)} . {me} {MODIFIED_TEXT} {_literal(modified_text or '')} . ")
        return (
            f"DELETE {{ GRAPH {meta} {{ {me} {MODIFIED} ?m . {me} {MODIFIED_TEXT} ?t . {me} {IMPORTED} ?i }} }} "
            f"INSERT {{ GRAPH {meta} {{ {dated}{me} {IMPORTED} {_datetime(imported)} }} }} "
            f"WHERE {{ {where} "
            f"OPTIONAL {{ GRAPH {meta} {{ {me} {MODIFIED} ?m }} }} "
            f"OPTIONAL {{ GRAPH {meta} {{ {me} {MODIFIED_TEXT} ?t }} }} "
            f"OPTIONAL {{ GRAPH {meta} {{ {me} {IMPORTED} ?i }} }} }}"
        )

    def switch(
        self, new: str, expected: str | None, modified: datetime | None, modified_text: str | None, imported: datetime,
        subsets: SubsetStamp = SubsetStamp(),
    ) -> str:
        """One update: ``new`` becomes current (if ``expected`` still is), the old version is to be dropped."""
        meta, me = iri(self.meta), iri(self.name)
        guard = "FILTER(!BOUND(?old))" if expected is None else f"FILTER(?old = {iri(expected)})"
        pointer = (
            f"DELETE {{ GRAPH {meta} {{ {me} {CURRENT} ?old . {me} {DISCARD} {iri(new)} }} }} "
            f"INSERT {{ GRAPH {meta} {{ {me} {CURRENT} {iri(new)} . {me} {DISCARD} ?old }} }} "
            f"WHERE {{ OPTIONAL {{ GRAPH {meta} {{ {me} {CURRENT} ?old }} }} {guard} }}"
        )
        where = f"GRAPH {meta} {{ {me} {CURRENT} {iri(new)} }}"
        stamp = self._stamp(modified, modified_text, imported, where)
        return " ;\n".join([pointer, stamp, *self._stamp_subsets(subsets, where)])

    def merge(
        self,
        current: str,
        staging: str,
        delete_batches: list[str],
        modified: datetime | None,
        modified_text: str | None,
        imported: datetime,
        subsets: SubsetStamp = SubsetStamp(),
    ) -> str:
        """One update: batched delete-by-subject in the current version, add the staged triples, stamp."""
        add = f"INSERT {{ GRAPH {iri(current)} {{ ?s ?p ?o }} }} WHERE {{ GRAPH {iri(staging)} {{ ?s ?p ?o }} }}"
        where = f"GRAPH {iri(self.meta)} {{ {iri(self.name)} {CURRENT} {iri(current)} }}"
        stamp = self._stamp(modified, modified_text, imported, where)
        return " ;\n".join([*delete_batches, add, stamp, *self._stamp_subsets(subsets, where)])


def provider_of(graph_name: str, base: str = DEFAULT_BASE) -> str | None:
    """The provider whose logical graph name this is (``None`` for other graphs)."""
    rest = graph_name[len(base):] if graph_name.startswith(base) else ""
    return rest if NAME_RE.fullmatch(rest) else None


def current_graphs(store: TripleStore, base: str = DEFAULT_BASE) -> dict[str, str]:
    """Provider name -> current version graph, for every provider harvested so far."""
    rows = store.select(
        f"SELECT ?name ?graph WHERE {{ GRAPH {iri(base + '_meta')} {{ ?name {CURRENT} ?graph }} }}"
    )
    found = {}
    for row in rows:
        provider = provider_of(row["name"].value, base)
        if provider:
            found[provider] = row["graph"].value
    return found
