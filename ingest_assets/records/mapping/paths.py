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

A condition may also read below the element without lxml: a relative path (``mods:role/mods:roleTerm``,
``(a | b)[test]``) holds when it reaches an element, and ``path = 'text'``, ``. = 'text'`` or
``normalize-space(.) = 'text'`` compare string values as XPath does (a MARC field's
``not(marc:subfield[@code='e'] = 'aut')``, decided per field with no XPath call). A path whose steps carry such
tests is left to lxml (see :func:`_check_mergeable`); ``(a | b)[test]`` with attribute tests is walked as
``a[test] | b[test]``.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from lxml import etree

from ingest_assets.core.xml_input import NAMESPACES

Test = Callable[[etree._Element], bool]

_NAME = r"(?:[A-Za-z_][\w.-]*:)?[A-Za-z_][\w.-]*"
_NAME_AT = re.compile(_NAME)
_ATTRIBUTE_STEP = re.compile(rf"@({_NAME})$")
_TOKEN = re.compile(
    rf"\s*(?:(@{_NAME}|@\*)|'([^']*)'|\"([^\"]*)\"|(not)\s*\(|(and|or)\b|(!=|<=|>=|=|<|>|\(|\)|\|)|(\d+(?:\.\d+)?)"
    rf"|(normalize-space)\s*\(\s*\.?\s*\)|(\.)(?![\w.])|({_NAME})(?![\w.:-]*\s*\())"
)
_XML_SPACE = re.compile(r"[ \t\r\n]+")
_XPATH_NUMBER = re.compile(r"\s*-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?\s*$")
_COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "=": operator.eq,
            "!=": operator.ne}


class _Unsupported(Exception):
    """The expression is left to lxml."""


class _Step:
    """One element step of the merged tree: the ids of the text expressions ending here (``ends``), of the node
    expressions ending here (``nodes``), the attribute steps after it (``attributes``: (name, id)) and the
    element steps below it (``children``: tag -> :class:`_Branches`)."""

    __slots__ = ("ends", "nodes", "attributes", "children")

    def __init__(self) -> None:
        self.ends: list[int] = []
        self.nodes: list[int] = []
        self.attributes: list[tuple[str, int]] = []
        self.children: dict[str, _Branches] = {}

    def compile(self) -> None:
        """Set the ``leaf`` of the branches here and below (once the expressions are registered)."""
        for branches in self.children.values():
            for step in branches.sources.values():
                step.compile()
            only = branches.always[0] if branches.plain and len(branches.always) == 1 else None
            leaf = only is not None and not (only.nodes or only.attributes or only.children)
            branches.leaf = tuple(only.ends) if leaf else None  # type: ignore[union-attr]

    def below(self, tag: str) -> _Branches:
        """The branches of child elements ``tag``."""
        found = self.children.get(tag)
        if found is None:
            found = self.children[tag] = _Branches()
        return found


class _Branches:
    """The steps below one tag, one per distinct test: ``always`` (no test), ``keyed`` (a test that reads only
    attributes: ``@tag='245'``, ``@type='uri' or @displayLabel='uri'``) and ``tested`` (any other test). The keyed
    tests are decided once per combination of the values of the attributes they read (``names``) and remembered
    (at most :data:`_MEMO` combinations), so a MARC record's datafields or a MODS record's identifiers find their
    steps by one lookup. ``leaf`` (set by :meth:`_Step.compile`): when the one step has no test and only takes the
    element's text, the ids it ends (the walk's common case), else None."""

    __slots__ = ("sources", "always", "keyed", "tested", "names", "memo", "plain", "leaf")

    def __init__(self) -> None:
        self.sources: dict[str, _Step] = {}
        self.always: list[_Step] = []
        self.keyed: list[tuple[Test, _Step]] = []
        self.tested: list[tuple[Test, _Step]] = []
        self.names: tuple[str, ...] = ()
        self.memo: dict[Any, list[_Step]] = {}  # the attributes' value (one name) or values (a tuple) -> steps
        self.plain = True  # no tests: every element takes ``always``
        self.leaf: tuple[int, ...] | None = None

    def step(self, source: str, test: Test | None) -> _Step:
        found = self.sources.get(source)
        if found is None:
            found = self.sources[source] = _Step()
            reads = getattr(test, "reads", None)
            if test is None:
                self.always.append(found)
            elif not reads:  # reads more than attributes
                self.tested.append((test, found))
            else:
                self.keyed.append((test, found))
                self.names = tuple(sorted({*self.names, *reads}))
            self.memo.clear()
            self.plain = not self.tested and not self.keyed
        return found

    def matching(self, element: etree._Element) -> list[_Step]:
        """The steps ``element`` takes, in no particular order (no two lead one expression to one element)."""
        if self.plain:
            return self.always
        names = self.names
        if not names:
            steps = self.always
        else:
            key = element.get(names[0]) if len(names) == 1 else tuple(map(element.get, names))
            steps = self.memo.get(key)
            if steps is None:
                steps = [*self.always, *(step for test, step in self.keyed if test(element))]
                if len(self.memo) < _MEMO:
                    self.memo[key] = steps
        if not self.tested:
            return steps
        return [*steps, *(step for test, step in self.tested if test(element))]


