"""The JMESPath expressions of one mapper over JSON documents, with the interface of ``paths.Paths``: text
expressions (``add``), the values a rule's ``each`` iterates over (``add_nodes``) and conditions
(``add_condition``, JMESPath's truthiness). ``@`` is the current value, as JMESPath has it.

Most mapping expressions are key paths (``attributes.metadata.sourceResource.title``), some followed by
projections, flattens, indexes or a list (``sourceResource.language[].name``, ``names[-1]``,
``sourceResource.[subject[].name, subject]``). Each is split into its leading key path and the rest: the key paths
of all expressions are merged into one tree of keys, read by one walk of the document (each key once), and the rest
is compiled into Python functions with JMESPath's meaning, evaluated when a rule first asks. An expression with
anything else (filters, functions, comparisons) is left to jmespath whole.

Documents are parsed by :func:`decode`: orjson, which reads an integer beyond 64 bits as a float (losing digits).
A float that large, met where a value is made a string, raises :class:`WideNumber`, and the mapper reads that
record again with the stdlib parser under :func:`exact_numbers`. (A JMESPath function given such an integer, as
``to_string``, sees orjson's float: no shipped profile applies a function to a number.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import jmespath
import orjson
from jmespath.exceptions import JMESPathError
from jmespath.parser import ParsedResult

from ingest_assets.core import json_input

Evaluate = Callable[[Any], Any]
_MISSING = object()
_WIDE = 2.0 ** 63  # orjson reads integers in [-2**63, 2**64) exactly, longer ones as floats
_EXACT = ContextVar("numbers read by the stdlib parser", default=False)


class WideNumber(Exception):
    """A float beyond 64-bit integers in a document :func:`decode` read with orjson: it may be a longer integer whose
    digits orjson lost."""


def decode(document: str | bytes) -> Any:
    """A JSON document, parsed by orjson (3-4 times the stdlib's speed); what orjson refuses (NaN, a lone surrogate,
    a byte order mark) and any document under :func:`exact_numbers`, by ``json_input.loads``, which raises its
    ``ValueError`` as before."""
    if not _EXACT.get():
        try:
            return orjson.loads(document)
        except orjson.JSONDecodeError:
            pass
    return json_input.loads(document)


@contextmanager
def exact_numbers() -> Iterator[None]:
    """Documents decoded by the stdlib parser, whose integers keep every digit (no :class:`WideNumber`)."""
    token = _EXACT.set(True)
    try:
        yield
    finally:
        _EXACT.reset(token)


class _Unsupported(Exception):
    """The expression is left to jmespath."""


class _Key:
    """One key of the merged tree: the ids of the expressions whose key path ends here (``ends``) and the keys read
    from its value when that is an object (``children``)."""

    __slots__ = ("ends", "children")

    def __init__(self) -> None:
        self.ends: list[int] = []
        self.children: dict[str, _Key] = {}


class JsonPaths:
    """Register expressions (compiled once); ``select(document)`` answers them for a parsed document."""

    KEY = "path"  # the rule key that holds these expressions
    SELF = "@"
    hint = "JMESPath expressions, https://jmespath.org/specification.html"

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._rests: list[Evaluate | None] = []  # per id: applied to its key path's value (None: that value)
        self._top = _Key()

    def over(self, key: str) -> JsonPaths:
        """The set a rule's ``key`` registers its expressions in: this one (the model refuses the other key)."""
        if key != self.KEY:
            raise ValueError(f"expressions here are {self.KEY}, not {key}")
        return self

    def child(self, each: str | None = None) -> JsonPaths:
        """An empty set, for expressions relative to the items of ``each`` (a JSON item's selection is cheap: not
        shared between rules)."""
        return JsonPaths()

    def add(self, expr: str) -> int:
        """The id of ``expr`` (raises ``ValueError`` when it is not a JMESPath expression)."""
        if not isinstance(expr, str):
            raise ValueError(f"expected a JMESPath string, got {expr!r}")
        if expr not in self._ids:
            keys, rest = _split(_parsed(expr))
            node = self._top
            for key in keys:
                node = node.children.get(key) or node.children.setdefault(key, _Key())
            self._ids[expr] = len(self._rests)
            node.ends.append(len(self._rests))
            self._rests.append(rest)
        return self._ids[expr]

    add_nodes = add_condition = add  # one result per expression; the selection reads it as each needs

    def select(self, document: Any, record: Any = None) -> JsonSelection:
        found: dict[int, Any] = {}
        if document is not None:
            for key in self._top.ends:
                found[key] = document
            if self._top.children and isinstance(document, dict):
                _walk(document, self._top, found)
        return JsonSelection(document, found, self._rests)


def _walk(value: dict, node: _Key, found: dict[int, Any]) -> None:
    """The value of each key path below ``node`` (an absent or null one is left out: its value is None)."""
    for key, below in node.children.items():
        child = value.get(key)
        if child is None:
            continue
        for ident in below.ends:
            found[ident] = child
        if below.children and isinstance(child, dict):
            _walk(child, below, found)


