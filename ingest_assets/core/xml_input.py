"""XML from providers (harvested pages, wiki exports, platform metadata): no entity expansion, no network, no
huge trees; safe repair only. The one parser set-up every capability uses.

The one repair applied is removing characters that XML 1.0 forbids everywhere (C0 controls other than
tab, LF and CR, raw or as character references): they cannot be part of any well-formed content, so
dropping them changes nothing a conforming parser could have read. It is done only for ASCII-compatible
encodings (in UTF-16/32 those bytes belong to other characters). Anything else stays an error.
A page declaring entities in a DTD is refused: unexpanded references would leak into the records. References
to entities of an *external* DTD (``&nbsp;`` under an XHTML doctype) are resolved when HTML names them and
refused otherwise, per record (:func:`resolve_entity_refs`).

Records as real hubs send them use prefixes they never declare (``xsi:``, ``dc:`` in a record cut out of its
page). Given ``prefixes`` (what a prefix means: :data:`NAMESPACES` and a mapping profile's own), such a
document is read as if its root element declared them: the first parse fails on undefined prefixes only,
the declarations are added to the root's start tag and the same hardened parser reads it again (a prefix
nobody knows gets ``urn:x-undeclared-prefix:<prefix>``). A namespace name libxml2 refuses as a URI
(``xmlns:cnt="http://www.w3.o rg/2011/content#"``) is percent-encoded where it is declared. No limit is loosened:
the text is the same but for those declarations, and every other error is still an error.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from html import escape
from html.entities import name2codepoint
from typing import Any, BinaryIO

from lxml import etree

ILLEGAL_BYTES = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]")
ILLEGAL_REFS = re.compile(rb"&#(?:[xX]0*(?:[0-8bBcCeEfF]|1[0-9a-fA-F])|0*(?:[0-8]|1[124-9]|2[0-9]|3[01]));")
WIDE_ENCODING = re.compile(rb"""encoding\s*=\s*["'](?:utf-?16|utf-?32|ucs-?[24]|ebcdic|cp0?37|ibm0?37|cp500)""", re.I)
WIDE_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")
UNDECLARED_URI = "urn:x-undeclared-prefix:"
_UNDEFINED_PREFIX = re.compile(r"Namespace prefix ([^\s:]+) (?:for \S+ )?on \S+ is not defined")
_BAD_NAMESPACE_URI = re.compile(r"xmlns(?::[^\s:]+)?: '(.*)' is not a valid URI")
# a namespace name's characters that no URI holds as they are (libxml2 refuses the declaration)
_NOT_IN_URIS = re.compile(r'[\x00-\x20"<>\\^`{|}\x7f]')
# up to the end of the root element's name: optional BOM and XML declaration, then space, comments, PIs, DOCTYPE
_ROOT_NAME = re.compile(rb"(?:\xef\xbb\xbf)?(?:<\?xml[^>]*\?>)?(?:\s|<!--.*?-->|<\?.*?\?>"
                        rb"|<!DOCTYPE(?:[^\[>]|\[.*?\])*>)*<[^\s/>]+", re.DOTALL)
_DECLARATION_ROUNDS = 3  # a parser that stops listing errors early shows the rest on the next parse

# Prefixes every mapping profile may use, and what these prefixes mean when a record uses them undeclared.
NAMESPACES = {
    "oai": "http://www.openarchives.org/OAI/2.0/",
    "oai_dc": "http://www.openarchives.org/OAI/2.0/oai_dc/",
    "oai_qdc": "http://worldcat.org/xmlschemas/qdc-1.0/",
    "oclcdc": "http://worldcat.org/xmlschemas/oclcdc-1.0/",
    "dc": "http://purl.org/dc/elements/1.1/",
    "dcterms": "http://purl.org/dc/terms/",
    "mods": "http://www.loc.gov/mods/v3",
    "marc": "http://www.loc.gov/MARC21/slim",
    "xlink": "http://www.w3.org/1999/xlink",
    "xsi": "http://www.w3.org/2001/XMLSchema-instance",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "foaf": "http://xmlns.com/foaf/0.1/",
    "bibo": "http://purl.org/ontology/bibo/",
    "edm": "http://www.europeana.eu/schemas/edm/",
}