_MEMO = 512  # combinations of attribute values remembered per tag


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
        self._compiled = True  # the tree's leaves are filled in (see _Step.compile)
        self._children: dict[str, Paths] = {}  # each expression -> the set of its items' expressions
        self._items: tuple[Any, dict] | None = None  # shared by several rules: (record, item -> its selection)

    @property
    def hint(self) -> str:
        """What expressions may use, for error messages."""
        return f"prefixes: {sorted(self.namespaces)}"

    def over(self, key: str) -> Paths:
        """The set a rule's ``key`` registers its expressions in: this one (the model refuses the other key)."""
        if key != self.KEY:
            raise ValueError(f"expressions here are {self.KEY}, not {key}")
        return self

    def child(self, each: str | None = None) -> Paths:
        """A set with the same prefixes, for expressions relative to the items of ``each``. The rules iterating
        over the same ``each`` (nypl's creator and contributor, both over ``mods:name``) share one set, which then
        selects each item once per record."""
        if each is None:
            return Paths(self.namespaces)
        found = self._children.get(each)
        if found is None:
            found = self._children[each] = Paths(self.namespaces)
        elif found._items is None:
            found._items = (None, {})
        return found

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
        """The id of condition ``expr``: XPath's ``boolean()`` of it. Attribute tests are decided on the element,
        a path (``mods:namePart[not(@*)]``) by whether the walk finds a node; anything else by lxml."""
        try:  # a path the walk can follow is answered by the walk
            _check_mergeable(_alternatives(expr, self.namespaces), nodes=True)
        except _Unsupported:
            pass
        else:
            return self._register("exists", expr, f"boolean({expr})")
        try:
            test = _test(expr, self.namespaces)
        except _Unsupported:
            return self._register("exists", expr, f"boolean({expr})")
        key = self._register("condition", expr, f"boolean({expr})")
        self._tests[key] = test
        return key

    def select(self, root: etree._Element, record: etree._Element | None = None) -> Selection:
        """The answers for the document (or ``each`` item) ``root``; ``record`` is the whole record, whose OAI-PMH
        header rules may read (default: ``root``)."""
        items = self._items
        if items is not None and record is not None:  # an item several rules read: selected once per record
            if items[0] is not record:
                items = self._items = (record, {})
            found = items[1].get(root)  # the item is held as the key: the same element gives the same object
            if found is not None:
                return found
        texts: dict[int, list] = {}
        if not self._compiled:
            self._top.compile()
            self._compiled = True
        if self._top.children:
            _walk(root, self._top, texts)
        for key, attribute in self._own:
            text = (root.text if len(root) == 0 else "".join(root.itertext())) if attribute is None else root.get(attribute)
            text = text.strip() if text else ""
            texts[key] = [text] if text else []
        selection = Selection(root, root if record is None else record, texts, self._xpaths, self._tests)
        if items is not None and record is not None:
            items[1][root] = selection
        return selection

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
            self._merge(_alternatives(expr, self.namespaces), key, nodes=kind in ("nodes", "exists"))
        except _Unsupported:
            self._xpaths[key] = xpath
        return key

    def _merge(self, alternatives: list[tuple[list[tuple[str, str, Test | None]], str | None]], key: int,
               nodes: bool = False) -> None:
        _check_mergeable(alternatives, nodes)
        self._compiled = False
        for steps, attribute in alternatives:
            node = self._top
            for tag, source, test in steps:
                node = node.below(tag).step(source, test)
            ends = node.nodes if nodes else node.ends
            if attribute is None:
                if key not in ends:
                    ends.append(key)
            elif (attribute, key) not in node.attributes:
                node.attributes.append((attribute, key))


