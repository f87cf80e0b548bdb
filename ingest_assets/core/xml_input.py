"""XML from providers (harvested pages, wiki exports, platform metadata): no entity expansion, no network, no
huge trees; safe repair only. The one parser set-up every capability uses.

The one repair applied is removing characters that XML 1.0 forbids everywhere (C0 controls other than
tab, LF and CR, raw or as character references): they cannot be part of any well-formed content, so
dropping them changes nothing a conforming parser could have read. It is done only for ASCII-compatible
encodings (in UTF-16/32 those bytes belong to other characters). Anything else stays an error.
A page declaring entities in a DTD is refused: unexpanded references would leak into the records. References
to entities of an *external* DTD (``&nbsp;`` under an XHTML doctype) are resolved when HTML names them and
refused otherwise, per record (:func:`resolve_entity_refs`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from html.entities import name2codepoint
from typing import BinaryIO

from lxml import etree

ILLEGAL_BYTES = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]")
ILLEGAL_REFS = re.compile(rb"&#(?:[xX]0*(?:[0-8bBcCeEfF]|1[0-9a-fA-F])|0*(?:[0-8]|1[124-9]|2[0-9]|3[01]));")
WIDE_ENCODING = re.compile(rb"""encoding\s*=\s*["'](?:utf-?16|utf-?32|ucs-?[24]|ebcdic|cp0?37|ibm0?37|cp500)""", re.I)
WIDE_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")


class UnsafeXML(ValueError):
    """Well-formed, but not something a harvester should accept."""


# every lxml parser of provider input gets these (XMLParser, XMLPullParser and iterparse take the same keywords)
HARDENED = {"resolve_entities": False, "no_network": True, "huge_tree": False, "load_dtd": False}


def safe_parser(**options) -> etree.XMLParser:
    return etree.XMLParser(**HARDENED, **options)


def parse_xml(content: bytes) -> tuple[etree._Element, int]:
    """Parse a whole document from bytes (the XML declaration, not HTTP headers, decides the encoding).

    Returns the root and the number of illegal characters removed (0 if the page was well-formed).
    Raises ``etree.XMLSyntaxError`` when the page is broken beyond that repair, :class:`UnsafeXML` when it
    declares entities.
    """
    removed = 0
    try:
        root = etree.fromstring(content, safe_parser())
    except etree.XMLSyntaxError:
        if content.startswith(WIDE_BOMS) or b"\x00<" in content[:4] or WIDE_ENCODING.search(content[:200]):
            raise
        cleaned, raw = ILLEGAL_BYTES.subn(b"", content)
        cleaned, refs = ILLEGAL_REFS.subn(b"", cleaned)
        if raw + refs == 0:
            raise
        root, removed = etree.fromstring(cleaned, safe_parser()), raw + refs
    refuse_declared_entities(root)
    return root, removed


def iter_elements(source: str | BinaryIO, tag: str) -> Iterator[etree._Element]:
    """Stream the elements ``tag`` of a document (a path or binary stream) as they end, with the hardened parser;
    :class:`UnsafeXML` when it declares entities (known once the first element ends: the DTD comes before it).
    The caller clears what it has read."""
    for number, (_event, element) in enumerate(etree.iterparse(source, events=("end",), tag=tag, **HARDENED)):
        if number == 0:
            refuse_declared_entities(element)
        yield element


def refuse_declared_entities(element: etree._Element) -> None:
    """:class:`UnsafeXML` when the document of ``element`` declares entities in its DTD: left unexpanded, their
    references would leak into records or cut texts short."""
    dtd = element.getroottree().docinfo.internalDTD
    if dtd is not None and any(True for _ in dtd.iterentities()):
        raise UnsafeXML("the document declares entities in its DTD (refused)")


def refuse_doctype(content: bytes) -> None:
    """For a document handed on to a parser that would expand entities or read a DTD (rdflib's SAX-based RDF/XML
    reader): :class:`UnsafeXML` when it has a document type declaration at all, ``etree.XMLSyntaxError`` when
    it is not well-formed. Nothing is expanded or fetched here."""
    if etree.fromstring(content, safe_parser()).getroottree().docinfo.doctype:
        raise UnsafeXML("the document has a DOCTYPE (refused: nothing read from a DTD is trusted)")


class UnresolvedEntity(UnsafeXML):
    """A reference to an entity nobody declared here (an external DTD's), which no later parser could read."""


def resolve_entity_refs(element: etree._Element) -> None:
    """Replace references to HTML's named entities below ``element`` by their characters, in place;
    :class:`UnresolvedEntity` for any other name."""
    for entity in list(element.iter(etree.Entity)):
        name = entity.name
        if name not in name2codepoint:
            raise UnresolvedEntity(f"reference to entity &{name}; of an external DTD (not resolvable)")
        text = chr(name2codepoint[name]) + (entity.tail or "")
        previous, parent = entity.getprevious(), entity.getparent()
        if previous is not None:
            previous.tail = (previous.tail or "") + text
        else:
            parent.text = (parent.text or "") + text
        parent.remove(entity)


def standalone(element: etree._Element) -> str:
    """The element as a standalone document: lxml declares every in-scope namespace on it; entity references
    resolved (or :class:`UnresolvedEntity`)."""
    resolve_entity_refs(element)
    return etree.tostring(element, encoding="unicode", with_tail=False)