ILLEGAL = re.compile(ILLEGAL_BYTES.pattern + b"|" + ILLEGAL_REFS.pattern)
MAX_LISTED_REPAIRS = 20


@dataclass
class Repairs:
    """What :func:`parse_xml` removed: how many characters, and where the first :data:`MAX_LISTED_REPAIRS` were
    (``U+000B at line 5, column 17``: line and character column of the original document)."""

    count: int = 0
    first: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return self.count > 0

    def __str__(self) -> str:
        more = f" and {self.count - len(self.first)} more" if self.count > len(self.first) else ""
        characters = "character" if self.count == 1 else "characters"
        return f"removed {self.count} {characters} XML 1.0 forbids: {'; '.join(self.first)}{more}"

    @classmethod
    def of(cls, content: bytes) -> "Repairs":
        repairs = cls()
        for match in ILLEGAL.finditer(content):
            repairs.count += 1
            if len(repairs.first) < MAX_LISTED_REPAIRS:
                start = match.start()
                line_start = content.rfind(b"\n", 0, start) + 1
                column = len(content[line_start:start].decode("utf-8", "replace")) + 1
                found, line = match.group(), content.count(b"\n", 0, start) + 1
                what = f"U+{found[0]:04X}" if len(found) == 1 else f"the reference {found.decode('ascii')}"
                repairs.first.append(f"{what} at line {line}, column {column}")
        return repairs


class UnsafeXML(ValueError):
    """Well-formed, but not something a harvester should accept."""


# every lxml parser of provider input gets these (XMLParser, XMLPullParser and iterparse take the same keywords)
HARDENED = {"resolve_entities": False, "no_network": True, "huge_tree": False, "load_dtd": False}


def safe_parser(**options) -> etree.XMLParser:
    return etree.XMLParser(**HARDENED, **options)


def parse_xml(content: bytes, prefixes: Mapping[str, str] | None = None) -> tuple[etree._Element, Repairs]:
    """Parse a whole document from bytes (the XML declaration, not HTTP headers, decides the encoding).

    Returns the root and the :class:`Repairs` made (false when the page was well-formed).
    Raises ``etree.XMLSyntaxError`` when the page is broken beyond that repair, :class:`UnsafeXML` when it
    declares entities. With ``prefixes``, undeclared prefixes are read as the module says.
    """
    removed = Repairs()
    parser = safe_parser()
    try:
        root = parse_document(content, parser, prefixes)
    except etree.XMLSyntaxError:
        if _wide(content):
            raise
        cleaned, raw = ILLEGAL_BYTES.subn(b"", content)
        cleaned, refs = ILLEGAL_REFS.subn(b"", cleaned)
        if raw + refs == 0:
            raise
        root, removed = parse_document(cleaned, parser, prefixes), Repairs.of(content)
    refuse_declared_entities(root)
    return root, removed


def parse_document(document: str | bytes, parser: etree.XMLParser,
                   prefixes: Mapping[str, str] | None = None) -> etree._Element:
    """One document with ``parser`` (one of :func:`safe_parser`); a decoded ``str`` loses its XML declaration,
    whose encoding no longer applies. With ``prefixes``, undeclared prefixes are declared as the module says.
    Raises ``etree.XMLSyntaxError``."""
    if isinstance(document, str):
        document = document.lstrip("\ufeff \t\r\n")
        if document.startswith("<?xml"):
            end = document.find("?>")
            document = document[end + 2:] if end != -1 else document
        document = document.encode("utf-8")
    for _ in range(_DECLARATION_ROUNDS):
        try:
            return etree.fromstring(document, parser)
        except etree.XMLSyntaxError:
            if prefixes is None or _wide(document):
                raise
            undefined, bad_uris, other = _parse_errors(parser)
            if other is not None:  # say what else was wrong, not the prefixes that would have been declared
                raise etree.XMLSyntaxError(other.message, other.type, other.line, other.column) from None
            declared = _declare(_repair_uris(document, bad_uris), undefined, prefixes)
            if declared is None:
                raise
            document = declared
    return etree.fromstring(document, parser)


