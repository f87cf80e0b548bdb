"""Safe parsing of harvested XML documents and string extraction from XPath results."""

from __future__ import annotations

from lxml import etree
from ingest_assets.core.xml_input import safe_parser

# Prefixes usable in mapping XPaths (registry overrides included).
NAMESPACES = {
    "oai": "http://www.openarchives.org/OAI/2.0/",
    "oai_dc": "http://www.openarchives.org/OAI/2.0/oai_dc/",
    "oai_qdc": "http://worldcat.org/xmlschemas/qdc-1.0/",
    "dc": "http://purl.org/dc/elements/1.1/",
    "dcterms": "http://purl.org/dc/terms/",
    "mods": "http://www.loc.gov/mods/v3",
    "xlink": "http://www.w3.org/1999/xlink",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "bibo": "http://purl.org/ontology/bibo/",
    "edm": "http://www.europeana.eu/schemas/edm/",
}

OAI_METADATA = "{%s}metadata" % NAMESPACES["oai"]


def make_parser() -> etree.XMLParser:
    """An lxml parser for untrusted input: no entity expansion, no network, no huge trees."""
    return safe_parser(remove_comments=True)


def parse(document: str | bytes, parser: etree.XMLParser) -> etree._Element:
    """Parse one document (raises ``etree.XMLSyntaxError``)."""
    if isinstance(document, str):
        document = document.lstrip("\ufeff \t\r\n")
        if document.startswith("<?xml"):
            # The text is already decoded: drop the declaration, whose encoding may not be UTF-8.
            end = document.find("?>")
            document = document[end + 2:] if end != -1 else document
        document = document.encode("utf-8")
    return etree.fromstring(document, parser)


def find_root(doc: etree._Element, tags: tuple[str, ...]) -> etree._Element | None:
    """The metadata element: the document itself, the first descendant with one of ``tags``,
    or else the first element inside an OAI-PMH ``<metadata>``."""
    if doc.tag in tags:
        return doc
    for element in doc.iter(*tags):
        return element
    for metadata in doc.iter(OAI_METADATA):
        for child in metadata.iterchildren(tag=etree.Element):
            return child
    return None


def strings(results: object) -> list[str]:
    """Non-empty stripped strings from an XPath result (elements, attributes, text nodes or a scalar)."""
    if not isinstance(results, list):
        results = [results] if results not in (None, "") else []
    out = []
    for item in results:
        if isinstance(item, str):
            text = item
        elif isinstance(item, etree._Element):
            text = item.text if len(item) == 0 else "".join(item.itertext())
        else:
            continue
        if text:
            text = text.strip()
            if text:
                out.append(text)
    return out
