"""A provider's VoID file: the one ``void:Dataset`` (or its ``void:subset`` datasets) with its
``dcterms:modified``, features and dumps.

Required: ``rdf:type void:Dataset`` and at least one ``void:dataDump``. The GeoLink harvester also required
``dcterms:modified`` and a ``void:feature`` FullDump or PartialDump; VoIDs as the LOD cloud publishes them
(worldbank.270a.info's) have neither, so here a dataset without the feature is a full dump and one without
``modified`` (at most one value) has its changes told by its dumps (see :mod:`.dump_state`). Syntax features
from https://www.w3.org/ns/formats/ are kept as a hint for the dumps' syntax. A dataset is named as the file
wrote it: its IRI, or ``_:`` and the blank node's ``rdf:nodeID`` (RDF/XML) or label (N-Triples, N-Quads);
a blank node the syntax gives no name keeps the parser's.

Parsing never fetches: a JSON-LD VoID whose ``@context`` (at any depth) or ``@import`` is a reference
rather than an inline object is refused, since rdflib would fetch it itself, bypassing
:class:`~ingest_assets.core.http.HttpClient`'s guards.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

import rdflib
from lxml import etree
from pyoxigraph import RdfFormat
from rdflib.namespace import DCTERMS, RDF, VOID

from ingest_assets.core import json_input
from ingest_assets.core.errors import ParseError, ValidationError
from ingest_assets.linked_data import formats
from ingest_assets.core.modified import parse_modified
from ingest_assets.core.xml_input import UnsafeXML, refuse_doctype

FULL, PARTIAL = "fulldump", "partialdump"
# rdflib rewrites literals from their Python value by default, which drops the zone of an xsd:date
# ("2015-11-05+02:00" -> "2015-11-05"); VoID files are parsed with that (global) switch off.
_LEXICAL = threading.Lock()
MAX_SUBSETS = 256
MAX_DUMPS = 1024  # per VoID


@dataclass(frozen=True)
class VoidDescription:
    dataset: str
    modified: datetime | None  # None: the VoID does not say; the dumps' own state tells a change
    modified_text: str | None
    full: bool
    dumps: tuple[str, ...]
    dump_format: RdfFormat | None
    subsets: tuple["VoidDescription", ...] = ()  # each with its own ``modified`` and dumps

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
            refuse_doctype(data)
        except (UnsafeXML, etree.XMLSyntaxError) as exc:
            raise ParseError(f"VoID is not acceptable XML: {exc}", provider=provider, file=url) from exc
    graph = rdflib.Graph()
    names = _BLANK_NODE_NAMES.get(rdf_format, dict)()
    with _LEXICAL:
        normalize, rdflib.NORMALIZE_LITERALS = rdflib.NORMALIZE_LITERALS, False
        try:
            graph.parse(data=data, format=formats.RDFLIB_NAMES[rdf_format], publicID=url, **names)
        except Exception as exc:  # rdflib raises many unrelated types for bad syntax
            raise ParseError(
                f"VoID is not valid {formats.RDFLIB_NAMES[rdf_format]}: {exc}", provider=provider, file=url
            ) from exc
        finally:
            rdflib.NORMALIZE_LITERALS = normalize
    for written, node in names.get("bnode_context", {}).items():
        graph.add((node, _WRITTEN_AS, rdflib.Literal(written)))
    return graph


# keeping blank node names as written: rdflib's RDF/XML reader keeps rdf:nodeID on request; its N-Triples and
# N-Quads readers say which node each label became
_BLANK_NODE_NAMES = {
    RdfFormat.RDF_XML: lambda: {"preserve_bnode_ids": True},
    RdfFormat.N_TRIPLES: lambda: {"bnode_context": {}},
    RdfFormat.N_QUADS: lambda: {"bnode_context": {}},
}
_WRITTEN_AS = rdflib.URIRef("urn:x-ingest-assets:void#writtenAs")  # added beside the VoID's own triples


def _name(graph: rdflib.Graph, node) -> str:
    """The dataset as the file wrote it: its IRI, or ``_:`` + its blank node name."""
    if not isinstance(node, rdflib.BNode):
        return str(node)
    written = graph.value(node, _WRITTEN_AS)
    return f"_:{written if written is not None else node}"


def parse_void(data: bytes, *, provider: str, url: str, content_type: str | None = None) -> VoidDescription:
    """Parse and check a VoID file; errors name the provider, the file and the missing property.

    Either one ``void:Dataset`` has the dumps, or one top dataset lists its parts with ``void:subset``
    (IRIs, one level, at most ``MAX_SUBSETS``): each subset then needs its own ``dcterms:modified`` and dumps
    and inherits the top dataset's features; the description's ``modified`` is the newest of them all.
    """
    graph = _graph(data, provider=provider, url=url, content_type=content_type)
    datasets = sorted(set(graph.subjects(RDF.type, VOID.Dataset)), key=str)
    if not datasets:
        raise ValidationError("VoID lacks a resource with rdf:type void:Dataset", provider=provider, file=url)
    parts = set(graph.objects(None, VOID.subset))
    tops = [d for d in datasets if d not in parts and (d, VOID.subset, None) in graph]
    if tops:
        return _with_subsets(graph, tops, provider=provider, url=url)
    with_dumps = [d for d in datasets if (d, VOID.dataDump, None) in graph]
    if not with_dumps:
        raise ValidationError("VoID lacks void:dataDump", provider=provider, file=url)
    if len(with_dumps) > 1:
        raise ValidationError(
            f"VoID describes {len(with_dumps)} void:Dataset resources with dumps; exactly one is expected",
            provider=provider,
            file=url,
            record=", ".join(_name(graph, d) for d in with_dumps),
        )
    return _describe(graph, with_dumps[0], provider=provider, url=url)


def _with_subsets(graph: rdflib.Graph, tops: list, *, provider: str, url: str) -> VoidDescription:
    if len(tops) > 1:
        raise ValidationError(f"VoID has {len(tops)} top datasets with void:subset; exactly one is expected",
                              provider=provider, file=url, record=", ".join(_name(graph, d) for d in tops))
    top, record = tops[0], _name(graph, tops[0])
    if (top, VOID.dataDump, None) in graph:
        raise ValidationError("VoID has void:dataDump on a dataset that also has void:subset: dumps belong to "
                              "the subsets", provider=provider, file=url, record=record)
    found = sorted(set(graph.objects(top, VOID.subset)), key=str)
    if len(found) > MAX_SUBSETS:
        raise ValidationError(f"VoID lists {len(found)} subsets (at most {MAX_SUBSETS})",
                              provider=provider, file=url, record=record)
    subsets = []
    for subset in found:
        if not isinstance(subset, rdflib.URIRef):
            raise ValidationError(f"void:subset {subset!r} is not an IRI (a subset's state is kept by its IRI)",
                                  provider=provider, file=url, record=record)
        if (subset, VOID.subset, None) in graph:
            raise ValidationError("nested void:subset is not supported (one level of subsets)",
                                  provider=provider, file=url, record=str(subset))
        subsets.append(_describe(graph, subset, provider=provider, url=url, inherited=top))
    dumps = sorted(d for s in subsets for d in s.dumps)
    if len(dumps) > MAX_DUMPS:
        raise ValidationError(f"VoID lists {len(dumps)} dumps (at most {MAX_DUMPS})",
                              provider=provider, file=url, record=record)
    dated = [(s.modified, s.modified_text) for s in subsets if s.modified is not None]
    own = _modified(graph, top, provider=provider, url=url)
    modified, modified_text = max([*dated, *([own] if own else [])], key=lambda m: m[0], default=(None, None))
    return VoidDescription(record, modified, modified_text, all(s.full for s in subsets), tuple(dumps), None,
                           tuple(subsets))


def _modified(graph: rdflib.Graph, dataset, *, provider: str, url: str) -> tuple[datetime, str] | None:
    """The dataset's ``dcterms:modified`` and its text (``None`` when it has none)."""
    record = _name(graph, dataset)
    values = list(graph.objects(dataset, DCTERMS.modified))
    if not values:
        return None
    if len(values) > 1:
        raise ValidationError("VoID has several dcterms:modified values", provider=provider, file=url, record=record)
    try:
        return parse_modified(str(values[0])), str(values[0])
    except ValueError as exc:
        raise ValidationError(
            f"dcterms:modified {str(values[0])!r} is not a date or datetime", provider=provider, file=url, record=record
        ) from exc