def _check_mergeable(alternatives: list[tuple[list[tuple[str, str, Test | None]], str | None]], nodes: bool) -> None:
    """Within one union, two alternatives may not reach the same element through different tests (the walk would
    give it twice or out of document order), nor take two attributes of one element (XPath orders those as the
    document does); a node expression takes no attributes. Steps whose tests read below the element are left to
    lxml (measured: one XPath call selects MODS names by role faster than a Python descent per name)."""
    attributes: dict[tuple, set[str]] = {}
    if any(getattr(test, "below", False) for steps, _ in alternatives for _, _, test in steps):
        raise _Unsupported(alternatives)  # a descent per element: lxml selects such lists faster
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
        if test is not None:
            return bool(test(self._root))
        xpath = self._xpaths.get(key)
        return bool(xpath(self._root)) if xpath is not None else bool(self._texts.get(key))

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


def _walk(parent: etree._Element, node: _Step, texts: dict[int, list]) -> None:
    """Collect, per expression id, the stripped non-empty strings :func:`strings` makes of the nodes (or, for
    node expressions, the elements themselves)."""
    # the hottest loop of mapping: once per element of every record, so its common case is written out here (a
    # leaf: an untested tag whose step only takes the element's text) rather than called
    children = node.children
    for element in parent:
        branches = children.get(element.tag)
        if branches is None:
            continue
        ends = branches.leaf
        if ends is None:
            _take(element, branches, texts)
            continue
        text = element.text if len(element) == 0 else "".join(element.itertext())
        if text:
            text = text.strip()
            if text:
                for key in ends:
                    found = texts.get(key)
                    if found is None:
                        texts[key] = [text]
                    else:
                        found.append(text)


def _take(element: etree._Element, branches: _Branches, texts: dict[int, list]) -> None:
    """What the steps ``element`` takes collect: the element, its text, attributes, and what is below it."""
    text = None
    for step in branches.always if branches.plain else branches.matching(element):
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
            _walk(element, step, texts)


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
    """``a/b[test] | c/@d`` -> per alternative its element steps (tag, test source, test) and final attribute;
    ``(a | b)[test]/c`` is read as ``a[test]/c | b[test]/c`` (tests are never positional here)."""
    out = []
    for alternative in _split(expr, "|"):
        alternative = alternative.strip()
        if alternative.startswith("("):
            end = _closing(alternative, 0)
            rest = alternative[end:]
            if rest and rest[0] not in "[/":
                raise _Unsupported(alternative)
            out.extend(_alternatives(" | ".join(part.strip() + rest for part in _split(alternative[1:end - 1], "|")),
                                     namespaces))
            continue
        parts = [part.strip() for part in _split(alternative, "/")]
        attribute = None
        if parts and (match := _ATTRIBUTE_STEP.match(parts[-1])):
            attribute = _clark(match.group(1), namespaces)
            parts.pop()
        if not parts:
            raise _Unsupported(alternative)
        steps = []
        for part in parts:
            match = _NAME_AT.match(part)
            if match is None:
                raise _Unsupported(part)
            source = part[match.end():]
            tests = [_test(predicate, namespaces) for predicate in _predicates(source)]
            steps.append((_clark(match.group(), namespaces), source, _all(tests) if tests else None))
        out.append((steps, attribute))
    return out


def _predicates(source: str) -> list[str]:
    """``[a][b]`` -> ``['a', 'b']`` (brackets may nest); anything else is left to lxml."""
    found, position = [], 0
    while position < len(source):
        if source[position] != "[":
            raise _Unsupported(source)
        end = _closing(source, position)
        found.append(source[position + 1:end - 1])
        position = end
    return found