class JsonSelection:
    """The answers for one document (or ``each`` item): key paths read by the walk, the rest of an expression
    evaluated once when first asked for."""

    __slots__ = ("_document", "_found", "_rests", "_results")

    def __init__(self, document: Any, found: dict[int, Any], rests: list[Evaluate | None]):
        self._document = document
        self._found = found
        self._rests = rests
        self._results: dict[int, Any] = {}

    @property
    def record(self) -> Any:
        return self._document

    def _result(self, key: int) -> Any:
        rest = self._rests[key]
        if rest is None:
            return self._found.get(key)
        result = self._results.get(key, _MISSING)
        if result is _MISSING:
            try:
                result = rest(self._found.get(key))
            except JMESPathError:  # a function given a value of the wrong type in this document
                result = None
            self._results[key] = result
        return result

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
    kind = type(result)
    if kind is str:  # the common cases: a key path to a string, or to a list of strings
        result = result.strip()
        return [result] if result else []
    if result is None:
        return []
    if kind is list and all(type(value) is str for value in result):
        return [text for value in result if (text := value.strip())]
    out: list[str] = []
    stack = [result]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            value = value.strip()
            if value:
                out.append(value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            if type(value) is float and (value >= _WIDE or value <= -_WIDE) and not _EXACT.get():
                raise WideNumber(value)
            out.append(str(value))
        elif isinstance(value, list):
            stack.extend(reversed(value))
    return out


def compile_path(expr: str) -> Evaluate:
    """``document -> result`` of one expression, as jmespath gives it (None where jmespath raises a type error)."""
    keys, rest = _split(_parsed(expr))

    def evaluate(document: Any) -> Any:
        value = document
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        try:
            return value if rest is None else rest(value)
        except JMESPathError:
            return None

    return evaluate


# ---- compiling ----------------------------------------------------------------------------------------------

def _parsed(expr: str) -> ParsedResult:
    try:
        return jmespath.compile(expr)
    except JMESPathError as exc:
        raise ValueError(str(exc).replace("\n", " ")) from None


_SEQUENCES = frozenset({"subexpression", "index_expression", "pipe"})  # children applied in turn
_LEFT_FIRST = frozenset({"projection", "flatten", "filter_projection", "value_projection"})  # the first child reads
_CURRENT = {"type": "current", "children": []}


def _split(parsed: ParsedResult) -> tuple[tuple[str, ...], Evaluate | None]:
    """(the keys the expression reads first from the document, what it does with their value: None when nothing
    more). An expression the compiler does not cover reads no keys first and is jmespath's whole."""
    try:
        keys, rest = _leading_keys(parsed.parsed)
        return tuple(keys), None if rest is None else _compiled(rest)
    except _Unsupported:
        return (), parsed.search


def _leading_keys(node: dict) -> tuple[list[str], dict | None]:
    """The key path ``node`` starts with, and the rest of ``node`` (None: nothing) applied to its value."""
    kind, children = node["type"], node.get("children", [])
    if kind == "field":
        return [node["value"]], None
    if kind in ("current", "identity"):
        return [], None
    if kind in _SEQUENCES:
        keys, rest = _leading_keys(children[0])
        remaining = list(children[1:])
        while rest is None and remaining and remaining[0]["type"] == "field":
            keys.append(remaining.pop(0)["value"])
        if not remaining:
            return keys, rest
        return keys, {**node, "children": [rest or _CURRENT, *remaining]}
    if kind in _LEFT_FIRST:
        keys, rest = _leading_keys(children[0])
        return keys, {**node, "children": [rest or _CURRENT, *children[1:]]}
    return [], node


def _compiled(node: dict) -> Evaluate:
    """``node`` as a function of the current value, with the meaning jmespath's interpreter gives it."""
    kind, children = node["type"], node.get("children", [])
    if kind in ("current", "identity"):
        return _itself
    if kind == "field":
        return _keys([node["value"]])
    if kind in _SEQUENCES:
        if all(child["type"] == "field" for child in children):
            return _keys([child["value"] for child in children])
        return _sequence([_compiled(child) for child in children if child["type"] not in ("current", "identity")])
    if kind == "index":
        return _index(node["value"])
    if kind == "slice":
        return _slice(slice(*children))
    if kind == "flatten":
        return _flatten(_compiled(children[0]))
    if kind == "projection":
        return _projection(_compiled(children[0]), _compiled(children[1]))
    if kind == "multi_select_list":
        return _listed([_compiled(child) for child in children])
    if kind == "literal":
        value = node["value"]
        return lambda _value: value
    raise _Unsupported(kind)


def _itself(value: Any) -> Any:
    return value


def _keys(keys: list[str]) -> Evaluate:
    if len(keys) == 1:
        only = keys[0]
        return lambda value: value.get(only) if isinstance(value, dict) else None

    def read(value: Any) -> Any:
        for key in keys:
            if not isinstance(value, dict):
                return None
            value = value.get(key)
        return value

    return read


def _sequence(steps: list[Evaluate]) -> Evaluate:
    if len(steps) == 1:
        return steps[0]

    def applied(value: Any) -> Any:
        for step in steps:
            value = step(value)
        return value

    return applied


def _index(index: int) -> Evaluate:
    return lambda value: value[index] if isinstance(value, list) and -len(value) <= index < len(value) else None


def _slice(taken: slice) -> Evaluate:
    return lambda value: value[taken] if isinstance(value, list) else None


def _flatten(left: Evaluate) -> Evaluate:
    def flattened(value: Any) -> Any:
        base = left(value)
        if not isinstance(base, list):
            return None
        merged: list = []
        for element in base:
            if isinstance(element, list):
                merged.extend(element)
            else:
                merged.append(element)
        return merged

    return flattened


def _projection(left: Evaluate, right: Evaluate) -> Evaluate:
    def projected(value: Any) -> Any:
        base = left(value)
        if not isinstance(base, list):
            return None
        if right is _itself:
            return [element for element in base if element is not None]
        return [found for element in base if (found := right(element)) is not None]

    return projected


def _listed(parts: list[Evaluate]) -> Evaluate:
    return lambda value: None if value is None else [part(value) for part in parts]
