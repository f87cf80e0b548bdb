"""How the ``api`` harvest reads an answer and its records: JSON through dotted paths, XML through XPaths.

A JSON path is dotted (``hits.hits``, ``_source.id``; digits index lists: ``pnx.control.recordid.0``). An XML
path is an XPath 1.0 expression with the block's ``namespaces``, evaluated on the page's root (records, cursor,
next link, total, error) or on a record (its id); pages go through the kernel's hardened parser
(:func:`ingest_assets.core.xml_input.parse_xml`: no entities, no network, only XML-1.0-illegal characters
repaired). A value (an id, a cursor, a total) is the first thing a path selects, as text: a JSON string or
number, an element's text, an attribute. A JSON record's document is the object re-serialised as JSON (UTF-8,
not ASCII-escaped); an XML record's is the element serialised standalone (every namespace in scope declared).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from lxml import etree

from ingest_assets.core import json_input
from ingest_assets.core.errors import ParseError, ValidationError
from ingest_assets.core.xml_input import UnresolvedEntity, parse_xml, standalone


def lookup(data: Any, path: str) -> Any:
    """Follow a dotted path through mappings and lists; None where it leads nowhere."""
    for part in path.split("."):
        if isinstance(data, Mapping):
            data = data.get(part)
        elif isinstance(data, list) and part.isdigit() and int(part) < len(data):
            data = data[int(part)]
        else:
            return None
    return data


def record_id(record: Any, path: str, provider: str | None = None) -> str:
    """The id at ``path`` of a JSON record (a ValidationError when it is not an object or has no usable id)."""
    if not isinstance(record, Mapping):
        raise ValidationError(f"record is a JSON {type(record).__name__}, not an object", provider=provider)
    found = lookup(record, path)
    if found is None or isinstance(found, (Mapping, list, bool)) or str(found).strip() == "":
        raise ValidationError(f"record has no usable id at {path!r} (got {found!r})", provider=provider)
    return str(found).strip()


class JsonPages:
    """Pages and records of JSON."""

    format, mimetype = "json", "application/json"

    def parse(self, content: bytes) -> tuple[Any, str | None]:
        """The page, and what was repaired in it (never anything, for JSON). ValueError: not JSON."""
        return json_input.loads(content), None

    def select(self, page: Any, path: str) -> list | None:
        """The records at ``path``; None when there is no list there."""
        found = lookup(page, path)
        return found if isinstance(found, list) else None

    def value(self, page: Any, path: str) -> str | None:
        found = lookup(page, path)
        if isinstance(found, list):
            found = found[0] if found else None
        if found is None or isinstance(found, (Mapping, list, bool)):
            return None
        return str(found).strip() or None

    def record_id(self, record: Any, path: str) -> str:
        return record_id(record, path)

    def document(self, record: Any) -> str:
        return json.dumps(record, ensure_ascii=False)

    def link(self, record: Any) -> str | None:
        """A record that is a link to the record (``items``): its URL."""
        return (record.strip() or None) if isinstance(record, str) else None


class XmlPages:
    """Pages and records of XML; ``namespaces``: the prefixes the paths use."""

    format, mimetype = "xml", "application/xml"

    def __init__(self, namespaces: Mapping[str, str]):
        self.namespaces = dict(namespaces)
        self._compiled: dict[str, etree.XPath] = {}

    def _xpath(self, node: etree._Element, path: str) -> Any:
        if path not in self._compiled:
            self._compiled[path] = etree.XPath(path, namespaces=self.namespaces)
        try:
            return self._compiled[path](node)
        except etree.XPathError as exc:
            raise ParseError(f"XPath {path!r} cannot be evaluated here: {exc}") from exc

    def parse(self, content: bytes) -> tuple[etree._Element, str | None]:
        """The page's root, and what was repaired in it. ValueError: not well-formed, or declaring entities."""
        try:
            root, repairs = parse_xml(content)
        except etree.XMLSyntaxError as exc:
            raise ValueError(f"not well-formed XML: {exc}") from exc
        return root, (str(repairs) if repairs else None)

    def select(self, page: etree._Element, path: str) -> list | None:
        found = self._xpath(page, path)
        return found if isinstance(found, list) else None

    def value(self, page: etree._Element, path: str) -> str | None:
        return _text(self._xpath(page, path))

    def record_id(self, record: Any, path: str) -> str:
        if not isinstance(record, etree._Element):
            raise ValidationError(f"the records path selects {type(record).__name__} values, not elements")
        found = _text(self._xpath(record, path))
        if found is None:
            raise ValidationError(f"record has no usable id at {path!r}")
        return found

    def document(self, record: etree._Element) -> str:
        try:
            return standalone(record)
        except UnresolvedEntity as exc:
            raise ParseError(str(exc)) from exc

    def link(self, record: Any) -> str | None:
        return _text([record])


def _text(found: Any) -> str | None:
    """The first thing an XPath found, as stripped text (None: nothing, or only blanks)."""
    if isinstance(found, list):
        found = found[0] if found else None
    if isinstance(found, etree._Element):
        found = "".join(found.itertext())
    elif isinstance(found, float):
        found = str(int(found)) if found.is_integer() else str(found)
    elif isinstance(found, bool) or found is None:
        return None
    return str(found).strip() or None


def page_reader(format: str, namespaces: Mapping[str, str]) -> JsonPages | XmlPages:
    """The reader of ``format`` (``json`` or ``xml``)."""
    return XmlPages(namespaces) if format == "xml" else JsonPages()
