"""Field rules: the small declarative vocabulary shared by named mappings and registry overrides.

A rule is a mapping with any of these keys (compiled once per provider):
  value     constant string or list of strings (wins over xpath)
  xpath     XPath relative to the metadata element, or a list tried in order (first non-empty wins)
  split     delimiter that separates several values in one element (CONTENTdm's ';')
  pattern   regex; only values it matches are kept. With ``template`` the value becomes
            ``template.format(*groups, **named_groups)`` (e.g. build a thumbnail URL from an identifier)
  template  see ``pattern``
  exclude   regex; values it matches are dropped
  index     keep only the n-th value (0-based), after the filters
  first     keep only the first value (``index`` wins when both are given)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from lxml import etree

from ingest_assets.errors import ConfigError
from ingest_assets.records.mapping.paths import Paths, Selection
from ingest_assets.records.mapping.xml import NAMESPACES

RULE_KEYS = frozenset({"value", "xpath", "split", "pattern", "template", "exclude", "index", "first"})

Rule = Callable[[Selection], list[str]]


def compile_rule(spec: Mapping[str, Any], *, provider: str, field: str, paths: Paths) -> Rule:
    """Turn one rule mapping into a function ``selection of a metadata element -> list of strings``;
    its XPaths are registered in ``paths``, which answers them for each document."""

    def fail(reason: str) -> ConfigError:
        return ConfigError(f"mapping rule for {field!r}: {reason}", provider=provider)

    if not isinstance(spec, Mapping):
        raise fail(f"expected a mapping of {sorted(RULE_KEYS)}, got {spec!r}")
    unknown = set(spec) - RULE_KEYS
    if unknown:
        raise fail(f"unknown keys {sorted(unknown)} (allowed: {sorted(RULE_KEYS)})")
    spec = {k: v for k, v in spec.items() if v is not None}
    if "value" not in spec and "xpath" not in spec:
        raise fail("needs 'value' or 'xpath'")
    if "template" in spec and "pattern" not in spec:
        raise fail("'template' needs a 'pattern'")

    if "value" in spec:
        constant = spec["value"]
        values = [constant] if isinstance(constant, str) else constant
        if not isinstance(values, list) or not values or not all(isinstance(v, str) and v.strip() for v in values):
            raise fail("'value' must be a non-empty string or list of strings")
        values = [v.strip() for v in values]

        def source(_found: Selection) -> list[str]:
            return list(values)
    else:
        exprs = spec["xpath"] if isinstance(spec["xpath"], list) else [spec["xpath"]]
        try:
            keys = [paths.add(expr) for expr in exprs]
        except (etree.XPathError, TypeError) as exc:
            raise fail(f"bad xpath {spec['xpath']!r}: {exc} (prefixes: {sorted(NAMESPACES)})") from exc

        def source(found: Selection) -> list[str]:
            for key in keys:
                values = found.strings(key)
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

    if not split and exclude is None and pattern is None and index is None:
        return source

    def rule(found: Selection) -> list[str]:
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
                kept.append(template.format(*match.groups(), **match.groupdict()) if template else value)
            values = kept
        if index is not None:
            values = values[index:index + 1]
        return values

    return rule


def _regex(expr: Any, fail: Callable[[str], ConfigError]) -> re.Pattern | None:
    if expr is None:
        return None
    try:
        return re.compile(expr)
    except (re.error, TypeError) as exc:
        raise fail(f"bad regex {expr!r}: {exc}") from exc
