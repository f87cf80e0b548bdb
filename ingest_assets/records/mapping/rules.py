"""Field rules compiled: a checked rule (``model.RuleSpec``) becomes a function ``selection -> values``, its
expressions registered in the mapper's path set (answered for every record by one walk, ``paths.py``).

Values are strings, or :class:`Structured` values (a label with sub-properties) from rules with ``each`` and
sub-properties. Filters that act on one value at a time (split, clean, replace, exclude, pattern, map, lookup) act
on a structured value's label and keep its sub-properties; ``join``, ``unique`` and ``index``/``first``/``slice``
act on the rule's list of values.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Protocol

from lxml import etree

from ingest_assets.core.errors import ConfigError
from ingest_assets.records.mapping.cleaning import CLEANERS
from ingest_assets.records.mapping.fields import FIELDS, SUB_PROPERTIES
from ingest_assets.records.mapping.model import RuleSpec, validate_rule
from ingest_assets.records.mapping.vocabularies import Vocabulary, key

Value = Any  # str | Structured
Rule = Callable[[Any], list[Value]]
ValueStep = Callable[[str], list[str]]
ListStep = Callable[[list[Value]], list[Value]]


@dataclass(frozen=True, slots=True)
class Structured:
    """A value with sub-properties (``{"inScheme": "http://...", "exactMatch": [...]}``)."""

    label: str
    properties: Mapping[str, Any]


class Refused(Exception):
    """A rule's value that refuses the record (``refuse``, ``refuse_terms``): the mapper maps nothing of it."""

    def __init__(self, value: str, reason: str):
        super().__init__(reason)
        self.value = value
        self.reason = reason
        self.field = ""  # the mapper names it


def label(value: Value) -> str:
    return value.label if isinstance(value, Structured) else value


class PathSet(Protocol):
    """``paths.Paths`` (XPath) or ``json_paths.JsonPaths`` (JMESPath)."""

    KEY: str
    SELF: str

    @property
    def hint(self) -> str: ...

    def child(self, each: str | None = None) -> PathSet: ...

    def add(self, expr: str) -> int: ...

    def add_nodes(self, expr: str) -> int: ...

    def add_condition(self, expr: str) -> int: ...

    def over(self, key: str) -> PathSet: ...


def compile_rule(spec: Any, *, field: str, paths: PathSet, source: str,
                 vocabularies: Mapping[str, Vocabulary] | None = None) -> Rule:
    """Check ``spec`` (a field's rule or list of rules) against the model, then compile it; a ConfigError names
    the field and the key. The function's ``structured`` attribute says whether it may give :class:`Structured`
    values (else it gives strings only)."""
    checked = validate_rule(spec, field=field, source=source)
    rule = _Compiler(paths, field, vocabularies or {}).rule(checked)
    rule.structured = _structured(checked)  # type: ignore[attr-defined]
    return rule


def _structured(spec: RuleSpec | list[RuleSpec]) -> bool:
    """Whether ``spec`` may give structured values: an ``each`` with sub-properties, here or in a part it passes on."""
    if isinstance(spec, list):
        return any(_structured(one) for one in spec)
    if spec.each is not None and spec.sub_properties():
        return True
    parts = [*(spec.first_of or ()), *(spec.all_of or ())]
    return any(_structured(part) for part in parts) and spec.join is None


