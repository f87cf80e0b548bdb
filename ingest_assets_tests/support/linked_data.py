"""Linked-data test material: the GeoLink dump features, the fixture dumps a VoID with subsets serves, and
entity bombs (XML that expands to gigabytes) for the refusal tests."""

from __future__ import annotations

import stat
import tarfile

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