def _describe(graph: rdflib.Graph, dataset, *, provider: str, url: str, inherited=None) -> VoidDescription:
    """One dataset with dumps; features it does not declare itself come from ``inherited`` (its top dataset).
    Neither FullDump nor PartialDump: a full dump."""
    record = _name(graph, dataset)

    def features_of(node) -> set[str]:
        return {str(f) for f in graph.objects(node, VOID.feature)} if node is not None else set()

    own, parent = features_of(dataset), features_of(inherited)
    kinds = ({_local_name(f) for f in own} & {FULL, PARTIAL}) or ({_local_name(f) for f in parent} & {FULL, PARTIAL})
    modified, modified_text = _modified(graph, dataset, provider=provider, url=url) or (None, None)
    if len(kinds) > 1:
        raise ValidationError("VoID declares both FullDump and PartialDump", provider=provider, file=url, record=record)
    syntaxes = ({formats.FORMAT_FEATURES[f] for f in own if f in formats.FORMAT_FEATURES}
                or {formats.FORMAT_FEATURES[f] for f in parent if f in formats.FORMAT_FEATURES})

    dumps = []
    for dump in graph.objects(dataset, VOID.dataDump):
        if not isinstance(dump, rdflib.URIRef):
            raise ValidationError(f"void:dataDump {dump!r} is not an IRI", provider=provider, file=url, record=record)
        dumps.append(str(dump))
        if len(dumps) > MAX_DUMPS:
            raise ValidationError(f"VoID lists more than {MAX_DUMPS} dumps", provider=provider, file=url,
                                  record=record)
    if not dumps:
        raise ValidationError("VoID lacks void:dataDump", provider=provider, file=url, record=record)
    return VoidDescription(
        dataset=record,
        modified=modified,
        modified_text=modified_text,
        full=kinds != {PARTIAL},
        dumps=tuple(sorted(dumps)),
        dump_format=syntaxes.pop() if len(syntaxes) == 1 else None,
    )
