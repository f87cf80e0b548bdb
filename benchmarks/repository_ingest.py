"""Repository ingest throughput: one collection of N image records from a local TemplateParameterIndex
into the embedded OCFL backend (first ingest, then a delete-and-reingest update), SQLite bookkeeping.

    uv run --locked python benchmarks/repository_ingest.py [N]
"""

from __future__ import annotations

import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import parse_qs

from lxml import etree

from ingest_assets.core.http import HttpClient
from ingest_assets.core.wsgi import WsgiServer
from ingest_assets.repository.bookkeeping import Bookkeeping
from ingest_assets.repository.index import ObjectIndex
from ingest_assets.repository.ingest import IngestSettings, RepositoryIngest
from ingest_assets.repository.ocfl import OcflRepository
from ingest_assets.repository.template_index import TemplateIndexClient
from ingest_assets.repository.validation import load_vocabularies
from ingest_assets.core.sql import make_engine

WIKI = "http://www.keytonature.eu/wiki/"


def records(n: int, modified: datetime, title: str) -> bytes:
    root = etree.Element("TemplateParameterIndex")
    stamp = modified.strftime("%Y-%m-%d %H:%M:%S")
    for i in range(n):
        record = etree.SubElement(root, "record")
        fields = {"TemplateName": "Metadata", "BaseURL": WIKI, "PageName": f"Image {i}", "Modified": stamp,
                  "Harvested": stamp, "Type": "StillImage", "Title": f"{title} {i}",
                  "Collection_Page": "Bench collection", "Best_Quality_URI": f"http://img.example.org/{i}.jpg",
                  "Country_Codes": "DE; NL", "Language": "en"}
        for name, value in fields.items():
            etree.SubElement(record, name).text = value
    return etree.tostring(root)


def main(n: int) -> None:
    state = {"body": records(n, datetime.now(timezone.utc) - timedelta(minutes=5), "Pollen")}

    def app(environ, start_response):
        query = {k: v[0] for k, v in parse_qs(environ["QUERY_STRING"]).items()}
        body = state["body"] if query.get("template") == "Metadata" else b"<TemplateParameterIndex/>"
        start_response("200 OK", [("Content-Type", "application/xml")])
        return [body]

    server = WsgiServer().start(app)
    url = f"{server.url}/TemplateParameterIndex"
    with tempfile.TemporaryDirectory() as tmp:
        engine = make_engine(f"sqlite:///{Path(tmp) / 'ingest.sqlite3'}")
        repository = OcflRepository(Path(tmp) / "ocfl")

        def run() -> float:
            service = RepositoryIngest(
                IngestSettings(source=url, provider="bench"),
                source=TemplateIndexClient(url, HttpClient(allow_private=True)), repository=repository,
                index=ObjectIndex(engine), bookkeeping=Bookkeeping(engine), vocabularies=load_vocabularies())
            started = time.perf_counter()
            (outcome,) = service.run().outcomes
            assert outcome.ingested == n + 1 and not outcome.error, outcome
            return time.perf_counter() - started

        first = run()
        time.sleep(1.1)  # the update must be newer than the first interval (index times have whole seconds)
        state["body"] = records(n, datetime.now(timezone.utc) - timedelta(seconds=1), "Pollen grain")
        second = run()
        server.shutdown()
    print(f"records={n}")
    print(f"first ingest: {first:.2f} s, {(n + 1) / first:.0f} objects/s (OCFL, new objects)")
    print(f"update: {second:.2f} s, {n} deletes + {n + 1} writes, {(2 * n + 1) / second:.0f} operations/s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 500)
