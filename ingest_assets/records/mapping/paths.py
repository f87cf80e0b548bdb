"""The XPaths of one mapper, evaluated together per document.

Most mapping XPaths are unions of child steps (``dc:title``, ``mods:originInfo/mods:publisher``), optionally
with attribute tests (``mods:url[@access='preview' and not(@usage)]``) and a final attribute step
(``mods:accessCondition/@xlink:href``). Those are merged into one tree of steps and answered by a single walk
of the document, in document order as XPath gives them; any other expression is evaluated by lxml.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from lxml import etree

from ingest_assets.records.mapping.xml import NAMESPACES, strings

Test = Callable[[etree._Element], bool]

_NAME = r"(?:[A-Za-z_][\w.-]*:)?[A-Za-z_][\w.-]*"
_STEP = re.compile(rf"({_NAME})((?:\[[^\[\]]*\])*)$")
_ATTRIBUTE_STEP = re.compile(rf"@({_NAME})$")
_TOKEN = re.compile(rf"\s*(?:(@{_NAME})|'([^']*)'|\"([^\"]*)\"|(not)\s*\(|(and|or)\b|(=|\(|\)))")


class _Unsupported(Exception):
    """The expression is left to lxml."""


class _Step:
    """One element step of the merged tree: the ids of the expressions ending here (``ends``), the
    attribute steps after it (``attributes``: (name, id)) and the element steps below it (``children``)."""

    __slots__ = ("ends", "attributes", "children")

    def __init__(self) -> None:
        self.ends: list[int] = []
        self.attributes: list[tuple[str, int]] = []
        self.children: dict[str, list[tuple[str, Test | None, _Step]]] = {}


class Paths:
    """Register expressions with ``add`` (compiled once); ``select(root)`` answers all of them for a document.
    ``namespaces`` maps the prefixes the expressions may use (default: ``xml.NAMESPACES``)."""

    KEY = "xpath"  # the rule key that holds these expressions

    def __init__(self, namespaces: dict[str, str] | None = None) -> None:
        self.namespaces = NAMESPACES if namespaces is None else namespaces
        self._ids: dict[str, int] = {}
        self._xpaths: dict[int, etree.XPath] = {}
        self._top = _Step()

    @property
    def hint(self) -> str:
        """What expressions may use, for error messages."""
        return f"prefixes: {sorted(self.namespaces)}"

    def add(self, expr: str) -> int:
        """The id of ``expr`` (raises ``etree.XPathError``/``TypeError`` when lxml rejects it)."""
        xpath = etree.XPath(expr, namespaces=self.namespaces, smart_strings=False)
        xpath(etree.Element("probe"))  # unknown prefixes and functions only show on evaluation
        if expr in self._ids:
            return self._ids[expr]
        key = len(self._ids)
        self._ids[expr] = key
        try:
            self._merge(_alternatives(expr, self.namespaces), key)
        except _Unsupported:
            self._xpaths[key] = xpath
        return key

    def select(self, root: etree._Element) -> Selection:
        texts: dict[int, list[str]] = {}
        if self._top.children:
            _walk(root, self._top.children, texts)
        return Selection(root, texts, self._xpaths)

    def _merge(self, alternatives: list[tuple[list[tuple[str, str, Test | None]], str | None]], key: int) -> None:
        # Within one union, two alternatives may not reach the same element through different tests (the walk
        # would give it twice or out of document order), nor take two attributes of one element (XPath orders
        # those as the document does).
        attributes: dict[tuple, set[str]] = {}
        for steps, attribute in alternatives:
            for other, _ in alternatives:
                for depth in range(1, min(len(steps), len(other)) + 1):
                    tags = [step[0] for step in steps[:depth]] == [step[0] for step in other[:depth]]
                    if tags and [step[:2] for step in steps[:depth]] != [step[:2] for step in other[:depth]]:
                        raise _Unsupported(steps)
            if attribute is not None:
                attributes.setdefault(tuple(step[:2] for step in steps), set()).add(attribute)
        if any(len(names) > 1 for names in attributes.values()):
            raise _Unsupported(attributes)
        for steps, attribute in alternatives:
            node = self._top
            for tag, source, test in steps:
                branches = node.children.setdefault(tag, [])
                for branch_source, _, child in branches:
                    if branch_source == source:
                        node = child
                        break
                else:
                    child = _Step()
                    branches.append((source, test, child))
                    node = child
            if attribute is None:
                if key not in node.ends:
                    node.ends.append(key)
            elif (attribute, key) not in node.attributes:
                node.attributes.append((attribute, key))


class Selection:
    """The answers for one document: ``strings(id)`` is ``xml.strings`` of the XPath's result."""

    __slots__ = ("_root", "_texts", "_xpaths")

    def __init__(self, root: etree._Element, texts: dict[int, list[str]], xpaths: dict[int, etree.XPath]):
        self._root = root
        self._texts = texts
        self._xpaths = xpaths

    def strings(self, key: int) -> list[str]:
        texts = self._texts.get(key)
        if texts is not None:
            return list(texts)
        xpath = self._xpaths.get(key)
        return strings(xpath(self._root)) if xpath is not None else []


