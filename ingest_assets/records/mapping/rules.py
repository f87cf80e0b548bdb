"""Field rules: the small declarative vocabulary shared by profiles and registry overrides.

A field's rule is a mapping with any of these keys, or a list of such mappings whose values are concatenated in
list order (compiled once per provider):
  value     constant string or list of strings (wins over the path)
  xpath     XML profiles: XPath relative to the metadata element, or a list tried in order (first non-empty wins)
  path      JSON profiles: the same with JMESPath expressions, relative to the record's JSON document
  split     delimiter that separates several values in one element (CONTENTdm's ';')
  exclude   regex; values it matches are dropped
  pattern   regex; only values it matches are kept. With ``template`` the value becomes
            ``template.format(*groups, **named_groups)`` (e.g. build a thumbnail URL from an identifier)
  template  see ``pattern``
  map       table of source value -> value (compared case-insensitively); values not in it are dropped
  index     keep only the n-th value (0-based), after the filters
  first     keep only the first value (``index`` wins when both are given)
  default   constant string or list used when nothing else gave a value (a dataProvider a hub sets once)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from lxml import etree

from ingest_assets.core.errors import ConfigError

COMMON_KEYS = frozenset({"value", "split", "pattern", "template", "exclude", "map", "index", "first", "default"})

Rule = Callable[[Any], list[str]]


class PathSet(Protocol):
    """``paths.Paths`` (XPath) or ``json_paths.JsonPaths`` (JMESPath)."""

    KEY: str

    @property
    def hint(self) -> str: ...

    def add(self, expr: str) -> int: ...


def compile_rule(spec: Mapping[str, Any] | list, *, provider: str, field: str, paths: PathSet) -> Rule:
    """Turn a field's rule into a function ``selection of a document -> list of strings``;
    its paths are registered in ``paths``, which answers them for each document."""
    if not isinstance(spec, list):
        return _compile_one(spec, provider=provider, field=field, paths=paths)
    if not spec:
        raise ConfigError(f"mapping rule for {field!r}: an empty list of rules", provider=provider)
    parts = [_compile_one(one, provider=provider, field=field, paths=paths) for one in spec]

    def rule(found: Any) -> list[str]:
        return [value for part in parts for value in part(found)]

    return rule


def _compile_one(spec: Mapping[str, Any], *, provider: str, field: str, paths: PathSet) -> Rule:
    def fail(reason: str) -> ConfigError:
        return ConfigError(f"mapping rule for {field!r}: {reason}", provider=provider)

    key = paths.KEY
    allowed = COMMON_KEYS | {key}
    if not isinstance(spec, Mapping):
        raise fail(f"expected a mapping of {sorted(allowed)}, got {spec!r}")
    unknown = set(spec) - allowed
    if unknown:
        raise fail(f"unknown keys {sorted(unknown)} (allowed: {sorted(allowed)})")
    spec = {k: v for k, v in spec.items() if v is not None}
    if "value" not in spec and key not in spec and "default" not in spec:
        raise fail(f"needs 'value' or '{key}' (or only a 'default')")
    if "template" in spec and "pattern" not in spec:
        raise fail("'template' needs a 'pattern'")

    if "value" in spec:
        values = _constants(spec["value"], "value", fail)

        def source(_found: Any) -> list[str]:
            return list(values)
    elif key not in spec:  # only a default

        def source(_found: Any) -> list[str]:
            return []
    else:
        exprs = spec[key] if isinstance(spec[key], list) else [spec[key]]
        try:
            keys = [paths.add(expr) for expr in exprs]
        except (ValueError, TypeError, etree.XPathError) as exc:
            raise fail(f"bad {key} {spec[key]!r}: {exc} ({paths.hint})") from exc

        def source(found: Any) -> list[str]:
            for k in keys:
                values = found.strings(k)
                if values:
                    return values
            return []

    split = spec.get("split")
    if split is not None and (not isinstance(split, str) or not split):
        raise fail("'split' must be a non-empty string")
    pattern = _regex(spec.get("pattern"), fail)
    template = spec.get("template")
    exclude = _regex(spec.get("exclude"), fail)
    index = spec.get("index", 0 if spec.get("first") else None)
    if template is not None:
        if not isinstance(template, str):
            raise fail("'template' must be a string")
        try:
            template.format(*["x"] * pattern.groups, **{name: "x" for name in pattern.groupindex})
        except (KeyError, IndexError, ValueError) as exc:
            raise fail(f"'template' {template!r} does not fit the pattern's groups: {exc!r}") from exc
    if index is not None and (not isinstance(index, int) or index < 0):
        raise fail("'index' must be a non-negative integer")
    table = spec.get("map")
    if table is not None:
        if not isinstance(table, Mapping) or not table:
            raise fail("'map' must be a non-empty table of value -> value")
        table = {str(k).strip().casefold(): _constants(v, f"map[{k!r}]", fail)[0] for k, v in table.items()}
    default = _constants(spec["default"], "default", fail) if "default" in spec else None

    if not split and exclude is None and pattern is None and table is None and index is None and default is None:
        return source

    def rule(found: Any) -> list[str]:
        values = source(found)
        if split:
            values = [part.strip() for value in values for part in value.split(split)]
            values = [v for v in values if v]
        if exclude is not None:
            values = [v for v in values if not exclude.search(v)]
        if pattern is not None:
            kept = []
            for value in values:
                match = pattern.search(value)
                if match is None:
                    continue
                value = template.format(*match.groups(), **match.groupdict()).strip() if template else value
                if value:
                    kept.append(value)
            values = kept
        if table is not None:
            values = [table[v.casefold()] for v in values if v.casefold() in table]
        if index is not None:
            values = values[index:index + 1]
        return values or list(default or ())

    return rule


def _constants(given: Any, key: str, fail: Callable[[str], ConfigError]) -> list[str]:
    values = [given] if isinstance(given, str) else given
    if not isinstance(values, list) or not values or not all(isinstance(v, str) and v.strip() for v in values):
        raise fail(f"'{key}' must be a non-empty string or list of strings")
    return [v.strip() for v in values]


def _regex(expr: Any, fail: Callable[[str], ConfigError]) -> re.Pattern | None:
    if expr is None:
        return None
    try:
        return re.compile(expr)
    except (re.error, TypeError) as exc:
        raise fail(f"bad regex {expr!r}: {exc}") from exc