def _closing(text: str, start: int) -> int:
    """The index after the bracket or parenthesis closing the one at ``start`` (quotes respected)."""
    depth, quote = 0, None
    for position in range(start, len(text)):
        char = text[position]
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
            if depth == 0:
                if char != {"[": "]", "(": ")"}[text[start]]:
                    raise _Unsupported(text)
                return position + 1
    raise _Unsupported(text)


def _path_end(source: str, position: int) -> int:
    """The end of the steps that continue a path at ``position`` (``[test]``, ``/name``)."""
    while position < len(source):
        if source[position] == "[":
            position = _closing(source, position)
        elif source[position] == "/" and (match := _NAME_AT.match(source, position + 1)):
            position = match.end()
        else:
            break
    return position


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


def _reading(test: Test, *parts: Test, name: str | None = None) -> Test:
    """``test`` marked with the attributes it reads (``reads``: ``name``, or those its ``parts`` read) when it reads
    nothing else: the walk then decides it once per combination of their values."""
    reads = [frozenset((name,))] if name is not None else [getattr(part, "reads", None) for part in parts]
    if reads and None not in reads:
        test.reads = frozenset().union(*reads)  # type: ignore[attr-defined]
    if any(getattr(part, "below", False) for part in parts):
        test.below = True  # type: ignore[attr-defined]
    return test


def _member(name: str, values: frozenset[str]) -> Test:
    """``@name`` is one of ``values`` (``membership`` lets a disjunction or not() merge it)."""
    def test(element: etree._Element) -> bool:
        return element.get(name) in values

    test.membership = (name, values)  # type: ignore[attr-defined]
    return _reading(test, name=name)


def _all(tests: list[Test]) -> Test:
    test = tests[0]
    for other in tests[1:]:
        test = _both(test, other)
    return test


def _both(first: Test, second: Test) -> Test:
    return _reading(lambda element: first(element) and second(element), first, second)


def _either(first: Test, second: Test) -> Test:
    return _reading(lambda element: first(element) or second(element), first, second)


def _test(source: str, namespaces: dict[str, str]) -> Test:
    """A predicate of attribute tests (``@a``, ``@*`` (any attribute), ``@a='v'``, ``@a!='v'``, ``@a >= 500``),
    relative paths (``a/b[test]``, ``(a | b)[test]``, ``a = 'v'``) and string tests (``. = 'v'``,
    ``normalize-space(.) != 'v'``) joined by ``and``/``or``/``not()``/parentheses, with XPath's meaning (a
    comparison with a number compares numbers; a path compared with a string holds when one of its elements'
    string values does)."""
    tokens = []
    position = 0
    source = source.rstrip()
    while position < len(source):
        match = _TOKEN.match(source, position)
        if match is None:
            raise _Unsupported(source)
        kind, text = next((i, value) for i, value in enumerate(match.groups()) if value is not None)
        position = match.end()
        if kind == _Predicate.PATH or (kind, text) == (_Predicate.PUNCT, ")"):
            end = _path_end(source, position)
            if kind == _Predicate.PATH:
                text += source[position:end]
            elif end > position:  # (a | b)[test]/c
                tokens.append((kind, text))
                kind, text = _Predicate.STEPS, source[position:end]
            position = end
        tokens.append((kind, text))
    parser = _Predicate(tokens, namespaces)
    test = parser.disjunction()
    if parser.position != len(tokens):
        raise _Unsupported(source)
    return test


