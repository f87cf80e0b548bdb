"""One local web site for the whole-platform demo, on one port: the OAI-PMH endpoint of the sample records
(``/oai``), a linked-data provider's VoID and dump (``/lod/``) and a Dataverse-like dataset platform (its
landing page, native API and file access paths). Everything here is of our own making, from the samples.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from urllib.parse import parse_qs

from ingest_assets.core.wsgi import WsgiServer
from ingest_assets.demo.oai_server import make_app
from ingest_assets.demo.samples import PLACES, SUBJECTS, SampleRecord

LOD_MODIFIED = "2026-01-10"
DATASET_PID = "doi:10.5072/FK2/DEMO01"
VOCAB = "http://riverside.demo.example/vocab#"


def lod_dump(base: str) -> bytes:
    """N-Triples about the sample places and subjects (a provider's linked-data dump)."""
    lines = []
    for n, place in enumerate(PLACES):
        subject = f"<{base}/lod/place/{n}>"
        lines += [
            f"{subject} <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://schema.org/Place> .",
            f'{subject} <http://www.w3.org/2000/01/rdf-schema#label> "{place}"@en .',
            f"{subject} <{VOCAB}county> <{base}/lod/county/imaginary> .",
        ]
    for n, topic in enumerate(SUBJECTS):
        subject = f"<{base}/lod/topic/{n}>"
        lines += [
            f"{subject} <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://www.w3.org/2004/02/skos/core#Concept> .",
            f'{subject} <http://www.w3.org/2004/02/skos/core#prefLabel> "{topic}"@en .',
        ]
    return ("\n".join(lines) + "\n").encode()


def lod_void(base: str) -> bytes:
    """A GeoLink VoID announcing the full dump."""
    return (
        "@prefix void: <http://rdfs.org/ns/void#> .\n@prefix dcterms: <http://purl.org/dc/terms/> .\n"
        "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
        "<#dataset> a void:Dataset ;\n"
        "  void:feature <http://schema.geolink.org/dev/voc/harvester#FullDump> , <http://www.w3.org/ns/formats/N-Triples> ;\n"
        f'  dcterms:modified "{LOD_MODIFIED}"^^xsd:date ;\n'
        f"  void:dataDump <{base}/lod/dump.nt> .\n"
    ).encode()


def dataset_files() -> dict[int, tuple[str, bytes]]:
    """The demo dataset's files by Dataverse file id: a CSV of the samples' places and a README."""
    places = "place,county\n" + "".join(f"{p},Imaginary County\n" for p in PLACES)
    return {
        101: ("places.csv", places.encode()),
        102: ("README.txt", b"Places photographed by the Riverside Historical Society (demo data).\n"),
    }


def dataset_api() -> bytes:
    """The Dataverse native API answer for the demo dataset (the fields our Dataverse client reads)."""
    files = [
        {"label": name, "restricted": False, "dataFile": {
            "id": file_id, "filename": name, "filesize": len(data), "contentType": "text/plain",
            "md5": hashlib.md5(data).hexdigest(),  # noqa: S324 - the checksum Dataverse publishes
            "checksum": {"type": "SHA-256", "value": hashlib.sha256(data).hexdigest()},
        }}
        for file_id, (name, data) in dataset_files().items()
    ]
    version = {
        "versionState": "RELEASED", "versionNumber": 1, "versionMinorNumber": 0, "publicationDate": "2026-01-12",
        "license": {"name": "CC0 1.0", "uri": "http://creativecommons.org/publicdomain/zero/1.0"},
        "files": files,
        "metadataBlocks": {"citation": {"fields": [
            {"typeName": "title", "value": "Places of the Riverside glass plates"},
            {"typeName": "author", "value": [{"authorName": {"value": "Riverside Historical Society"}}]},
        ]}},
    }
    return json.dumps({"status": "OK", "data": {"id": 7, "latestVersion": version}}).encode()


def make_site(records: Sequence[SampleRecord], base: str):
    """The WSGI app of the demo site at ``base`` (``http://127.0.0.1:<port>``)."""
    oai = make_app(records, f"{base}/oai")
    files = dataset_files()
    landing = (f'<html><head><meta name="citation_doi" content="{DATASET_PID[4:]}"><title>Demo dataset</title></head>'
               "<body>Places of the Riverside glass plates</body></html>").encode()
    static = {
        "/lod/void.ttl": (lod_void(base), "text/turtle"),
        "/lod/dump.nt": (lod_dump(base), "application/n-triples"),
        "/dataset.xhtml": (landing, "text/html; charset=utf-8"),
        "/api/datasets/:persistentId/": (dataset_api(), "application/json"),
    }

    def app(environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path == "/oai":
            return oai(environ, start_response)
        body, kind = static.get(path, (None, None))
        if path.startswith("/api/access/datafile/"):
            found = files.get(int(path.rsplit("/", 1)[-1])) if path.rsplit("/", 1)[-1].isdigit() else None
            body, kind = (found[1], "text/plain") if found else (None, None)
        if path in ("/dataset.xhtml", "/api/datasets/:persistentId/"):
            if parse_qs(environ.get("QUERY_STRING", "")).get("persistentId") != [DATASET_PID]:
                body = None
        if body is None:
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"not found\n"]
        start_response("200 OK", [("Content-Type", kind), ("Content-Length", str(len(body)))])
        return [body]

    return app


def serve_site(records: Sequence[SampleRecord], port: int = 0, host: str = "127.0.0.1") -> tuple[WsgiServer, str]:
    """Serve the demo site in a daemon thread (``port`` 0: a free one); :class:`PortInUse` if taken."""
    server = WsgiServer(host, port)
    return server.start(make_site(records, server.url)), server.url


def dataset_url(base: str) -> str:
    return f"{base}/dataset.xhtml?persistentId={DATASET_PID}"