class _Compiler:
    """Compiles the rules of one field against one path set (the record's, or an ``each`` item's)."""

    def __init__(self, paths: PathSet, field: str, vocabularies: Mapping[str, Vocabulary]):
        self.paths = paths
        self.field = field
        self.vocabularies = vocabularies

    def fail(self, reason: str) -> ConfigError:
        return ConfigError(f"mapping rule for {self.field!r}: {reason}")

    def rule(self, spec: RuleSpec | list[RuleSpec]) -> Rule:
        if isinstance(spec, list):
            return _concatenated([self.rule(one) for one in spec])
        return self._each(spec) if spec.each is not None else self._plain(spec, self_text=False)

    def _plain(self, spec: RuleSpec, self_text: bool) -> Rule:
        source = self._source(spec, self_text)
        rule = _assembled(source, _value_steps(spec, self), _list_steps(spec), self._condition(spec.when),
                          tuple(spec.default or ()))
        return rule if spec.refuse is None and spec.refuse_terms is None else _refusing(rule, spec, self)

    def _each(self, spec: RuleSpec) -> Rule:
        items = self._expressions("each", [spec.each], self.paths.add_nodes)[0]
        inner = _Compiler(self.paths.child(spec.each), self.field, self.vocabularies)
        per_item = inner._plain(spec.model_copy(update={"default": None}), self_text=True)
        default = tuple(spec.default or ())  # the rule's, when no item gives a value
        lists = SUB_PROPERTIES.get(FIELDS[self.field][1], {}) if self.field in FIELDS else {}
        properties = {name: (inner.rule(sub), lists.get(name, False)) for name, sub in spec.sub_properties().items()}
        child = inner.paths

        def rule(found: Any) -> list[Value]:
            nodes = found.nodes(items)
            if not nodes:
                return list(default)
            out: list[Value] = []
            record = found.record
            for item in nodes:
                selection = child.select(item, record)
                values = per_item(selection)
                if values and properties:
                    values = _described(values, selection, properties)
                out.extend(values)
            return out or list(default)

        return rule

    def _source(self, spec: RuleSpec, self_text: bool) -> Rule | int:
        """The rule giving the values the filters take, or the id of the one expression that gives them."""
        exprs = spec.xpath or spec.path
        if exprs is not None:
            key = "xpath" if spec.xpath is not None else "path"  # a profile with embedded XML takes both
            return _first_giving(self._expressions(key, exprs, lambda expr: self.paths.over(key).add(expr)))
        if spec.value is not None:
            return _constant(spec.value)
        if spec.header is not None:
            name = spec.header
            return lambda found: found.header(name)
        if spec.first_of is not None:
            return _first_of([self.rule(part) for part in spec.first_of])
        if spec.all_of is not None:
            return _concatenated([self.rule(part) for part in spec.all_of])
        if spec.concat is not None:
            return _concat([self.rule(part) for part in spec.concat], spec.separator)
        if spec.zip is not None:
            return _zip([self.rule(part) for part in spec.zip], spec.separator)
        if self_text:
            return _first_giving(self._expressions(self.paths.KEY, [self.paths.SELF], self.paths.add))
        return lambda _found: []  # only a default

    def _condition(self, when: str | RuleSpec | None) -> int | Rule | None:
        """An expression's id, or a rule (the condition holds when it gives a value)."""
        if when is None or isinstance(when, RuleSpec):
            return None if when is None else self.rule(when)
        return self._expressions("when", [when], self.paths.add_condition)[0]

    def _expressions(self, name: str, exprs: list[str], add: Callable[[str], int]) -> list[int]:
        try:
            return [add(expr) for expr in exprs]
        except (ValueError, TypeError, etree.XPathError) as exc:
            raise self.fail(f"bad {name} {exprs if len(exprs) > 1 else exprs[0]!r}: {exc} ({self.paths.hint})") from None

    def vocabulary(self, name: str, kind: str) -> Vocabulary:
        found = self.vocabularies.get(name)
        if found is None:
            raise self.fail(f"unknown vocabulary {name!r} (known: {sorted(self.vocabularies)})")
        if getattr(found, kind) is None:
            raise self.fail(f"vocabulary {name!r} holds no {kind}")
        return found


# ---- sources ----------------------------------------------------------------------------------------------

def _concatenated(parts: list[Rule]) -> Rule:
    return lambda found: [value for part in parts for value in part(found)]


def _first_giving(keys: list[int]) -> Rule | int:
    """The values of the first expression that gives any (one expression: its id)."""
    if len(keys) == 1:
        return keys[0]

    def source(found: Any) -> list[Value]:
        for k in keys:
            values = found.strings(k)
            if values:
                return values
        return []

    return source


def _constant(values: list[str]) -> Rule:
    """The values as written (a separator such as ', ' keeps its space)."""
    constants = list(values)
    return lambda _found: list(constants)


def _first_of(parts: list[Rule]) -> Rule:
    def source(found: Any) -> list[Value]:
        for part in parts:
            values = part(found)
            if values:
                return values
        return []

    return source


