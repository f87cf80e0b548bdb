"""Linked-data test material: the GeoLink dump features, the fixture dumps a VoID with subsets serves, and
entity bombs (XML that expands to gigabytes) for the refusal tests, and the provider site that serves them."""

from __future__ import annotations

import gzip
import mimetypes
import stat
import tarfile
from dataclasses import dataclass
from pathlib import Path

from ingest_assets.linked_data.graphs import ProviderGraphs
from ingest_assets.linked_data.triplestore import TripleStore
from ingest_assets_tests.support import tar_bytes, zip_bytes

FULL = "http://schema.geolink.org/dev/voc/harvester#FullDump"
PARTIAL = "http://schema.geolink.org/dev/voc/harvester#PartialDump"

LAUGHS = "".join(f'<!ENTITY l{n} "{("&l" + str(n - 1) + ";") * 10}">' for n in range(1, 10))
RDFXML_BOMB = (
    f'<?xml version="1.0"?><!DOCTYPE rdf:RDF [<!ENTITY l0 "lol">{LAUGHS}]>'
    '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://example.org/">'
    '<rdf:Description rdf:about="http://example.org/a"><ex:p>&l9;</ex:p></rdf:Description></rdf:RDF>'
)
OAI_BOMB = (
    f'<?xml version="1.0"?><!DOCTYPE OAI-PMH [<!ENTITY l0 "lol">{LAUGHS}]>'
    '<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><ListRecords><record><header><identifier>a</identifier>'
    "</header><metadata><x>&l9;</x></metadata></record></ListRecords></OAI-PMH>"
)

ORGS = "dumps/dataone-organizations-geolink.ttl"  # 387 triples
LINKS = "dumps/bcodmo-rvdata-cruise-links.nt"  # 329
FUNDING = "dumps/bcodmo-funding-geolink-view.rdf"  # 329
PERSONS = "dumps/mblwhoi-geolink-person.rdf"  # 72
CRUISE = "<http://example.org/cruise/1>"
LABEL = "<http://www.w3.org/2000/01/rdf-schema#label>"


def tar_gz(members: dict[str, bytes]) -> bytes:
    return tar_bytes([(name, tarfile.REGTYPE, body) for name, body in members.items()])


def zipped(members: dict[str, bytes]) -> bytes:
    return zip_bytes([(name, body, stat.S_IFREG | 0o644) for name, body in members.items()])


def publish(site, provider: str, orgs_modified: str, bcodmo_modified: str, bcodmo_dumps: list[str]) -> str:
    """A VoID whose top dataset has two subsets, each with its own ``modified`` and dumps."""
    orgs = [site.fixture(ORGS), site.fixture(LINKS + ".gz", "2")]
    text = (
        "@prefix void: <http://rdfs.org/ns/void#> .\n@prefix dcterms: <http://purl.org/dc/terms/> .\n"
        "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
        f"<#all> a void:Dataset ; void:feature <{FULL}> ; void:subset <#orgs> , <#bcodmo> .\n"
        f'<#orgs> a void:Dataset ; dcterms:modified "{orgs_modified}"^^xsd:date ;\n'
        f"  void:dataDump {', '.join(f'<{d}>' for d in orgs)} .\n"
        f'<#bcodmo> a void:Dataset ; dcterms:modified "{bcodmo_modified}"^^xsd:date ;\n'
        f"  void:dataDump {', '.join(f'<{d}>' for d in bcodmo_dumps)} .\n"
    )
    return site.put(f"/{provider}/void.ttl", text)


def bcodmo_archives(site, void_fixtures, provider: str, cruise_label: str) -> list[str]:
    """A .tar.gz holding a .ttl and an .rdf member, and a .zip holding an .rdf member."""
    tar = tar_gz({
        "bcodmo/cruise.ttl": f'{CRUISE} {LABEL} "{cruise_label}" .\n'.encode(),
        "bcodmo/funding.rdf": (void_fixtures / FUNDING).read_bytes(),
    })
    return [
        site.put(f"/{provider}/bcodmo.tar.gz", tar, "application/gzip"),
        site.put(f"/{provider}/persons.zip", zipped({"persons.rdf": (void_fixtures / PERSONS).read_bytes()}),
                 "application/zip"),
    ]


CONTENT_TYPES = {".ttl": "text/turtle", ".nt": "application/n-triples", ".rdf": "application/rdf+xml"}


class ProviderSite:
    """WSGI app. ``/f/<tag>/<path>`` serves ``<fixtures>/void/<path>`` read in place (``<tag>`` only orders
    URLs; ``.gz`` appended means gzip on the fly); other paths serve documents a test ``put``.
    ``requested`` lists the paths asked for."""

    def __init__(self, void_fixtures: Path):
        self.root = void_fixtures
        self.documents: dict[str, tuple[bytes, str | None]] = {}
        self.requested: list[str] = []
        self.base = ""

    def __call__(self, environ, start_response):
        path = environ["PATH_INFO"]
        self.requested.append(path)
        found = self.documents.get(path)
        if found is None and path.startswith("/f/"):
            relative = path.split("/", 3)[3]
            compressed = relative.endswith(".gz")
            file = (self.root / relative.removesuffix(".gz")).resolve()
            if file.is_relative_to(self.root) and file.is_file():
                body = file.read_bytes()
                found = (gzip.compress(body), "application/gzip") if compressed else (
                    body, CONTENT_TYPES.get(file.suffix) or mimetypes.guess_type(file.name)[0])
        if found is None:
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"not found"]
        body, content_type = found
        start_response("200 OK", [("Content-Type", content_type or "application/octet-stream")])
        return [body]

    def fixture(self, relative: str, tag: str = "1") -> str:
        return f"{self.base}/f/{tag}/{relative}"

    def put(self, path: str, body: str | bytes, content_type: str | None = "text/turtle") -> str:
        self.documents[path] = (body.encode() if isinstance(body, str) else body, content_type)
        return self.base + path

    def void(self, path: str, modified: str, dumps: list[str], feature: str = FULL) -> str:
        """Publish a GeoLink VoID (``modified`` is a Turtle literal, e.g. ``"2015-11-05"^^xsd:date``)."""
        text = (
            "@prefix void: <http://rdfs.org/ns/void#> .\n"
            "@prefix dcterms: <http://purl.org/dc/terms/> .\n"
            "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
            f"<#dataset> a void:Dataset ;\n  void:feature <{feature}> , <http://www.w3.org/ns/formats/Turtle> ;\n"
            f"  dcterms:modified {modified} ;\n"
            f"  void:dataDump {', '.join(f'<{d}>' for d in dumps)} .\n"
        )
        return self.put(path, text)


@dataclass
class StoreCase:
    store: TripleStore
    base: str

    def graphs(self, provider: str) -> ProviderGraphs:
        return ProviderGraphs(provider, self.base)

    def current_triples(self, provider: str) -> set[str]:
        current = self.graphs(provider).read_state(self.store).current
        return {str(t) for t in self.store.triples(current)} if current else set()
