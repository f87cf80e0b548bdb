"""The JMESPath expressions of one mapper over JSON documents, with the interface of ``paths.Paths``: text
expressions (``add``), the values a rule's ``each`` iterates over (``add_nodes``) and conditions
(``add_condition``, JMESPath's truthiness). ``@`` is the current value, as JMESPath has it."""

from __future__ import annotations

from typing import Any

import jmespath
from jmespath.exceptions import JMESPathError
from jmespath.parser import ParsedResult


class JsonPaths:
    """Register expressions (compiled once); ``select(document)`` answers them for a parsed document."""

    KEY = "path"  # the rule key that holds these expressions
    SELF = "@"
    hint = "JMESPath expressions, https://jmespath.org/specification.html"

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._compiled: list[ParsedResult] = []

    def over(self, key: str) -> JsonPaths:
        """The set a rule's ``key`` registers its expressions in: this one (the model refuses the other key)."""
        if key != self.KEY:
            raise ValueError(f"expressions here are {self.KEY}, not {key}")
        return self

    def child(self) -> JsonPaths:
        """An empty set, for expressions relative to ``each`` items."""
        return JsonPaths()

    def add(self, expr: str) -> int:
        """The id of ``expr`` (raises ``ValueError`` when it is not a JMESPath expression)."""
        if not isinstance(expr, str):
            raise ValueError(f"expected a JMESPath string, got {expr!r}")
        if expr not in self._ids:
            try:
                compiled = jmespath.compile(expr)
            except JMESPathError as exc:
                raise ValueError(str(exc).replace("\n", " ")) from exc
            self._ids[expr] = len(self._compiled)
            self._compiled.append(compiled)
        return self._ids[expr]

    add_nodes = add_condition = add  # one result per expression; the selection reads it as each needs

    def select(self, document: Any, record: Any = None) -> JsonSelection:
        return JsonSelection(document, self._compiled)


class JsonSelection:
    """The answers for one document (or ``each`` item), each evaluated once when first asked for."""

    __slots__ = ("_document", "_compiled", "_results")

    def __init__(self, document: Any, compiled: list[ParsedResult]):
        self._document = document
        self._compiled = compiled
        self._results: dict[int, Any] = {}

    @property
    def record(self) -> Any:
        return self._document

    def _result(self, key: int) -> Any:
        if key not in self._results:
            try:
                self._results[key] = self._compiled[key].search(self._document)
            except JMESPathError:  # a function given a value of the wrong type in this document
                self._results[key] = None
        return self._results[key]

    def strings(self, key: int) -> list[str]:
        return strings(self._result(key))

    def nodes(self, key: int) -> list:
        result = self._result(key)
        return result if isinstance(result, list) else [] if result is None else [result]

    def holds(self, key: int) -> bool:
        result = self._result(key)
        if isinstance(result, (str, list, dict)):
            return len(result) > 0
        return result is not None and result is not False

    def header(self, name: str) -> list[str]:
        return []  # JSON records have no OAI-PMH header (refused when the profile loads)


def strings(result: Any) -> list[str]:
    """Non-empty stripped strings of a JMESPath result: strings and numbers, lists flattened, objects skipped."""
    out: list[str] = []
    stack = [result]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            value = value.strip()
            if value:
                out.append(value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out.append(str(value))
        elif isinstance(value, list):
            stack.extend(reversed(value))
    return out