def _walk(parent: etree._Element, children: dict[str, list], texts: dict[int, list[str]]) -> None:
    """Collect, per expression id, the stripped non-empty strings ``xml.strings`` makes of the nodes."""
    for element in parent:
        branches = children.get(element.tag)
        if branches is None:
            continue
        text = None
        for _, test, step in branches:
            if test is not None and not test(element):
                continue
            if step.ends:
                if text is None:
                    text = element.text if len(element) == 0 else "".join(element.itertext())
                    text = text.strip() if text else ""
                if text:
                    for key in step.ends:
                        if key in texts:
                            texts[key].append(text)
                        else:
                            texts[key] = [text]
            for name, key in step.attributes:
                value = element.get(name)
                if value:
                    value = value.strip()
                    if value:
                        if key in texts:
                            texts[key].append(value)
                        else:
                            texts[key] = [value]
            if step.children:
                _walk(element, step.children, texts)


def _alternatives(expr: str, namespaces: dict[str, str]) -> list[tuple[list[tuple[str, str, Test | None]], str | None]]:
    """``a/b[test] | c/@d`` -> per alternative its element steps (tag, test source, test) and final attribute."""
    out = []
    for alternative in _split(expr, "|"):
        parts = [part.strip() for part in _split(alternative, "/")]
        attribute = None
        if parts and (match := _ATTRIBUTE_STEP.match(parts[-1])):
            attribute = _clark(match.group(1), namespaces)
            parts.pop()
        if not parts:
            raise _Unsupported(alternative)
        steps = []
        for part in parts:
            match = _STEP.match(part)
            if match is None:
                raise _Unsupported(part)
            source = match.group(2)
            tests = [_test(predicate, namespaces) for predicate in _split(source[1:-1], "][")] if source else []
            steps.append((_clark(match.group(1), namespaces), source, _all(tests) if tests else None))
        out.append((steps, attribute))
    return out


def _split(text: str, separator: str) -> list[str]:
    """``text`` split on ``separator`` outside brackets, parentheses and quotes."""
    parts, depth, quote, start, i = [], 0, None, 0, 0
    while i < len(text):
        char = text[i]
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif text.startswith(separator, i) and depth == 0:
            parts.append(text[start:i])
            start = i + len(separator)
            i = start
            continue
        elif char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
        i += 1
    if quote or depth:
        raise _Unsupported(text)
    parts.append(text[start:])
    return parts


def _clark(name: str, namespaces: dict[str, str]) -> str:
    prefix, _, local = name.rpartition(":")
    if not prefix:
        return local
    if prefix not in namespaces:
        raise _Unsupported(name)
    return "{%s}%s" % (namespaces[prefix], local)


def _all(tests: list[Test]) -> Test:
    test = tests[0]
    for other in tests[1:]:
        test = _both(test, other)
    return test


def _both(first: Test, second: Test) -> Test:
    return lambda element: first(element) and second(element)


def _either(first: Test, second: Test) -> Test:
    return lambda element: first(element) or second(element)


def _test(source: str, namespaces: dict[str, str]) -> Test:
    """A predicate of attribute tests (``@a``, ``@a='v'``) joined by ``and``/``or``/``not()``/parentheses."""
    tokens = []
    position = 0
    source = source.rstrip()
    while position < len(source):
        match = _TOKEN.match(source, position)
        if match is None:
            raise _Unsupported(source)
        tokens.append(next((i, value) for i, value in enumerate(match.groups()) if value is not None))
        position = match.end()
    parser = _Predicate(tokens, namespaces)
    test = parser.disjunction()
    if parser.position != len(tokens):
        raise _Unsupported(source)
    return test


class _Predicate:
    """Recursive descent over the tokens of ``_TOKEN``: (group index, text)."""

    ATTRIBUTE, SINGLE, DOUBLE, NOT, WORD, PUNCT = range(6)

    def __init__(self, tokens: list[tuple[int, str]], namespaces: dict[str, str]):
        self.tokens = tokens
        self.namespaces = namespaces
        self.position = 0

    def peek(self) -> tuple[int, str] | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self, kind: int, text: str | None = None) -> str:
        token = self.peek()
        if token is None or token[0] != kind or (text is not None and token[1] != text):
            raise _Unsupported(self.tokens)
        self.position += 1
        return token[1]

    def disjunction(self) -> Test:
        test = self.conjunction()
        while self.peek() == (self.WORD, "or"):
            self.position += 1
            test = _either(test, self.conjunction())
        return test

    def conjunction(self) -> Test:
        test = self.unary()
        while self.peek() == (self.WORD, "and"):
            self.position += 1
            test = _both(test, self.unary())
        return test

    def unary(self) -> Test:
        token = self.peek()
        if token is None:
            raise _Unsupported(self.tokens)
        if token[0] == self.NOT:
            self.position += 1
            inner = self.disjunction()
            self.take(self.PUNCT, ")")
            return lambda element: not inner(element)
        if token == (self.PUNCT, "("):
            self.position += 1
            inner = self.disjunction()
            self.take(self.PUNCT, ")")
            return inner
        name = _clark(self.take(self.ATTRIBUTE)[1:], self.namespaces)
        if self.peek() != (self.PUNCT, "="):
            return lambda element: element.get(name) is not None
        self.position += 1
        token = self.peek()
        if token is None or token[0] not in (self.SINGLE, self.DOUBLE):
            raise _Unsupported(self.tokens)
        self.position += 1
        value: Any = token[1]
        return lambda element: element.get(name) == value
