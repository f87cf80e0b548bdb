"""The XPaths of one mapper, evaluated together per document.

Most mapping XPaths are unions of child steps (``dc:title``, ``mods:originInfo/mods:publisher``), optionally
with attribute tests (``mods:url[@access='preview' and not(@usage)]``) and a final attribute step
(``mods:accessCondition/@xlink:href``). Those are merged into one tree of steps and answered by a single walk
of the document, in document order as XPath gives them; any other expression is evaluated by lxml.

Three kinds of expression are registered: text (``add``: the strings a rule maps), nodes (``add_nodes``: the
elements a rule's ``each`` iterates over, answered by the same walk) and conditions (``add_condition``: a
rule's ``when``, XPath's ``boolean()``; attribute tests such as ``@code='v' or @code='x'`` are answered
without lxml). ``.`` is the context element's own text, ``@name`` one of its attributes. The expressions
relative to ``each`` items live in a ``child()`` set, selected per item.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from lxml import etree

from ingest_assets.core.xml_input import NAMESPACES

Test = Callable[[etree._Element], bool]

_NAME = r"(?:[A-Za-z_][\w.-]*:)?[A-Za-z_][\w.-]*"
_STEP = re.compile(rf"({_NAME})((?:\[[^\[\]]*\])*)$")
_ATTRIBUTE_STEP = re.compile(rf"@({_NAME})$")
_TOKEN = re.compile(rf"\s*(?:(@{_NAME})|'([^']*)'|\"([^\"]*)\"|(not)\s*\(|(and|or)\b|(=|\(|\)))")


class _Unsupported(Exception):
    """The expression is left to lxml."""


class _Step:
    """One element step of the merged tree: the ids of the text expressions ending here (``ends``), of the node
    expressions ending here (``nodes``), the attribute steps after it (``attributes``: (name, id)) and the
    element steps below it (``children``)."""

    __slots__ = ("ends", "nodes", "attributes", "children")

    def __init__(self) -> None:
        self.ends: list[int] = []
        self.nodes: list[int] = []
        self.attributes: list[tuple[str, int]] = []
        self.children: dict[str, list[tuple[str, Test | None, _Step]]] = {}


class Paths:
    """Register expressions with ``add`` (compiled once); ``select(root)`` answers all of them for a document.
    ``namespaces`` maps the prefixes the expressions may use (default: ``xml_input.NAMESPACES``)."""

    KEY = "xpath"  # the rule key that holds these expressions

    SELF = "."  # the context element's own text

    def __init__(self, namespaces: dict[str, str] | None = None) -> None:
        self.namespaces = NAMESPACES if namespaces is None else namespaces
        self._ids: dict[tuple[str, str], int] = {}
        self._xpaths: dict[int, etree.XPath] = {}
        self._tests: dict[int, Test] = {}  # conditions answered by attribute tests
        self._own: list[tuple[int, str | None]] = []  # (id, attribute name or None: the text) of the context
        self._top = _Step()

    @property
    def hint(self) -> str:
        """What expressions may use, for error messages."""
        return f"prefixes: {sorted(self.namespaces)}"

    def child(self) -> Paths:
        """An empty set with the same prefixes, for expressions relative to ``each`` items."""
        return Paths(self.namespaces)

    def add(self, expr: str) -> int:
        """The id of text expression ``expr`` (raises ``etree.XPathError``/``TypeError`` when lxml rejects it)."""
        own = expr.strip()
        match = _ATTRIBUTE_STEP.match(own)
        if own == self.SELF or match:
            if ("text", own) not in self._ids:
                self._own.append((self._new(("text", own)), _clark(match.group(1), self.namespaces) if match else None))
            return self._ids[("text", own)]
        return self._register("text", expr, expr)

    def add_nodes(self, expr: str) -> int:
        """The id of node expression ``expr``: the elements it selects, in document order."""
        return self._register("nodes", expr, expr)

    def add_condition(self, expr: str) -> int:
        """The id of condition ``expr``: XPath's ``boolean()`` of it."""
        key = self._register("condition", expr, f"boolean({expr})")
        try:
            self._tests[key] = _test(expr, self.namespaces)
        except _Unsupported:
            pass
        return key

    def select(self, root: etree._Element, record: etree._Element | None = None) -> Selection:
        """The answers for the document (or ``each`` item) ``root``; ``record`` is the whole record, whose OAI-PMH
        header rules may read (default: ``root``)."""
        texts: dict[int, list] = {}
        if self._top.children:
            _walk(root, self._top.children, texts)
        for key, attribute in self._own:
            texts[key] = strings([root] if attribute is None else [root.get(attribute) or ""])
        return Selection(root, root if record is None else record, texts, self._xpaths, self._tests)

    def _new(self, ident: tuple[str, str]) -> int:
        key = len(self._ids)
        self._ids[ident] = key
        return key

    def _register(self, kind: str, expr: str, source: str) -> int:
        xpath = etree.XPath(source, namespaces=self.namespaces, smart_strings=False)
        xpath(etree.Element("probe"))  # unknown prefixes and functions only show on evaluation
        if (kind, expr) in self._ids:
            return self._ids[(kind, expr)]
        key = self._new((kind, expr))
        try:
            if kind == "condition":
                raise _Unsupported(expr)
            self._merge(_alternatives(expr, self.namespaces), key, nodes=kind == "nodes")
        except _Unsupported:
            self._xpaths[key] = xpath
        return key

    def _merge(self, alternatives: list[tuple[list[tuple[str, str, Test | None]], str | None]], key: int,
               nodes: bool = False) -> None:
        _check_mergeable(alternatives, nodes)
        for steps, attribute in alternatives:
            node = self._top
            for tag, source, test in steps:
                branches = node.children.setdefault(tag, [])
                node = next((child for branch_source, _, child in branches if branch_source == source), None)
                if node is None:
                    node = _Step()
                    branches.append((source, test, node))
            ends = node.nodes if nodes else node.ends
            if attribute is None:
                if key not in ends:
                    ends.append(key)
            elif (attribute, key) not in node.attributes:
                node.attributes.append((attribute, key))


