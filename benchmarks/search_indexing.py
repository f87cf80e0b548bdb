"""Search indexing vs its raw limit, same documents, same server, same run: the project's full build
(``ElasticsearchIndex.full_build``: new index from the schema, bulk load, refresh, count, alias swap) against the
product's own ``helpers.parallel_bulk`` into a fresh index with the same mapping, then refresh and count.

Documents are IndexRecord-shaped JSON of about 1.2 KB. The server is started from Maven Central (as the tests
start it) unless ``--url`` names one. Memory: the process's peak RSS after a quarter of the documents and after
all of them (flat when equal).

    uv run --locked python benchmarks/search_indexing.py [--server opensearch|elasticsearch] [--documents 200000]
"""

from __future__ import annotations

import argparse
import json
import resource
import time

from ingest_assets import schemas
from ingest_assets.records.indexing import open_search_index
from ingest_assets_tests.support.servers.search import start_elasticsearch, start_opensearch, without_asciifolding

WORDS = ("river mill bridge harvest festival street church school map letter portrait ledger photograph survey "
         "railroad station county courthouse flood orchard quarry").split()


def documents(count: int, offset: int = 0):
    for n in range(offset, offset + count):
        words = [WORDS[(n * 7 + k) % len(WORDS)] for k in range(12)]
        doc = {
            "id": f"{n:032x}", "@id": f"http://dp.la/api/items/{n:032x}", "ingestDate": "2026-01-15T06:00:00Z",
            "isShownAt": f"https://demo.example.org/items/{n:08d}", "object": f"https://demo.example.org/thumbs/{n}.jpg",
            "dataProvider": {"name": "Riverside Historical Society"}, "provider": {"name": "Demo Hub"},
            "sourceResource": {
                "title": [f"{words[0].title()}s in Millbrook, view {n}"],
                "description": [" ".join(words * 4)],
                "subject": [{"name": w} for w in words[:5]],
                "creator": ["Riverside Photo Studio"], "date": [{"displayDate": f"19{n % 100:02d}"}],
                "type": ["image"], "format": ["Photographs"], "rights": ["http://rightsstatements.org/vocab/InC/1.0/"],
                "identifier": [f"oai:demo.example.org:{n:08d}"], "language": [{"name": "English"}],
                "spatial": [{"name": "Millbrook (N.Y.)"}],
            },
        }
        yield {"id": doc["id"], "deleted": False, "document": json.dumps(doc)}


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def project(url: str, product: str, count: int) -> tuple[float, int]:
    index = open_search_index(url, chunk_size=500)
    if product == "elasticsearch":  # its test distribution lacks analysis-common: the one filter is swapped
        index._settings = without_asciifolding({"settings": index._settings})["settings"]
    start = time.perf_counter()
    stats = index.full_build("bench-project", documents(count))
    seconds = time.perf_counter() - start
    index.close()
    return seconds, stats.reconciliation.index_count


def raw(url: str, product: str, count: int) -> tuple[float, int]:
    body = schemas.read_json("search-dpla-map4-mapping.json")
    if product == "elasticsearch":
        from elasticsearch import Elasticsearch
        from elasticsearch.helpers import parallel_bulk

        client = Elasticsearch(url, request_timeout=120)
        client.indices.create(index="bench-raw", **without_asciifolding(body))
    else:
        from opensearchpy import OpenSearch
        from opensearchpy.helpers import parallel_bulk

        client = OpenSearch([url], timeout=120)
        client.indices.create(index="bench-raw", body=body)
    start = time.perf_counter()
    actions = ({"_index": "bench-raw", "_id": d["id"], "_source": d["document"]} for d in documents(count))
    for ok, info in parallel_bulk(client, actions, chunk_size=500):
        if not ok:
            raise RuntimeError(info)
    client.indices.refresh(index="bench-raw")
    found = client.count(index="bench-raw")["count"]
    seconds = time.perf_counter() - start
    client.indices.delete(index="bench-raw")
    return seconds, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", choices=("opensearch", "elasticsearch"), default="opensearch")
    parser.add_argument("--documents", type=int, default=200_000)
    parser.add_argument("--url", help="a running server instead of one started here")
    args = parser.parse_args()
    server = None
    if not args.url:
        server = (start_opensearch if args.server == "opensearch" else start_elasticsearch)()
    url = args.url or server.url
    try:
        project(url, args.server, max(1, args.documents // 4))
        quarter_rss = rss_mb()
        raw_s, raw_n = raw(url, args.server, args.documents)
        ours_s, ours_n = project(url, args.server, args.documents)
        assert raw_n == ours_n == args.documents, (raw_n, ours_n)
        print(f"{args.server}: {args.documents:,} documents (~{len(next(documents(1))['document']):,} bytes)")
        print(f"  raw parallel_bulk (4 threads) + refresh: {raw_s:.1f} s = {raw_n / raw_s:,.0f} docs/s")
        print(f"  project full build (new index, bulk, refresh, count, alias swap): {ours_s:.1f} s = "
              f"{ours_n / ours_s:,.0f} docs/s  -> ratio {raw_s / ours_s:.2f} of raw")
        print(f"  peak RSS: {quarter_rss:,.0f} MB after {args.documents // 4:,} documents, {rss_mb():,.0f} MB after "
              f"{args.documents:,} (both runs in this process)")
    finally:
        if server:
            server.stop()


if __name__ == "__main__":
    main()
