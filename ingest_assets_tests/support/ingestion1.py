"""ingestion1's JSON rendering of a harvested record, back to the document the hub delivered.

DPLA's ingestion1 (dpla-attic/ingestion) parsed what it harvested with xmltodict (``attr_prefix=''``, text under
``#text``, prefixes kept as written, ``xmlns`` declarations kept as keys: ``lib/oai.py``, ``lib/fetchers/fetcher.py``)
and stored that dict, with keys of its own added, as the item's ``originalRecord``. The documents of
``../shared/fixtures/dpla-published/ingestion1-era/`` carry it in these shapes, each written back here:

* **OAI-PMH record** (``header``, ``metadata``, ``about``): an OAI-PMH ``<record>`` (MODS, MARC, UNTL records).
* **Flattened OAI DC** (``handle``, ``setSpec``, ``datestamp``...): ``oai.record_for_prefix`` renamed each DC
  element to its local name (``dc:identifier`` to ``handle``, ``edm:rights`` to ``edmRights``) and put the header's
  ``datestamp`` and ``setSpec`` beside them; written back as an OAI-PMH ``<record>`` whose metadata is
  ``oai_dc:dc``, or ``qdc:qualifieddc`` for hubs harvested with the ``qdc`` prefix (:data:`QDC_HUBS`).
* **MARC record** (Hathi's ``leader``, ``controlfield``, ``datafield``): a MARC 21 XML ``<record>``.
* **NARA ARC description** (``arc-id``): ``<archival-description>``, the element ``NARAFetcher`` read.
* **Primo search document** (``PrimoNMBib``): MWDL's ``sear:DOC``, the element ``PrimoFetcher`` read.
* **NYPL MODS** (``titleInfo`` beside ``tmp_*`` keys): the ``<mods>`` document of NYPL's API.
* **MDL API record** (``record`` with ``record_id``): JSON from the start; given back as the JSON it is.

ingestion1's own keys are left out: ``_id``, ``_rev``, ``id``, ``provider``, ``collection``, ``ingestType`` and
``ingestDate`` beside the record; ``label`` (a copy of the title) and ``status`` in flattened DC; ``tmp_*`` and
``rightsStatementURI`` (from NYPL's capture API, not its MODS) in NYPL's. :func:`delivered` returns them in
:attr:`Delivered.extra` for a caller that wants them.

Limits (what the rendering lost, so no converter can give it back):

* the order of sibling elements of different names (xmltodict groups same-named siblings in one list, in their
  order; the groups are in first-seen order, flattened DC in dict order);
* the place of text among child elements (mixed content is written text first), and white space between
  elements (the indentation; the document is written without any);
* whether an unprefixed string-valued key was an attribute or a child element: it is an attribute when it stands
  beside ``#text``, or when the schema of its element's namespace names such an attribute
  (:data:`ATTRIBUTES`: MODS, MARC 21, UNTL, OAI-PMH, OAI provenance, Primo's search document); any other is
  written as an element (NARA's ARC format, whose schema is not public, is written as elements only);
* namespace declarations made outside the record (on the OAI-PMH page, Hathi's ``<collection>``, Primo's
  ``DOCSET``): restored for the envelope each shape had (OAI-PMH, MARC 21, Primo search) and for MODS, whose
  namespace NYPL's records name in their ``schemaLocation``; other undeclared prefixes stay undeclared, as in a
  record cut from its page;
* in flattened DC, the prefix of an element two prefixes map to the same name (``dc:creator`` or
  ``dcterms:creator``): the first in ingestion1's table, ``dc:`` (both are read alike by every DC profile);
  elements ingestion1's table leaves out were dropped at harvest and are not there to write.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from lxml import etree

from ingest_assets.core.xml_input import NAMESPACES, parse_document, safe_parser

OAI = "http://www.openarchives.org/OAI/2.0/"
MODS = "http://www.loc.gov/mods/v3"
MARC = "http://www.loc.gov/MARC21/slim"
UNTL = "http://digital2.library.unt.edu/untl/"
PRIMO_SEARCH = "http://www.exlibrisgroup.com/xsd/jaguar/search"
OAI_PROVENANCE = "http://www.openarchives.org/OAI/2.0/provenance"
QDC = "http://epubs.cclrc.ac.uk/xmlns/qdc/"  # ingestion1's qdc prefix (lib/oai.py PREFIXES)
TEXT = "#text"

# Attribute names each namespace's schema defines (for keys that stand without #text; see the limits).
ATTRIBUTES: dict[str, frozenset[str]] = {
    MODS: frozenset({  # MODS 3.x: the attributes of its elements (url's 'note' left out: MODS has a note element)
        "ID", "IDREF", "access", "altFormat", "altRepGroup", "authority", "authorityURI", "calendar", "collection",
        "contentType", "dateLastAccessed", "displayLabel", "encoding", "eventType", "invalid", "keyDate", "lang",
        "level", "manuscript", "nameTitleGroup", "objectPart", "order", "otherType", "otherTypeAuth",
        "otherTypeAuthURI", "otherTypeURI", "point", "qualifier", "script", "shareable", "supplied",
        "transliteration", "type", "typeURI", "unit", "usage", "valueURI", "version"}),
    MARC: frozenset({"tag", "ind1", "ind2", "code", "type", "id"}),
    UNTL: frozenset({"qualifier"}),
    OAI: frozenset({"status"}),
    OAI_PROVENANCE: frozenset({"harvestDate", "altered"}),
    PRIMO_SEARCH: frozenset({"ID", "RANK", "NO", "SEARCH_ENGINE", "SEARCH_ENGINE_TYPE"}),
}
# prefixed names that are always attributes, and xsi's schemaLocation, which NYPL's API wrote without its prefix
ATTRIBUTE_PREFIXES = ("xmlns:", "xsi:", "xml:", "xlink:")
ALWAYS_ATTRIBUTES = frozenset({"xmlns", "schemaLocation"})

# ingestion1's flattened DC: key -> the element it came from (lib/oai.py metadata_field_map, inverted; the first
# of two elements that share a key)
FLAT_DC = {
    "accrualmethod": "dc:accrualmethod", "audience": "dc:audience", "contributor": "dc:contributor",
    "coverage": "dc:coverage", "creator": "dc:creator", "date": "dc:date", "description": "dc:description",
    "format": "dc:format", "handle": "dc:identifier", "instructionalmethod": "dc:instructionalmethod",
    "language": "dc:language", "provenance": "dc:provenance", "publisher": "dc:publisher", "relation": "dc:relation",
    "rights": "dc:rights", "rightsholder": "dc:rightsholder", "source": "dc:source", "subject": "dc:subject",
    "title": "dc:title", "type": "dc:type",
    # the qdc prefix's elements beyond DC's
    "abstract": "dcterms:abstract", "alternative": "dcterms:alternative", "created": "dcterms:created",
    "extent": "dcterms:extent", "hasFormat": "dcterms:hasFormat", "isPartOf": "dcterms:isPartOf",
    "isReferencedBy": "dcterms:isReferencedBy", "mediator": "dcterms:mediator", "medium": "dcterms:medium",
    "spatial": "dcterms:spatial", "temporal": "dcterms:temporal", "dataProvider": "edm:dataProvider",
    "isShownAt": "edm:isShownAt", "preview": "edm:preview", "edmRights": "edm:rights",
    "accessRights": "dct:accessRights", "dctAlternative": "dct:alternative", "rightsHolder": "dct:rightsHolder",
}
FLAT_HEADER = ("id", "datestamp", "setSpec")  # the header's identifier (ingestion1's id), datestamp and sets
# contributors ingestion1 harvested with the qdc prefix (metadata_prefix of its profiles/scdl.pjs)
QDC_HUBS = frozenset({"scdl-clemson", "scdl-usc"})
# keys ingestion1 added beside a record (fetchers, select-id) and inside flattened DC and NYPL's MODS
INGESTION1_KEYS = frozenset({"_id", "_rev", "id", "provider", "collection", "ingestType", "ingestDate"})
FLAT_DC_OWN = frozenset({"label", "status", "provider", "collection"})


class UnknownShape(ValueError):
    """An originalRecord none of the shapes this module knows fits."""


@dataclass(frozen=True)
class Delivered:
    """The document as the hub delivered it: its text, ``xml`` or ``json``, the shape it was read as, and what
    ingestion1 had added (left out of the document)."""

    document: str
    kind: str
    shape: str
    extra: dict[str, Any] = field(default_factory=dict)


def delivered(original: Mapping[str, Any], hub: str) -> Delivered:
    """The document ``original`` (an ingestion1 ``originalRecord``) was rendered from; ``hub`` is DPLA's
    contributor (the last part of the document's ``provider`` URI: ``scdl-usc``, ``hathitrust``...)."""
    for name, fits, write in SHAPES:
        if fits(original):
            document, extra = write(original, hub)
            return Delivered(document, "json" if name in JSON_SHAPES else "xml", name, extra)
    raise UnknownShape(f"an originalRecord of hub {hub!r} with keys {sorted(original)[:12]} fits no known shape")


# ---- the shapes ---------------------------------------------------------------------------------------------

def _oai_record(original: Mapping[str, Any], _hub: str) -> tuple[str, dict]:
    parts = {key: original[key] for key in ("header", "metadata", "about") if key in original}
    return _xml("record", parts, {"xmlns": OAI}), _extra(original, parts)


def _flat_dc(original: Mapping[str, Any], hub: str) -> tuple[str, dict]:
    header = {"identifier": original["id"]} if "id" in original else {}
    header.update((key, original[key]) for key in FLAT_HEADER[1:] if key in original)
    metadata = {FLAT_DC[key]: value for key, value in original.items() if key in FLAT_DC}
    unknown = set(original) - set(FLAT_DC) - set(FLAT_HEADER) - FLAT_DC_OWN
    if unknown:
        raise UnknownShape(f"flattened DC of hub {hub!r} with keys ingestion1 never wrote: {sorted(unknown)}")
    if hub in QDC_HUBS:
        root, declared = "qdc:qualifieddc", {"xmlns:qdc": QDC, "xmlns:dcterms": NAMESPACES["dcterms"],
                                              "xmlns:dct": NAMESPACES["dcterms"], "xmlns:edm": NAMESPACES["edm"]}
    else:
        root, declared = "oai_dc:dc", {"xmlns:oai_dc": NAMESPACES["oai_dc"]}
    declared["xmlns:dc"] = NAMESPACES["dc"]
    record = {"header": header, "metadata": {root: {**declared, **metadata}}}
    return _xml("record", record, {"xmlns": OAI}), _extra(original, {*FLAT_DC, *FLAT_HEADER})


def _marc(original: Mapping[str, Any], _hub: str) -> tuple[str, dict]:
    body = {key: value for key, value in original.items() if key not in INGESTION1_KEYS}
    return _xml("record", body, {"xmlns": MARC}), _extra(original, body)


def _nara_arc(original: Mapping[str, Any], _hub: str) -> tuple[str, dict]:
    body = {key: value for key, value in original.items() if key not in INGESTION1_KEYS}
    return _xml("archival-description", body, {}), _extra(original, body)


def _primo_doc(original: Mapping[str, Any], _hub: str) -> tuple[str, dict]:
    body = {key: value for key, value in original.items() if key not in INGESTION1_KEYS}
    return _xml("sear:DOC", body, {"xmlns:sear": PRIMO_SEARCH}), _extra(original, body)


def _nypl_solr(original: Mapping[str, Any], _hub: str) -> tuple[str, dict]:
    """NYPL's MODS, in the Solr document NYPL delivers today (its XML in ``solr_doc_hash.mods_st``), with the
    item's uuid and the rights text and URI NYPL's API answered beside the MODS (ingestion1's ``_id``,
    ``tmp_rights_statement``, ``rightsStatementURI``) in the Solr fields that hold them now."""
    mods = {key: value for key, value in original.items()
            if key not in INGESTION1_KEYS and not key.startswith("tmp_") and key != "rightsStatementURI"}
    solr = {"uuid": original["_id"], "mods_st": _xml("mods", mods, {"xmlns": MODS})}
    for key, name in (("tmp_rights_statement", "useStatementText_rtxt"), ("rightsStatementURI", "useStatementURI_rtxt")):
        if original.get(key):
            solr[name] = [original[key]]
    document = {"uuid": original["_id"], "solr_doc_hash": solr}
    kept = {*mods, "_id", "tmp_rights_statement", "rightsStatementURI"}
    return json.dumps(document, ensure_ascii=False, indent=1), _extra(original, kept)


def _mdl_api(original: Mapping[str, Any], _hub: str) -> tuple[str, dict]:
    """MDL's API record (its v1 API: ``record``, ``record_id``) in the envelope of the API MDL serves today (v2:
    ``attributes.metadata``); the record is unchanged."""
    document = {"id": original["record_id"], "type": "records", "attributes": {"metadata": original["record"]}}
    return json.dumps(document, ensure_ascii=False, indent=1), _extra(original, {"record", "record_id"})


def _extra(original: Mapping[str, Any], kept: Iterable[str]) -> dict:
    kept = set(kept)
    return {key: value for key, value in original.items() if key not in kept}


JSON_SHAPES = frozenset({"nypl-solr", "mdl-api"})
SHAPES: list[tuple[str, Callable[[Mapping], bool], Callable[[Mapping, str], tuple[str, dict]]]] = [
    ("oai", lambda o: "header" in o and "metadata" in o, _oai_record),
    ("flat-dc", lambda o: "datestamp" in o and ("handle" in o or "setSpec" in o), _flat_dc),
    ("marc", lambda o: "leader" in o and "datafield" in o, _marc),
    ("nara-arc", lambda o: "arc-id" in o, _nara_arc),
    ("primo", lambda o: "PrimoNMBib" in o, _primo_doc),
    ("nypl-solr", lambda o: "titleInfo" in o and "_id" in o and any(key.startswith("tmp_") for key in o), _nypl_solr),
    ("mdl-api", lambda o: "record" in o and "record_id" in o, _mdl_api),
]


# ---- xmltodict's rendering, written back -----------------------------------------------------------------

def _xml(root: str, content: Mapping[str, Any], envelope: Mapping[str, str]) -> str:
    """The element ``root`` holding ``content`` (a rendered element), with the ``envelope``'s declarations where
    the content makes none of its own; checked to parse (with undeclared prefixes as a record cut from its page)."""
    content = {**{key: value for key, value in envelope.items() if key not in content}, **content}
    text = "".join(_element(root, content, _scope({}, content)))
    parse_document(text, safe_parser(), NAMESPACES)  # raises if what was written is not XML
    return text


def _scope(outer: Mapping[str, str], content: Any) -> dict[str, str]:
    """The prefixes in scope inside an element (``""``: the default namespace), with its own declarations."""
    if not isinstance(content, Mapping):
        return dict(outer)
    scope = dict(outer)
    for key, value in content.items():
        if key == "xmlns":
            scope[""] = value
        elif key.startswith("xmlns:"):
            scope[key[6:]] = value
    return scope


def _namespace(name: str, scope: Mapping[str, str]) -> str:
    prefix, _, local = name.rpartition(":")
    return scope.get(prefix, NAMESPACES.get(prefix, "")) if prefix else scope.get("", "")


def _element(name: str, content: Any, scope: dict[str, str]) -> list[str]:
    if content is None:
        return [f"<{name}/>"]
    if isinstance(content, str):
        return [f"<{name}>{_text(content)}</{name}>"]
    if not isinstance(content, Mapping):
        raise UnknownShape(f"element {name!r} holds a {type(content).__name__}, not text, an element or a list")
    known = ATTRIBUTES.get(_namespace(name, scope), frozenset())
    attributes, children, text = [], [], content.get(TEXT)
    for key, value in content.items():
        if key == TEXT:
            continue
        if isinstance(value, str) and _is_attribute(key, known, text is not None):
            attributes.append(f" {key}={quoteattr(value)}")
            continue
        for one in value if isinstance(value, list) else [value]:
            children.extend(_element(key, one, _scope(scope, one)))
    opening = f"<{name}{''.join(attributes)}"
    if text is None and not children:
        return [opening + "/>"]
    return [opening + ">", _text(text or ""), *children, f"</{name}>"]


def _text(text: str) -> str:
    """Text as character data; a carriage return as a reference, which the parser keeps (a raw one it would not)."""
    return escape(text, {"\r": "&#13;"})


def _is_attribute(key: str, known: frozenset[str], beside_text: bool) -> bool:
    if key in ALWAYS_ATTRIBUTES or key.startswith(ATTRIBUTE_PREFIXES):
        return True
    return ":" not in key and (beside_text or key in known)


def parsed(document: Delivered) -> etree._Element:
    """The delivered XML document, parsed as the mapper parses it (for tests and previews)."""
    return parse_document(document.document, safe_parser(), NAMESPACES)
