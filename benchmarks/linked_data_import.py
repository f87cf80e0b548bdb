"""Linked-data import vs plain pyoxigraph bulk load, same file, same run.

A provider graph already holds version 1 (N triples); version 2 of the dump (same subjects, a third of
the values changed, 5% new subjects) is imported through the real path (HTTP download from 127.0.0.1,
parse + subject collection, staged apply, pointer switch), once declared PartialDump (delete-by-subject)
and once FullDump. The dropping of the retired version happens after readers moved on and is timed apart.

    .venv/bin/python benchmarks/linked_data_import.py [--triples 1000000]
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from pyoxigraph import NamedNode, RdfFormat, Store

from ingest_assets.core.http import HttpClient
from ingest_assets.linked_data.graphs import ProviderGraphs
from ingest_assets.linked_data.importer import ProviderSource, cleanup, import_update
from ingest_assets.linked_data.oxigraph import OxigraphStore
from ingest_assets.linked_data.void import parse_void

PER_SUBJECT = 10
FEATURES = {"partial": "PartialDump", "full": "FullDump"}


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def write_dump(path: Path, triples: int, version: int) -> None:
    subjects = triples // PER_SUBJECT
    extra = subjects // 20 if version > 1 else 0
    with path.open("w", encoding="utf-8") as out:
        for s in range(subjects - extra):
            for p in range(PER_SUBJECT):
                changed = version if (s + p) % 3 == 0 else 1
                out.write(f'<http://example.org/id/{s}> <http://example.org/p/{p}> "value {s}-{p} v{changed}" .\n')
        for s in range(subjects, subjects + extra):
            for p in range(PER_SUBJECT):
                out.write(f'<http://example.org/id/{s}> <http://example.org/p/{p}> "new {s}-{p}" .\n')


def void_for(base: str, dump: str, modified: str, kind: str) -> bytes:
    return (
        "@prefix void: <http://rdfs.org/ns/void#> . @prefix dcterms: <http://purl.org/dc/terms/> .\n"
        f"<#d> a void:Dataset ; void:feature <http://schema.geolink.org/dev/voc/harvester#{FEATURES[kind]}> ;\n"
        f'  dcterms:modified "{modified}" ; void:dataDump <{base}/{dump}> .\n'
    ).encode()


def timed(label: str, triples: int, fn, baseline: float | None = None) -> float:
    started = time.perf_counter()
    fn()
    seconds = time.perf_counter() - started
    rate = triples / seconds
    ratio = f"  ({rate / baseline:.2f}x bulk load)" if baseline else ""
    print(f"{label:<44} {seconds:7.1f} s  {rate:>10,.0f} triples/s{ratio}", flush=True)
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triples", type=int, default=1_000_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ld-bench-") as tmp:
        work = Path(tmp)
        write_dump(work / "v1.nt", args.triples, 1)
        write_dump(work / "v2.nt", args.triples, 2)
        v2_triples = sum(1 for _ in (work / "v2.nt").open("rb"))
        server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(work)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_address[1]}"
        print(f"dump: {v2_triples:,} triples ({(work / 'v2.nt').stat().st_size / 1e6:.0f} MB N-Triples), "
              f"graph holds version 1 ({args.triples:,} triples)")

        bulk = timed("pyoxigraph bulk_load (empty graph)", v2_triples, lambda: Store(str(work / "plain")).bulk_load(
            path=str(work / "v2.nt"), format=RdfFormat.N_TRIPLES, to_graph=NamedNode("http://example.org/g")))

        http = HttpClient(allow_private=True)
        source = ProviderSource("bench", f"{base}/void.ttl", allow_private=True)
        for kind in ("partial", "full"):
            with OxigraphStore(work / f"store-{kind}", writable=True) as store:
                graphs = ProviderGraphs("bench")

                def run(dump: str, modified: str) -> None:
                    void = parse_void(void_for(base, dump, modified, kind), provider="bench", url=source.void_url)
                    result = import_update(source, store, http, graphs, void=void, tmp_dir=work)
                    print(f"  strategy {result.strategy}, {result.triples_loaded:,} triples loaded, "
                          f"graph now {store.count(result.state.current):,}")

                run("v1.nt", "2020-01-01")
                timed(f"import v2 as {kind} dump (until visible)", v2_triples, lambda: run("v2.nt", "2020-01-02"), bulk)
                timed("  then drop the retired version", args.triples, lambda: cleanup(store, graphs))
        server.shutdown()


if __name__ == "__main__":
    main()
