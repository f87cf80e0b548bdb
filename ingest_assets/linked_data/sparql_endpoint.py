"""Any SPARQL 1.1 server: Query and Update protocols plus the Graph Store HTTP Protocol for bulk loads.

The endpoint is operator configuration (often on localhost), so the client allows private addresses.
Writes are not retried blindly: a retried bulk POST could add a file twice.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from pyoxigraph import QueryResultsFormat, QuerySolutions, RdfFormat, Triple, parse, parse_query_results

from ingest_assets.core.errors import FetchError
from ingest_assets.core.http import HttpClient
from ingest_assets.linked_data.triplestore import Term, TripleStore, iri


class SparqlEndpointStore(TripleStore):
    def __init__(
        self,
        query_url: str,
        update_url: str,
        graph_store_url: str,
        *,
        timeout: tuple[float, float] = (5, 600),
    ):
        self.query_url = query_url
        self.update_url = update_url
        self.graph_store_url = graph_store_url
        self._reads = HttpClient(timeout=timeout, allow_private=True)
        self._writes = HttpClient(timeout=timeout, retries=0, allow_private=True)

    @classmethod
    def for_oxigraph(cls, base_url: str, **kwargs) -> "SparqlEndpointStore":
        """``oxigraph serve`` layout: ``/query``, ``/update``, ``/store``."""
        base = base_url.rstrip("/")
        return cls(f"{base}/query", f"{base}/update", f"{base}/store", **kwargs)

    def load(self, graph: str, ntriples: Path) -> None:
        with ntriples.open("rb") as body, self._writes.stream(
            self.graph_store_url,
            method="POST",
            params={"graph": graph},
            data=body,
            headers={"Content-Type": RdfFormat.N_TRIPLES.media_type},
        ):
            pass

    def update(self, sparql: str) -> None:
        with self._writes.stream(
            self.update_url,
            method="POST",
            data=sparql.encode("utf-8"),
            headers={"Content-Type": "application/sparql-update"},
        ):
            pass

    def select(self, sparql: str) -> list[dict[str, Term]]:
        response = self._reads.get(
            self.query_url, params={"query": sparql}, headers={"Accept": "application/sparql-results+json"}
        )
        solutions = parse_query_results(response.content, QueryResultsFormat.JSON)
        if not isinstance(solutions, QuerySolutions):
            raise TypeError("select() needs a SELECT query")
        names = [v.value for v in solutions.variables]
        return [{n: row[n] for n in names if row[n] is not None} for row in solutions]

    def triples(self, graph: str) -> Iterator[Triple]:
        try:
            with self._reads.stream(
                self.graph_store_url, params={"graph": graph}, headers={"Accept": RdfFormat.N_TRIPLES.media_type}
            ) as (response, _):
                response.raw.decode_content = True
                for quad in parse(input=response.raw, format=RdfFormat.N_TRIPLES):
                    yield quad.triple
        except FetchError as exc:
            if exc.status != 404:  # an empty graph does not exist for the Graph Store Protocol
                raise

    def drop(self, graph: str) -> None:
        self.update(f"DROP SILENT GRAPH {iri(graph)}")

    def copy_without(self, source: str, target: str, subjects: set[Term]) -> None:
        self.update(f"ADD SILENT {iri(source)} TO {iri(target)}")
        self.delete_subjects(target, subjects)