def _check_mergeable(alternatives: list[tuple[list[tuple[str, str, Test | None]], str | None]], nodes: bool) -> None:
    """Within one union, two alternatives may not reach the same element through different tests (the walk would
    give it twice or out of document order), nor take two attributes of one element (XPath orders those as the
    document does); a node expression takes no attributes."""
    attributes: dict[tuple, set[str]] = {}
    for steps, attribute in alternatives:
        for other, _ in alternatives:
            for depth in range(1, min(len(steps), len(other)) + 1):
                tags = [step[0] for step in steps[:depth]] == [step[0] for step in other[:depth]]
                if tags and [step[:2] for step in steps[:depth]] != [step[:2] for step in other[:depth]]:
                    raise _Unsupported(steps)
        if attribute is not None:
            attributes.setdefault(tuple(step[:2] for step in steps), set()).add(attribute)
    if any(len(names) > 1 for names in attributes.values()) or (nodes and attributes):
        raise _Unsupported(attributes)


class Selection:
    """The answers for one document (or ``each`` item): ``strings(id)`` is :func:`strings` of the XPath's result,
    ``nodes(id)`` its elements, ``holds(id)`` a condition's truth, ``header(name)`` the texts of the record's
    OAI-PMH header children called ``name`` (in any namespace: ``identifier``, ``datestamp``, ``setSpec``)."""

    __slots__ = ("_root", "_record", "_texts", "_xpaths", "_tests")

    def __init__(self, root: etree._Element, record: etree._Element, texts: dict[int, list],
                 xpaths: dict[int, etree.XPath], tests: dict[int, Test]):
        self._root = root
        self._record = record
        self._texts = texts
        self._xpaths = xpaths
        self._tests = tests

    @property
    def record(self) -> etree._Element:
        return self._record

    def strings(self, key: int) -> list[str]:
        texts = self._texts.get(key)
        if texts is not None:
            return list(texts)
        xpath = self._xpaths.get(key)
        return strings(xpath(self._root)) if xpath is not None else []

    def nodes(self, key: int) -> list[etree._Element]:
        found = self._texts.get(key)
        if found is None:
            xpath = self._xpaths.get(key)
            found = xpath(self._root) if xpath is not None else []
            found = [item for item in found if isinstance(item, etree._Element)] if isinstance(found, list) else []
        return found

    def holds(self, key: int) -> bool:
        test = self._tests.get(key)
        return bool(test(self._root) if test is not None else self._xpaths[key](self._root))

    def header(self, name: str) -> list[str]:
        header = next((child for child in self._record.iterchildren(etree.Element) if _local(child.tag) == "header"),
                      None)
        if header is None:
            return []
        return strings([child for child in header.iterchildren(etree.Element) if _local(child.tag) == name])


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


def strings(results: object) -> list[str]:
    """Non-empty stripped strings from an XPath result (elements, attributes, text nodes or a scalar string)."""
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


def _walk(parent: etree._Element, children: dict[str, list], texts: dict[int, list]) -> None:
    """Collect, per expression id, the stripped non-empty strings :func:`strings` makes of the nodes (or, for
    node expressions, the elements themselves)."""
    for element in parent:
        branches = children.get(element.tag)
        if branches is None:
            continue
        text = None
        for _, test, step in branches:
            if test is not None and not test(element):
                continue
            if step.nodes:
                _append(texts, step.nodes, element)
            if step.ends:
                if text is None:
                    text = element.text if len(element) == 0 else "".join(element.itertext())
                    text = text.strip() if text else ""
                if text:
                    _append(texts, step.ends, text)
            if step.attributes:
                _attributes(element, step.attributes, texts)
            if step.children:
                _walk(element, step.children, texts)


def _append(texts: dict[int, list], keys: list[int], value: Any) -> None:
    for key in keys:
        if key in texts:
            texts[key].append(value)
        else:
            texts[key] = [value]


def _attributes(element: etree._Element, attributes: list[tuple[str, int]], texts: dict[int, list]) -> None:
    for name, key in attributes:
        value = element.get(name)
        if value:
            value = value.strip()
            if value:
                _append(texts, [key], value)


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
