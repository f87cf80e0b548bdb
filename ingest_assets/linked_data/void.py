"""A provider's VoID file: the one ``void:Dataset`` with its ``dcterms:modified``, features and dumps.

Required (GeoLink harvester): ``rdf:type void:Dataset``, one ``dcterms:modified``, at least one
``void:feature`` naming FullDump or PartialDump, at least one ``void:dataDump``. Syntax features from
https://www.w3.org/ns/formats/ are kept as a hint for the dumps' syntax.

Parsing never fetches: a JSON-LD VoID whose ``@context`` (at any depth) or ``@import`` is a reference
rather than an inline object is refused, since rdflib would fetch it itself, bypassing
:class:`~ingest_assets.http.HttpClient`'s guards.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

import defusedxml.ElementTree
import rdflib
from defusedxml import DefusedXmlException
from pyoxigraph import RdfFormat
from rdflib.namespace import DCTERMS, RDF, VOID

from ingest_assets import json_input
from ingest_assets.errors import ParseError, ValidationError
from ingest_assets.linked_data import formats
from ingest_assets.linked_data.modified import parse_modified

FULL, PARTIAL = "fulldump", "partialdump"
# rdflib rewrites literals from their Python value by default, which drops the zone of an xsd:date
# ("2015-11-05+02:00" -> "2015-11-05"); VoID files are parsed with that (global) switch off.
_LEXICAL = threading.Lock()


@dataclass(frozen=True)
class VoidDescription:
    dataset: str
    modified: datetime
    modified_text: str
    full: bool
    dumps: tuple[str, ...]
    dump_format: RdfFormat | None

    @property
    def kind(self) -> str:
        return "full" if self.full else "partial"


def _local_name(iri: str) -> str:
    return iri.rstrip("/#").replace("#", "/").rsplit("/", 1)[-1].lower()


def _context_references(document) -> Iterator[str]:
    """Every string under a ``@context`` or ``@import`` key, anywhere in a JSON document."""
    pending = [document]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("@context", "@import"):
                    yield from (v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str))
                pending.append(value)
        elif isinstance(node, list):
            pending.extend(node)


def _refuse_remote_contexts(data: bytes, *, provider: str, url: str) -> None:
    try:
        document = json_input.loads(data)
    except ValueError as exc:
        raise ParseError(f"VoID is not valid JSON: {exc}", provider=provider, file=url) from exc
    for reference in _context_references(document):
        raise ParseError(
            f"VoID JSON-LD refers to the context {reference!r}, which is not fetched: contexts must be inline",
            provider=provider,
            file=url,
        )


def _graph(data: bytes, *, provider: str, url: str, content_type: str | None) -> rdflib.Graph:
    rdf_format = formats.detect(url, content_type, data[:512])
    if rdf_format == RdfFormat.JSON_LD:
        _refuse_remote_contexts(data, provider=provider, url=url)
    if rdf_format == RdfFormat.RDF_XML:
        try:  # rdflib's RDF/XML reader is SAX-based: refuse DTDs and entities before it sees the bytes
            defusedxml.ElementTree.fromstring(data, forbid_dtd=True)
        except (DefusedXmlException, defusedxml.ElementTree.ParseError) as exc:
            raise ParseError(f"VoID is not acceptable XML: {exc}", provider=provider, file=url) from exc
    graph = rdflib.Graph()
    with _LEXICAL:
        normalize, rdflib.NORMALIZE_LITERALS = rdflib.NORMALIZE_LITERALS, False
        try:
            graph.parse(data=data, format=formats.RDFLIB_NAMES[rdf_format], publicID=url)
        except Exception as exc:  # rdflib raises many unrelated types for bad syntax
            raise ParseError(
                f"VoID is not valid {formats.RDFLIB_NAMES[rdf_format]}: {exc}", provider=provider, file=url
            ) from exc
        finally:
            rdflib.NORMALIZE_LITERALS = normalize
    return graph


def parse_void(data: bytes, *, provider: str, url: str, content_type: str | None = None) -> VoidDescription:
    """Parse and check a VoID file; errors name the provider, the file and the missing property."""
    graph = _graph(data, provider=provider, url=url, content_type=content_type)

    def missing(what: str) -> ValidationError:
        return ValidationError(f"VoID lacks {what}", provider=provider, file=url)

    datasets = sorted(set(graph.subjects(RDF.type, VOID.Dataset)), key=str)
    if not datasets:
        raise missing("a resource with rdf:type void:Dataset")
    with_dumps = [d for d in datasets if (d, VOID.dataDump, None) in graph]
    if not with_dumps:
        raise missing("void:dataDump")
    if len(with_dumps) > 1:
        raise ValidationError(
            f"VoID describes {len(with_dumps)} void:Dataset resources with dumps; exactly one is expected",
            provider=provider,
            file=url,
            record=", ".join(str(d) for d in with_dumps),
        )
    dataset = with_dumps[0]
    record = str(dataset)

    values = list(graph.objects(dataset, DCTERMS.modified))
    if not values:
        raise missing("dcterms:modified")
    if len(values) > 1:
        raise ValidationError("VoID has several dcterms:modified values", provider=provider, file=url, record=record)
    try:
        modified = parse_modified(str(values[0]))
    except ValueError as exc:
        raise ValidationError(
            f"dcterms:modified {str(values[0])!r} is not a date or datetime", provider=provider, file=url, record=record
        ) from exc

    features = {str(f) for f in graph.objects(dataset, VOID.feature)}
    kinds = {_local_name(f) for f in features} & {FULL, PARTIAL}
    if not kinds:
        raise missing("a void:feature FullDump or PartialDump")
    if len(kinds) > 1:
        raise ValidationError("VoID declares both FullDump and PartialDump", provider=provider, file=url, record=record)
    syntaxes = {formats.FORMAT_FEATURES[f] for f in features if f in formats.FORMAT_FEATURES}

    dumps = []
    for dump in graph.objects(dataset, VOID.dataDump):
        if not isinstance(dump, rdflib.URIRef):
            raise ValidationError(f"void:dataDump {dump!r} is not an IRI", provider=provider, file=url, record=record)
        dumps.append(str(dump))
    return VoidDescription(
        dataset=record,
        modified=modified,
        modified_text=str(values[0]),
        full=kinds == {FULL},
        dumps=tuple(sorted(dumps)),
        dump_format=syntaxes.pop() if len(syntaxes) == 1 else None,
    )
