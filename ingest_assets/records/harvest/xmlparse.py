"""Hostile-XML parsing for harvested pages: no entities, no network, no huge trees; safe repair only.

The one repair applied is removing characters that XML 1.0 forbids everywhere (C0 controls other than
tab, LF and CR, raw or as character references): they cannot be part of any well-formed content, so
dropping them changes nothing a conforming parser could have read. It is done only for ASCII-compatible
encodings (in UTF-16/32 those bytes belong to other characters). Anything else stays an error.
A page declaring entities in a DTD is refused: unexpanded references would leak into the records.
"""

from __future__ import annotations

import re

from lxml import etree

ILLEGAL_BYTES = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]")
ILLEGAL_REFS = re.compile(rb"&#(?:[xX]0*(?:[0-8bBcCeEfF]|1[0-9a-fA-F])|0*(?:[0-8]|1[124-9]|2[0-9]|3[01]));")
WIDE_ENCODING = re.compile(rb"""encoding\s*=\s*["'](?:utf-?16|utf-?32|ucs-?[24]|ebcdic|cp0?37|ibm0?37|cp500)""", re.I)
WIDE_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")


class UnsafeXML(ValueError):
    """Well-formed, but not something a harvester should accept."""


def safe_parser() -> etree.XMLParser:
    return etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, load_dtd=False)


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
    if declares_entities(root):
        raise UnsafeXML("the document declares entities in its DTD (refused)")
    return root, removed


def declares_entities(element: etree._Element) -> bool:
    dtd = element.getroottree().docinfo.internalDTD
    return dtd is not None and any(True for _ in dtd.iterentities())


def standalone(element: etree._Element) -> str:
    """The element as a standalone document: lxml declares every in-scope namespace on it."""
    return etree.tostring(element, encoding="unicode", with_tail=False)