class _Predicate:
    """Recursive descent over the tokens of ``_TOKEN``: (group index, text); ``STEPS`` is what follows a
    parenthesised union (``[test]/c``)."""

    ATTRIBUTE, SINGLE, DOUBLE, NOT, WORD, PUNCT, NUMBER, NORMALIZE, DOT, PATH, STEPS = range(11)

    def __init__(self, tokens: list[tuple[int, str]], namespaces: dict[str, str]):
        self.tokens = tokens
        self.namespaces = namespaces
        self.position = 0
        self.equalities: dict[int, tuple[str, str]] = {}  # id of an equality test -> (attribute, value)

    def peek(self) -> tuple[int, str] | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self, kind: int, text: str | None = None) -> str:
        token = self.peek()
        if token is None or token[0] != kind or (text is not None and token[1] != text):
            raise _Unsupported(self.tokens)
        self.position += 1
        return token[1]

    def disjunction(self) -> Test:
        """``a or b or ...``; equality tests of one attribute (``@tag='600' or @tag='650'``) become one set lookup."""
        tests = [self.conjunction()]
        while self.peek() == (self.WORD, "or"):
            self.position += 1
            tests.append(self.conjunction())
        equalities = {self.equalities.get(id(test)) for test in tests}
        if len(tests) > 1 and None not in equalities and len({name for name, _ in equalities}) == 1:
            name = next(iter(equalities))[0]
            values = frozenset(value for _, value in equalities)
            return _member(name, values)
        test = tests[0]
        for other in tests[1:]:
            test = _either(test, other)
        return test

    def conjunction(self) -> Test:
        """``a and b and ...``; comparisons of one attribute (``@tag >= 500 and @tag != '538'``) read it once."""
        tests = [self.unary()]
        while self.peek() == (self.WORD, "and"):
            self.position += 1
            tests.append(self.unary())
        compared = [getattr(test, "comparison", None) for test in tests]
        if len(tests) > 1 and None not in compared and len({name for name, _, _ in compared}) == 1:
            return _comparisons(compared[0][0], [(compare, value) for _, compare, value in compared])
        return _all(tests)

    def unary(self) -> Test:
        token = self.peek()
        if token is None:
            raise _Unsupported(self.tokens)
        if token[0] == self.NOT:
            self.position += 1
            inner = self.disjunction()
            self.take(self.PUNCT, ")")
            membership = getattr(inner, "membership", None)
            if membership is not None:  # not(@code='0' or @code='1' ...): one lookup
                name, values = membership
                return _reading(lambda element: element.get(name) not in values, name=name)
            return _reading(lambda element: not inner(element), inner)
        if token == (self.PUNCT, "("):
            union = self.parenthesised_union()
            if union is not None:
                return self.reaching(union)
            self.position += 1
            inner = self.disjunction()
            self.take(self.PUNCT, ")")
            return inner
        if token[0] in (self.PATH, self.NORMALIZE, self.DOT):
            return self.below(token[0])
        return self.attribute()

    def attribute(self) -> Test:
        """``@name``, ``@*``, or ``@name`` compared with a string or a number."""
        given = self.take(self.ATTRIBUTE)[1:]
        comparison = self.peek()
        if given == "*":  # @*: the element has an attribute (compared with a value, it is left to lxml)
            if comparison is not None and comparison[0] == self.PUNCT and comparison[1] in _COMPARE:
                raise _Unsupported(self.tokens)
            return lambda element: len(element.attrib) > 0
        name = _clark(given, self.namespaces)
        if comparison is None or comparison[0] != self.PUNCT or comparison[1] not in _COMPARE:
            return _reading(lambda element: element.get(name) is not None, name=name)
        self.position += 1
        token = self.peek()
        if token is None or token[0] not in (self.SINGLE, self.DOUBLE, self.NUMBER):
            raise _Unsupported(self.tokens)
        self.position += 1
        value: Any = token[1]
        if token[0] == self.NUMBER or comparison[1] not in ("=", "!="):
            return _comparisons(name, [(_COMPARE[comparison[1]], _number(value))])
        if comparison[1] == "!=":
            return _comparisons(name, [(operator.ne, value)])
        test = _member(name, frozenset((value,)))
        self.equalities[id(test)] = (name, value)
        return test

    def below(self, kind: int) -> Test:
        """A path test, or a test of the element's own string value."""
        if kind == self.PATH:
            return self.reaching(self.union())
        self.position += 1
        operator_, value = self.string_comparison()
        return _string_test(operator_, value, normalize=kind == self.NORMALIZE)

    def union(self) -> str:
        """``a | b/c[test] | ...``"""
        paths = [self.take(self.PATH)]
        while self.peek() == (self.PUNCT, "|"):
            self.position += 1
            paths.append(self.take(self.PATH))
        return " | ".join(paths)

    def parenthesised_union(self) -> str | None:
        """``(a | b)[test]``, or None when the parenthesis groups tests."""
        start = self.position
        try:
            self.take(self.PUNCT, "(")
            union = self.union()
            self.take(self.PUNCT, ")")
        except _Unsupported:
            self.position = start
            return None
        token = self.peek()
        steps = ""
        if token is not None and token[0] == self.STEPS:
            steps = token[1]
            self.position += 1
        return f"({union}){steps}"

    def string_comparison(self) -> tuple[str, str]:
        """``= 'text'`` or ``!= 'text'`` (anything else is left to lxml)."""
        comparison = self.peek()
        if comparison not in ((self.PUNCT, "="), (self.PUNCT, "!=")):
            raise _Unsupported(self.tokens)
        self.position += 1
        token = self.peek()
        if token is None or token[0] not in (self.SINGLE, self.DOUBLE):
            raise _Unsupported(self.tokens)
        self.position += 1
        return comparison[1], token[1]

    def reaching(self, union: str) -> Test:
        """A path test: it reaches an element (whose string value, when compared, is or is not the text)."""
        comparison = self.peek()
        compared = None
        if comparison is not None and comparison[0] == self.PUNCT and comparison[1] in _COMPARE:
            compared = self.string_comparison()
        return _path_test(union, compared, tuple(sorted(self.namespaces.items())))