def _wide(content: bytes) -> bool:
    """A UTF-16/32 (or EBCDIC) document, whose bytes a byte-level repair must not touch."""
    return content.startswith(WIDE_BOMS) or b"\x00<" in content[:4] or bool(WIDE_ENCODING.search(content[:200]))


def _parse_errors(parser: etree.XMLParser) -> tuple[set[str], set[str], Any]:
    """The prefixes the parser's last (failed) run found undeclared, the namespace names it refused as URIs
    (``xmlns:cnt="http://www.w3.o rg/2011/content#"``), and its first other error (the parser's own log: the
    exception's also holds earlier parses' errors)."""
    found, bad_uris = set(), set()
    for entry in parser.error_log:
        if entry.type_name == "WAR_NS_URI" and (bad := _BAD_NAMESPACE_URI.match(entry.message)):
            bad_uris.add(bad.group(1))
            continue
        match = _UNDEFINED_PREFIX.match(entry.message) if entry.type_name == "NS_ERR_UNDEFINED_NAMESPACE" else None
        if match is None:
            return found, bad_uris, entry
        found.add(match.group(1))
    return found, bad_uris, None


def _repair_uris(document: bytes, bad_uris: set[str]) -> bytes:
    """``document`` with each refused namespace name percent-encoded where it is declared (ingestion3 reads such
    a record; the namespace keeps one name, the encoded one)."""
    for uri in bad_uris:
        fixed = _NOT_IN_URIS.sub(lambda m: "%{:02X}".format(ord(m.group())), uri)
        for quote in ('"', "'"):
            document = re.sub(rb"(xmlns(?::[^\s:=]+)?\s*=\s*)" + re.escape(f"{quote}{uri}{quote}".encode("utf-8")),
                              lambda m: m.group(1) + f"{quote}{fixed}{quote}".encode("utf-8"), document)
    return document


def _declare(document: bytes, undefined: set[str], prefixes: Mapping[str, str]) -> bytes | None:
    """``document`` with ``xmlns:<prefix>`` declarations added to its root element's start tag."""
    match = _ROOT_NAME.match(document)
    if match is None:
        return None
    declarations = "".join(
        f' xmlns:{prefix}="{escape(prefixes.get(prefix) or UNDECLARED_URI + prefix, quote=True)}"'
        for prefix in sorted(undefined)
    )
    return document[:match.end()] + declarations.encode("utf-8") + document[match.end():]


def iter_elements(source: str | BinaryIO, tag: str | tuple[str, ...] | None) -> Iterator[etree._Element]:
    """Stream the elements ``tag`` (one or several, lxml's ``{*}name`` wildcard included; None: every element) of a
    document (a path or binary stream) as they end, with the hardened parser; :class:`UnsafeXML` when it declares
    entities (known once the first element ends: the DTD comes before it). A namespace name libxml2 refuses as a
    URI (``xmlns:cnt="http://www.w3.o rg/2011/content#"``, said only once the document is read) is no error, as
    :func:`parse_document` reads it too; anything else libxml2 reports is ``etree.XMLSyntaxError``. The caller
    clears what it has read."""
    events = etree.iterparse(source, events=("end",), tag=tag, **HARDENED)
    try:
        for number, (_event, element) in enumerate(events):
            if number == 0:
                refuse_declared_entities(element)
            yield element
    except etree.XMLSyntaxError:
        if not events.error_log or any(entry.type_name != "WAR_NS_URI" for entry in events.error_log):
            raise


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