def _concat(parts: list[Rule], separator: str) -> Rule:
    def source(found: Any) -> list[Value]:
        pieces = [separator.join(map(label, values)) for part in parts if (values := part(found))]
        joined = separator.join(pieces)
        return [joined] if joined.strip() else []

    return source


def _zip(parts: list[Rule], separator: str) -> Rule:
    """The n-th values of the parts joined, for each n up to the longest part (a part that ran out gives none)."""
    def source(found: Any) -> list[Value]:
        lists = [[label(value) for value in part(found)] for part in parts]
        rows = (separator.join(values[n] for values in lists if n < len(values)) for n in range(max(map(len, lists))))
        return [row for row in rows if row.strip()]

    return source


def _described(labels: list[Value], selection: Any, properties: dict[str, tuple[Rule, bool]]) -> list[Value]:
    described = {}
    for name, (rule, many) in properties.items():
        values = [label(value) for value in rule(selection)]
        described[name] = values if many else values[0] if values else None
    return [Structured(label(value), described) for value in labels]


# ---- filters ----------------------------------------------------------------------------------------------

def _assembled(source: Rule | int, value_steps: list[ValueStep], list_steps: list[ListStep],
               condition: int | Rule | None, default: tuple[str, ...]) -> Rule:
    key = source if isinstance(source, int) else None  # one expression: read here, with no frame of its own
    if not value_steps and not list_steps and condition is None and not default:
        return source if key is None else lambda found: found.strings(key)
    holds = (lambda found: found.holds(condition)) if isinstance(condition, int) else condition
    each = _each_value(value_steps) if value_steps else None

    def rule(found: Any) -> list[Value]:
        if holds is not None and not holds(found):
            return []
        values = found.strings(key) if key is not None else source(found)  # type: ignore[operator]
        if not values:  # the filters give nothing of nothing
            return list(default)
        if each is not None:
            values = each(values)
        for list_step in list_steps:
            values = list_step(values)
        return values or list(default)

    return rule


def _refusing(rule: Rule, spec: RuleSpec, compiler: _Compiler) -> Rule:
    """``rule``, raising :class:`Refused` when one of its values matches ``refuse`` or is a ``refuse_terms`` term."""
    regex = None if spec.refuse is None else re.compile(spec.refuse)
    vocabularies = [(name, compiler.vocabulary(name, "terms").terms) for name in spec.refuse_terms or ()]

    def refusing(found: Any) -> list[Value]:
        values = rule(found)
        for value in values:
            text = label(value)
            if regex is not None and regex.search(text):
                raise Refused(text, f"the profile refuses records whose value matches {spec.refuse!r}")
            for name, terms in vocabularies:
                if key(text) in terms:
                    raise Refused(text, f"the profile refuses records with a value of vocabulary {name!r}")
        return values

    return refusing


def _each_value(steps: list[ValueStep]) -> ListStep:
    """The one-value filters as one step over a rule's list: each filter in turn over every value (a structured
    value's label, its sub-properties kept), in one Python frame per rule."""
    def each(values: list[Value]) -> list[Value]:
        for step in steps:
            out: list[Value] = []
            for value in values:
                if isinstance(value, Structured):
                    out.extend(Structured(new, value.properties) for new in step(value.label))
                else:
                    out += step(value)
            values = out
        return values

    return each


def _value_steps(spec: RuleSpec, compiler: _Compiler) -> list[ValueStep]:
    """The one-value filters of ``spec``, in the order they apply."""
    steps = []
    if spec.split is not None:
        steps.append(_split(spec.split))
    steps.extend(_cleaner(name) for name in spec.clean or ())
    if spec.replace is not None:
        steps.append(_replacing([(re.compile(pattern), text) for pattern, text in spec.replace.items()]))
    if spec.pattern is not None:
        steps.append(_matching(re.compile(spec.pattern), spec.template, spec.all_matches))
    if spec.exclude is not None:
        steps.append(_excluding(re.compile(spec.exclude)))
    for name in spec.exclude_terms or ():
        steps.append(_terms(compiler.vocabulary(name, "terms").terms, keep=False))
    for name in spec.keep_terms or ():
        steps.append(_terms(compiler.vocabulary(name, "terms").terms, keep=True))
    table = _table(spec, compiler)
    if table is not None:
        steps.append(table)
    return steps