@lru_cache(maxsize=1024)
def _path_test(union: str, compared: tuple[str, str] | None, namespaces: tuple[tuple[str, str], ...]) -> Test:
    """One test object per path test, so that ``P`` and ``not(P)`` (MODS names with and without a role) read an
    element once: the test remembers its last element and answer (the element is held, so it is that node)."""
    alternatives = _alternatives(union, dict(namespaces))
    if any(attribute is not None for _, attribute in alternatives):
        raise _Unsupported(union)
    check = None if compared is None else _string_test(*compared, normalize=False)
    paths = [tuple((tag, test) for tag, _, test in steps) for steps, _ in alternatives]
    last: list[tuple[Any, bool]] = [(None, False)]

    def test(element: etree._Element) -> bool:
        seen, answer = last[0]
        if seen is element:
            return answer
        answer = False
        for path in paths:
            if _reaches(element, path, 0, check):
                answer = True
                break
        last[0] = (element, answer)
        return answer

    test.below = True  # type: ignore[attr-defined]
    return test


def _reaches(element: etree._Element, path: tuple[tuple[str, Test | None], ...], depth: int,
             check: Test | None) -> bool:
    """Whether ``path`` (from step ``depth``) leads from ``element`` to an element that passes ``check``."""
    tag, test = path[depth]
    last = depth + 1 == len(path)
    for child in element.iterchildren(tag):
        if test is not None and not test(child):
            continue
        if last:
            if check is None or check(child):
                return True
        elif _reaches(child, path, depth + 1, check):
            return True
    return False


def _string_test(operator_: str, value: str, normalize: bool) -> Test:
    """The element's string value (with ``normalize``: XPath's normalize-space of it) is (``=``) or is not
    (``!=``) ``value``."""
    equal = operator_ == "="

    def test(element: etree._Element) -> bool:
        text = (element.text or "") if len(element) == 0 else "".join(element.itertext())
        if normalize:
            text = _XML_SPACE.sub(" ", text).strip(" ")
        return (text == value) is equal

    return test


@lru_cache(maxsize=4096)
def _number(text: str | None) -> float:
    """XPath's number() as libxml2 reads it: NaN for what is not one (an absent attribute included). Cached:
    attribute values such as MARC tags recur in every record."""
    return float(text) if text is not None and _XPATH_NUMBER.match(text) else math.nan


def _comparisons(name: str, checks: list[tuple[Callable[[Any, Any], bool], Any]]) -> Test:
    """``@name`` compared with each value, a number as a number, a string as a string (XPath: an absent attribute
    is an empty node-set, for which every comparison is false). ``comparison`` lets a conjunction merge them."""
    def test(element: etree._Element) -> bool:
        given = element.get(name)
        if given is None:
            return False
        number = None
        for compare, value in checks:
            if isinstance(value, str):
                if not compare(given, value):
                    return False
            else:
                if number is None:
                    number = _number(given)
                if not compare(number, value):
                    return False
        return True

    test.comparison = (name, *checks[0]) if len(checks) == 1 else None  # type: ignore[attr-defined]
    return _reading(test, name=name)
