"""Any SPARQL 1.1 server: Query and Update protocols plus the Graph Store HTTP Protocol for bulk loads.

The endpoint is operator configuration (often on localhost), so the client allows private addresses.
Writes are not retried blindly: a retried bulk POST could add a file twice.

A server is named by its base URL, prefixed with its product when its paths are not Oxigraph's
(:data:`LAYOUTS`: ``fuseki+http://host:3030/ds``, ``graphdb+http://host:7200/repositories/repo``,
``virtuoso+http://host:8890``), or by its three endpoint URLs. A base URL with a path and no product is asked
whether it is a Fuseki dataset (its server answers ``/$/ping``) when a store is made for it: a Fuseki dataset URL
given plain works (Fuseki answered Oxigraph's Graph Store path with HTTP 405 at the first import).

Bulk loads go in requests of at most ``max_request_bytes`` (a POST adds to the graph), so a server's request
size limit or heap never decides whether a dump imports: the importer only loads into a version graph that no
reader sees until the pointer moves to it. A blank node is one node only within one request, so the triples
that mention blank nodes are sent after the others, each connected group of them (triples sharing a blank node)
whole in one request.
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

from pyoxigraph import BlankNode, QueryResultsFormat, QuerySolutions, RdfFormat, Triple, parse, parse_query_results

from ingest_assets.core.errors import ConfigError, FetchError
from ingest_assets.core.http import HttpClient
from ingest_assets.core.settings import SPARQL_MAX_REQUEST_BYTES
from ingest_assets.linked_data.triplestore import Term, TripleStore, iri

# product -> (query, update, Graph Store) paths below the base URL the operator gives
LAYOUTS = {
    "oxigraph": ("/query", "/update", "/store"),  # oxigraph serve; the base is the server
    "fuseki": ("/query", "/update", "/data"),  # Apache Jena Fuseki; the base is the dataset (http://host:3030/ds)
    "graphdb": ("", "/statements", "/rdf-graphs/service"),  # Ontotext GraphDB; the base is /repositories/<id>
    "virtuoso": ("/sparql", "/sparql", "/sparql-graph-crud"),  # OpenLink Virtuoso; the base is the server
}


def is_endpoint(location: str) -> bool:
    """Whether ``INGEST_TRIPLESTORE`` names a server (``http(s)://``, optionally ``<product>+``) or a directory."""
    scheme, sep, _ = location.partition("://")
    product, _, transport = scheme.rpartition("+")
    return bool(sep) and transport in ("http", "https") and product in ("", *LAYOUTS)


def endpoint_urls(location: str) -> tuple[str, str, str]:
    """``(query, update, graph store)`` URLs of a server named ``[<product>+]http(s)://base`` (Oxigraph's
    layout when no product is named)."""
    if not is_endpoint(location):
        raise ConfigError(f"not a SPARQL server URL: {location!r} (products: {', '.join(LAYOUTS)})", file=location)
    scheme, _, rest = location.partition("://")
    product, _, transport = scheme.rpartition("+")
    base = f"{transport}://{rest}".rstrip("/")
    query, update, store = LAYOUTS[product or "oxigraph"]
    return base + query, base + update, base + store


FUSEKI_PING = "/$/ping"  # Fuseki's server liveness endpoint, below the server root (not the dataset)


def recognised(location: str, http: HttpClient) -> str:
    """``location`` with its product named when it gave none: a base URL with a path whose server answers Fuseki's
    ``/$/ping`` is a Fuseki dataset (``fuseki+`` prefixed); any other location is returned as given."""
    scheme, _, _ = location.partition("://")
    parts = urlsplit(location)
    if "+" in scheme or not parts.path.strip("/") or not is_endpoint(location):
        return location
    try:
        http.get(f"{parts.scheme}://{parts.netloc}{FUSEKI_PING}", max_bytes=4096)
    except FetchError:
        return location  # not Fuseki's (or not answering: the first request says so, naming the URL)
    return f"fuseki+{location}"


class SparqlEndpointStore(TripleStore):
    def __init__(
        self,
        query_url: str,
        update_url: str,
        graph_store_url: str,
        *,
        timeout: tuple[float, float] = (5, 600),
        max_request_bytes: int = SPARQL_MAX_REQUEST_BYTES,
    ):
        self.query_url = query_url
        self.update_url = update_url
        self.graph_store_url = graph_store_url
        self.max_request_bytes = max_request_bytes
        self._reads = HttpClient(timeout=timeout, allow_private=True)
        self._writes = HttpClient(timeout=timeout, retries=0, allow_private=True)

    @classmethod
    def for_server(cls, location: str, **kwargs) -> "SparqlEndpointStore":
        """The server named ``[<product>+]http(s)://base`` (see :data:`LAYOUTS`; a plain Fuseki dataset URL is
        :func:`recognised`)."""
        asking = HttpClient(timeout=(5, 10), retries=0, allow_private=True)
        return cls(*endpoint_urls(recognised(location, asking)), **kwargs)

    def load(self, graph: str, ntriples: Path) -> None:
        """POST the N-Triples file to ``graph`` in requests of at most ``max_request_bytes`` (a group of triples
        joined by blank nodes larger than that goes alone, whole)."""
        for chunk in _requests(ntriples, self.max_request_bytes):
            self._post(graph, chunk)

    def _post(self, graph: str, body: bytes) -> None:
        with self._writes.stream(
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


def _requests(ntriples: Path, limit: int) -> Iterator[bytes]:
    """The request bodies for a bounded load: lines without a blank node in file order, packed up to ``limit``
    bytes; then the lines with blank nodes, grouped by connected blank nodes (a union-find kept in a temporary
    SQLite database, so memory stays flat), each group whole."""
    chunk: list[bytes] = []
    size = 0
    with tempfile.TemporaryDirectory(prefix="bnodes-") as work, sqlite3.connect(Path(work) / "groups.db") as db:
        groups = _BlankNodeGroups(db)
        with ntriples.open("rb") as lines:
            for line in lines:
                if b"_:" in line and groups.add(line):
                    continue
                if chunk and size + len(line) > limit:
                    yield b"".join(chunk)
                    chunk, size = [], 0
                chunk.append(line)
                size += len(line)
        for group in groups.groups():
            if chunk and size + len(group) > limit:
                yield b"".join(chunk)
                chunk, size = [], 0
            chunk.append(group)
            size += len(group)
    if chunk:
        yield b"".join(chunk)


class _BlankNodeGroups:
    """Lines holding blank nodes, grouped by the blank nodes they share: a union-find over labels and the lines
    themselves kept in SQLite, so memory stays flat however many blank nodes a dump has."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db
        db.executescript("CREATE TABLE parent (node TEXT PRIMARY KEY, up TEXT NOT NULL);"
                         "CREATE TABLE line (n INTEGER PRIMARY KEY, node TEXT NOT NULL, text BLOB NOT NULL);"
                         "CREATE TABLE grouped (root TEXT NOT NULL, n INTEGER NOT NULL);")

    def _root(self, node: str) -> str:
        path = []
        while True:
            row = self.db.execute("SELECT up FROM parent WHERE node = ?", (node,)).fetchone()
            if row is None:
                self.db.execute("INSERT INTO parent VALUES (?, ?)", (node, node))
                break
            if row[0] == node:
                break
            path.append(node)
            node = row[0]
        if len(path) > 1:  # path compression: the walk is short next time
            self.db.executemany("UPDATE parent SET up = ? WHERE node = ?", [(node, p) for p in path])
        return node

    def add(self, line: bytes) -> bool:
        """Keep ``line`` if its subject or object is a blank node; False when neither is."""
        labels = _blank_labels(line)
        if not labels:
            return False
        roots = [self._root(label) for label in labels]
        if len(roots) == 2 and roots[0] != roots[1]:
            self.db.execute("UPDATE parent SET up = ? WHERE node = ?", (roots[0], roots[1]))
        self.db.execute("INSERT INTO line (node, text) VALUES (?, ?)", (labels[0], line))
        return True

    def groups(self) -> Iterator[bytes]:
        """Each group's lines, joined, in the order of their first line."""
        scan = self.db.execute("SELECT n, node FROM line ORDER BY n")
        while rows := scan.fetchmany(10_000):
            self.db.executemany("INSERT INTO grouped VALUES (?, ?)", [(self._root(node), n) for n, node in rows])
        self.db.execute("CREATE INDEX grouped_root ON grouped (root, n)")
        current, lines = None, []
        for root, text in self.db.execute(
            "SELECT g.root, l.text FROM grouped g JOIN line l USING (n) "
            "JOIN (SELECT root, MIN(n) AS first FROM grouped GROUP BY root) f USING (root) ORDER BY f.first, g.n"
        ):
            if root != current and lines:
                yield b"".join(lines)
                lines = []
            current = root
            lines.append(text)
        if lines:
            yield b"".join(lines)


def _blank_labels(line: bytes) -> list[str]:
    """The labels of the blank nodes that are the subject or object of an N-Triples line."""
    (triple,) = [quad.triple for quad in parse(input=line, format=RdfFormat.N_TRIPLES)] or [None]
    if triple is None:
        return []
    return [term.value for term in (triple.subject, triple.object) if isinstance(term, BlankNode)]
