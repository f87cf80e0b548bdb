"""Bombs parsed by workers with a memory cap: a bomb that got through would end the worker (MemoryError or a
kill), not the machine; what must happen instead is a typed refusal naming provider and file."""

from __future__ import annotations

import gzip
import tarfile

import pytest

from ingest_assets_tests.support import Worker, tar_bytes
from ingest_assets_tests.support.linked_data import LAUGHS, OAI_BOMB, RDFXML_BOMB

CAP_MB = 2048  # far below what the bombs below expand to (gigabytes), far above what a refusal needs

IMPORT = """
from ingest_assets.core.http import HttpClient
from ingest_assets.linked_data.graphs import ProviderGraphs
from ingest_assets.linked_data.importer import ProviderSource, import_update
from ingest_assets.linked_data.oxigraph import OxigraphStore
from ingest_assets.core.errors import IngestError
try:
    import_update(ProviderSource("lod", VOID, allow_private=True), OxigraphStore(STORE, writable=True),
                  HttpClient(allow_private=True), ProviderGraphs("lod"))
except IngestError as exc:
    print("REFUSED", exc)
"""

HARVEST = """
from datetime import datetime, timezone
from ingest_assets.core.http import HttpClient
from ingest_assets.records.harvest import StorageCheckpoint, harvest_records
from ingest_assets.core.registry import ProviderEntry
from ingest_assets.storage import LocalStorage
from ingest_assets.core.errors import IngestError
entry = ProviderEntry("bombed", {"harvest": {"type": "oai", "endpoint": ENDPOINT, "allow_private": True, "full": True}})
try:
    list(harvest_records(entry, started=datetime.now(timezone.utc), window=None, http=HttpClient(allow_private=True),
                         checkpoint=StorageCheckpoint(LocalStorage(STORAGE), "bombed")))
except IngestError as exc:
    print("REFUSED", exc)
"""


MAP = """
from ingest_assets.core.registry import ProviderEntry
from ingest_assets.records.mapping import mapper_for
result = mapper_for(ProviderEntry("il", {"mapping": "illinois"})).map(
    {"id": "x", "ingestDate": 1, "document": DOCUMENT, "mimetype": "application_xml"})
print("MAPPED" if result.record else "REFUSED", [(m.kind, m.reason[:200]) for m in result.messages])
"""
# a record using prefixes it never declares (the path that parses twice), its description a billion laughs
UNDECLARED_BOMB = (
    f'<?xml version="1.0"?><!DOCTYPE record [<!ENTITY l0 "lol">{LAUGHS}]><record><metadata><oai_qdc:qualifieddc>'
    "<dc:title>Laughs</dc:title><dc:description>&l9;</dc:description><dcterms:provenance>p</dcterms:provenance>"
    "<dc:rights>r</dc:rights><edm:isShownAt>https://example.org/x</edm:isShownAt></oai_qdc:qualifieddc></metadata>"
    "</record>"
)


def _serve_files(serve, files: dict[str, bytes]) -> str:
    def site(base):
        def app(environ, start_response):
            body = files.get(environ["PATH_INFO"])
            start_response("200 OK" if body is not None else "404 Not Found", [("Content-Type", "application/octet-stream")])
            return [body or b""]

        return app

    return serve(site)[1]


@pytest.mark.parametrize(
    ("dump", "body", "named"),
    [
        ("/bomb.rdf.gz", gzip.compress(RDFXML_BOMB.encode()), "/bomb.rdf.gz"),
        ("/dump.tar.gz", tar_bytes([("data/bomb.rdf", tarfile.REGTYPE, RDFXML_BOMB.encode())]),
         "/dump.tar.gz!data/bomb.rdf"),  # an archive member is screened like a dump
    ],
    ids=["gzip", "tar-member"],  # the bodies' gzip headers carry the time: as ids they differ between xdist workers
)
def test_an_entity_bomb_dump_is_refused_within_the_memory_cap(serve, tmp_path, dump, body, named):
    files: dict[str, bytes] = {dump: body}
    base = _serve_files(serve, files)
    files["/void.ttl"] = (
        "@prefix void: <http://rdfs.org/ns/void#> . @prefix dcterms: <http://purl.org/dc/terms/> .\n"
        '<#d> a void:Dataset ; void:feature <http://schema.geolink.org/dev/voc/harvester#FullDump> ;\n'
        f'  dcterms:modified "2026-01-10" ; void:dataDump <{base}{dump}> .\n'
    ).encode()
    code = IMPORT.replace("VOID", repr(f"{base}/void.ttl")).replace("STORE", repr(str(tmp_path / "oxigraph")))
    status, out, err = Worker(code, {}, memory_mb=CAP_MB).finish()
    assert status == 0, f"the worker died (status {status}): {err[-2000:]}"
    assert "REFUSED RDF/XML dump refused" in out and f"{base}{named}" in out and "provider 'lod'" in out


def test_an_entity_bomb_oai_page_is_refused_within_the_memory_cap(serve, tmp_path):
    base = _serve_files(serve, {"/oai": OAI_BOMB.encode()})
    code = HARVEST.replace("ENDPOINT", repr(f"{base}/oai")).replace("STORAGE", repr(str(tmp_path / "storage")))
    status, out, err = Worker(code, {}, memory_mb=CAP_MB).finish()
    assert status == 0, f"the worker died (status {status}): {err[-2000:]}"
    assert "REFUSED page 1" in out and "provider 'bombed'" in out and "/oai?verb=ListRecords" in out


def test_an_entity_bomb_record_with_undeclared_prefixes_is_refused_within_the_memory_cap():
    status, out, err = Worker(MAP.replace("DOCUMENT", repr(UNDECLARED_BOMB)), {}, memory_mb=CAP_MB).finish()
    assert status == 0, f"the worker died (status {status}): {err[-2000:]}"
    # reading its undeclared prefixes changes no limit: the parser's own amplification limit refuses the record
    assert out.startswith("REFUSED [('unparseable', 'not well-formed XML: Maximum entity amplification factor")
