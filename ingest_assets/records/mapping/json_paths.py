"""The JMESPath expressions of one mapper over JSON documents, with the interface of ``paths.Paths``."""

from __future__ import annotations

from typing import Any

import jmespath
from jmespath.exceptions import JMESPathError
from jmespath.parser import ParsedResult


class JsonPaths:
    """Register expressions with ``add`` (compiled once); ``select(document)`` answers them for a parsed document."""

    KEY = "path"  # the rule key that holds these expressions

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._compiled: list[ParsedResult] = []

    hint = "JMESPath expressions, https://jmespath.org/specification.html"

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

    def select(self, document: Any) -> JsonSelection:
        return JsonSelection(document, self._compiled)


class JsonSelection:
    """The answers for one document, each evaluated once when first asked for."""

    __slots__ = ("_document", "_compiled", "_texts")

    def __init__(self, document: Any, compiled: list[ParsedResult]):
        self._document = document
        self._compiled = compiled
        self._texts: dict[int, list[str]] = {}

    def strings(self, key: int) -> list[str]:
        texts = self._texts.get(key)
        if texts is None:
            try:
                result = self._compiled[key].search(self._document)
            except JMESPathError:  # a function given a value of the wrong type in this document
                result = None
            texts = self._texts[key] = strings(result)
        return list(texts)


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
