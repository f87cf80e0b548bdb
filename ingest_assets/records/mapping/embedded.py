"""JSON records that carry an XML document in one of their strings (NYPL's Solr documents hold their MODS record
in ``solr_doc_hash.mods_st``): a profile's ``embedded_xml`` names that string, its rules' ``xpath`` expressions
read the embedded document (as an XML profile's do, ``each`` and ``when`` included) and their ``path``
expressions read the JSON record. One parse of each per record; the XML goes through ``core.xml_input``'s limits.
"""

from __future__ import annotations

from typing import Any

from ingest_assets.records.mapping.json_paths import JsonPaths, JsonSelection
from ingest_assets.records.mapping.paths import Paths, Selection


class EmbeddedPaths:
    """XPath over the embedded document (ids from 0 up) and JMESPath over the JSON record (ids below 0)."""

    KEY = "xpath"
    SELF = "."

    def __init__(self, namespaces: dict[str, str]) -> None:
        self.xml = Paths(namespaces)
        self.json = _JsonView(JsonPaths())

    @property
    def hint(self) -> str:
        return f"xpath on the embedded XML ({self.xml.hint}), path on the JSON record ({self.json.hint})"

    def over(self, key: str) -> EmbeddedPaths | _JsonView:
        """The set a rule's ``key`` (``xpath`` or ``path``) registers its expressions in."""
        return self.json if key == _JsonView.KEY else self

    def child(self, each: str | None = None) -> Paths:
        """``each`` items are elements of the embedded document."""
        return self.xml.child(each)

    def add(self, expr: str) -> int:
        return self.xml.add(expr)

    def add_nodes(self, expr: str) -> int:
        return self.xml.add_nodes(expr)

    def add_condition(self, expr: str) -> int:
        return self.xml.add_condition(expr)

    def select(self, document: Any, record: Any = None, xml: tuple | None = None) -> EmbeddedSelection:
        """The answers for the JSON ``document`` and, when given, ``xml``: (metadata root, whole XML record)."""
        return EmbeddedSelection(self.json.paths.select(document), None if xml is None else self.xml.select(*xml))


class _JsonView:
    """The JMESPath side: its ids are the JSON set's, negated and shifted below 0."""

    KEY = "path"
    SELF = JsonPaths.SELF

    def __init__(self, paths: JsonPaths) -> None:
        self.paths = paths

    @property
    def hint(self) -> str:
        return self.paths.hint

    def add(self, expr: str) -> int:
        return -1 - self.paths.add(expr)


class EmbeddedSelection:
    """A record's answers: ids below 0 from the JSON record, the others from the embedded document (none when the
    record carries no XML, as when only its id is read)."""

    __slots__ = ("_json", "_xml")

    def __init__(self, json: JsonSelection, xml: Selection | None):
        self._json = json
        self._xml = xml

    @property
    def record(self) -> Any:
        return self._xml.record if self._xml is not None else self._json.record

    def strings(self, key: int) -> list[str]:
        if key < 0:
            return self._json.strings(-1 - key)
        return self._xml.strings(key) if self._xml is not None else []

    def nodes(self, key: int) -> list:
        return self._xml.nodes(key) if self._xml is not None else []

    def holds(self, key: int) -> bool:
        return self._xml.holds(key) if self._xml is not None else False

    def header(self, name: str) -> list[str]:
        return []  # refused when the profile loads: a JSON record has no OAI-PMH header
