"""A SPARQL server import vs its raw limit, same N-Triples file, same server, same run: the endpoint store's
bounded load (``SparqlEndpointStore.load``: requests of at most ``INGEST_SPARQL_MAX_REQUEST_BYTES``, blank-node
groups whole) against one raw Graph Store POST of the whole file, each into a fresh graph of Fuseki 5.6 on TDB2
(started from Maven Central, as the tests start it, with ``--heap``; or ``--url`` for a running dataset).

The file: ``--triples`` triples about people, one in ten with a blank-node address (about 80 bytes a triple).
Memory: this process's peak RSS after a quarter of the triples and after all of them.

    uv run --locked python benchmarks/sparql_import.py [--triples 1000000] [--heap 2g]
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
import uuid
from pathlib import Path

import requests

from ingest_assets.core.settings import SPARQL_MAX_REQUEST_BYTES
from ingest_assets.linked_data.sparql_endpoint import SparqlEndpointStore
from ingest_assets_tests.support.servers.fuseki import start_fuseki


def dump(path: Path, triples: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        n = 0
        while n < triples:
            person = f"<http://example.org/person/{n}>"
            out.write(f'{person} <http://xmlns.com/foaf/0.1/name> "Person number {n}" .\n')
            out.write(f"{person} <http://xmlns.com/foaf/0.1/knows> <http://example.org/person/{n + 1}> .\n")
            if n % 10 == 0:
                out.write(f"{person} <http://schema.org/address> _:a{n} .\n")
                out.write(f'_:a{n} <http://schema.org/addressLocality> "Town {n % 97}" .\n')
                n += 2
            n += 2


def count(store: SparqlEndpointStore, graph: str) -> int:
    return store.count(graph)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--triples", type=int, default=1_000_000)
    parser.add_argument("--heap", default="2g")
    parser.add_argument("--max-request-bytes", type=int, default=SPARQL_MAX_REQUEST_BYTES)
    parser.add_argument("--url", help="a running Fuseki dataset (http://host:3030/ds)")
    args = parser.parse_args()
    server = None if args.url else start_fuseki(heap=args.heap)
    url = args.url or server.url
    store = SparqlEndpointStore.for_server(f"fuseki+{url}", max_request_bytes=args.max_request_bytes)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            small, large = Path(tmp) / "small.nt", Path(tmp) / "large.nt"
            dump(small, max(4, args.triples // 4))
            dump(large, args.triples)
            warm = f"urn:x-bench:{uuid.uuid4().hex}"
            store.load(warm, small)
            quarter = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            store.drop(warm)

            raw_graph = f"urn:x-bench:raw-{uuid.uuid4().hex}"
            start = time.perf_counter()
            with large.open("rb") as body:
                requests.post(f"{url}/data", params={"graph": raw_graph}, data=body,
                              headers={"Content-Type": "application/n-triples"}, timeout=3600).raise_for_status()
            raw_s = time.perf_counter() - start
            ours_graph = f"urn:x-bench:ours-{uuid.uuid4().hex}"
            start = time.perf_counter()
            store.load(ours_graph, large)
            ours_s = time.perf_counter() - start
            loaded = count(store, ours_graph)
            assert loaded == count(store, raw_graph), "the two graphs differ"
            size = large.stat().st_size
        print(f"Fuseki 5.6 TDB2: {loaded:,} triples ({size / 1e6:,.0f} MB of N-Triples)")
        print(f"  raw Graph Store POST (one request): {raw_s:.1f} s = {loaded / raw_s:,.0f} triples/s")
        requests_made = -(-size // args.max_request_bytes)
        print(f"  bounded load (~{requests_made} requests of <= {args.max_request_bytes / 2**20:.0f} MiB): {ours_s:.1f} s = "
              f"{loaded / ours_s:,.0f} triples/s  -> ratio {raw_s / ours_s:.2f} of raw")
        print(f"  peak RSS: {quarter:,.0f} MB after {args.triples // 4:,} triples, "
              f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB after {args.triples:,}")
        store.drop(raw_graph)
        store.drop(ours_graph)
    finally:
        if server:
            server.stop()


if __name__ == "__main__":
    main()