def _list_steps(spec: RuleSpec) -> list[ListStep]:
    steps: list[ListStep] = []
    if spec.join is not None:
        separator = spec.join
        steps.append(lambda values: [separator.join(map(label, values))] if values else [])
    if spec.unique:
        steps.append(_unique)
    index = 0 if spec.first else spec.index
    if index is not None:
        steps.append(itemgetter(slice(index, index + 1 or None)))  # [values[index]], or [] when it has none
    elif spec.slice is not None:
        start, stop = spec.slice
        steps.append(itemgetter(slice(start, stop)))
    return steps


def _unique(values: list[Value]) -> list[Value]:
    """The first of equal values, in order."""
    seen: set[str] = set()
    out = []
    for value in values:
        text = label(value)
        if text not in seen:
            seen.add(text)
            out.append(value)
    return out


def _split(delimiters: list[str]) -> ValueStep:
    """Parts between any of the delimiters, trimmed, empty ones dropped."""
    delimiter = delimiters[0] if len(delimiters) == 1 else None
    regex = re.compile("|".join(map(re.escape, delimiters)))

    def step(value: str) -> list[str]:
        # a plain loop: measured cheaper per value than a comprehension's frame or filter/map objects
        if delimiter is None:
            pieces = regex.split(value)
        elif delimiter in value:
            pieces = value.split(delimiter)
        else:  # one part: no list of parts to build
            value = value.strip()
            return [value] if value else []
        parts = []
        for piece in pieces:
            piece = piece.strip()
            if piece:
                parts.append(piece)
        return parts

    return step


def _cleaner(name: str) -> ValueStep:
    clean = CLEANERS[name]

    def step(value: str) -> list[str]:
        value = clean(value).strip()
        return [value] if value else []

    return step


def _replacing(replacements: list[tuple[re.Pattern, str]]) -> ValueStep:
    """Every match of each pattern, in turn, replaced by its text as written (no group references)."""
    def step(value: str) -> list[str]:
        for regex, text in replacements:
            value = regex.sub(lambda _match: text, value)
        value = value.strip()
        return [value] if value else []

    return step


def _excluding(regex: re.Pattern) -> ValueStep:
    return lambda value: [] if regex.search(value) else [value]


def _terms(terms: frozenset[str], keep: bool) -> ValueStep:
    return lambda value: [value] if (key(value) in terms) is keep else []


def _matching(regex: re.Pattern, template: str | None, every: bool) -> ValueStep:
    named = bool(regex.groupindex)

    def made(match: re.Match) -> str:
        if not template:
            return match.group(0).strip()
        # a group that took no part is empty
        return template.format(*match.groups(""), **(match.groupdict("") if named else {})).strip()

    if every:
        return lambda value: [text for match in regex.finditer(value) if (text := made(match))]

    def step(value: str) -> list[str]:
        match = regex.search(value)
        if match is None:
            return []
        text = made(match) if template else value
        return [text] if text else []

    return step


def _table(spec: RuleSpec, compiler: _Compiler) -> ValueStep | None:
    """``map``, ``map_patterns`` or ``lookup`` (with ``unlisted: keep`` a value not listed passes unchanged)."""
    keep = spec.unlisted == "keep"
    if spec.map is not None:
        return _lookup({key(k): v for k, v in spec.map.items()}, keep)
    if spec.lookup is not None:
        return _lookup(compiler.vocabulary(spec.lookup, "table").table, keep)
    if spec.map_patterns is not None:
        patterns = [(re.compile(pattern), value) for pattern, value in spec.map_patterns.items()]

        def step(value: str) -> list[str]:
            found = next((new for regex, new in patterns if regex.search(value)), None)
            return [found] if found is not None else [value] if keep else []

        return step
    return None


def _lookup(table: Mapping[str, str], keep: bool) -> ValueStep:
    def step(value: str) -> list[str]:
        found = table.get(key(value))
        return [found] if found is not None else [value] if keep else []

    return step
