"""The ``tags`` step: ingestion3's tags (TaggingUtils: aviation, nwdh, texas), as the rules of ``data/tags.yaml``.

    tags_of(record)   # ["nwdh"]: every rule whose field holds one of its terms, matched as the record was mapped
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache, lru_cache
from importlib.resources import files
from typing import Any

import yaml

RULES = "tags.yaml"
TAG = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")  # a tag names a folder and a URL path part (its sitemaps)


@dataclass(frozen=True)
class TagRule:
    """``tag`` for a record whose ``fields`` (dotted MAPRecord paths) hold one of ``terms`` exactly, when its
    provider is one of ``providers`` (None: any provider)."""

    tag: str
    fields: tuple[str, ...]
    terms: frozenset[str]
    providers: frozenset[str] | None = None
    _paths: tuple[tuple[str, ...], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_paths", tuple(tuple(path.split(".")) for path in self.fields))  # split once

    def matches(self, record: dict) -> bool:
        if self.providers is not None and record.get("provider") not in self.providers:
            return False
        for path in self._paths:
            if not self.terms.isdisjoint(_values(record, path)):
                return True
        return False


def parse_rules(text: str, source: str = RULES) -> tuple[TagRule, ...]:
    """The rules of a tags file; a malformed one is a ValueError naming the file and the rule."""
    loaded = yaml.safe_load(text)
    if not isinstance(loaded, list):
        raise ValueError(f"{source}: a list of tag rules is expected")
    return tuple(_rule(rule, f"{source}, rule {number}") for number, rule in enumerate(loaded, 1))


def _rule(rule: Any, where: str) -> TagRule:
    given = rule if isinstance(rule, dict) else {}
    tag, fields, terms, providers = (given.get(key) for key in ("tag", "fields", "terms", "providers"))
    if (set(given) - {"tag", "fields", "terms", "providers"} or not isinstance(tag, str) or not TAG.fullmatch(tag)
            or not _strings(fields) or not _strings(terms) or (providers is not None and not _strings(providers))):
        raise ValueError(f"{where}: a rule is a tag (letters, digits, '_', '.', '-'), its fields and terms (lists of "
                         "strings), and maybe providers")
    return TagRule(tag, tuple(fields), frozenset(terms), frozenset(providers) if providers is not None else None)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(item, str) for item in value)


@cache
def tag_rules() -> tuple[TagRule, ...]:
    """The shipped rules (``data/tags.yaml``)."""
    return parse_rules(files("ingest_assets.records.enrichment.data").joinpath(RULES).read_text(encoding="utf-8"))


def tags_of(record: dict, rules: tuple[TagRule, ...] | None = None) -> list[str]:
    """The tags the rules give ``record`` (a MAPRecord as mapped), each once, in the rules' order."""
    provider = record.get("provider")
    if rules is None:
        rules = _shipped_for(provider) if isinstance(provider, str) else tag_rules()
    found: list[str] = []
    for rule in rules:
        if rule.tag not in found and rule.matches(record):
            found.append(rule.tag)
    return found


@lru_cache(maxsize=4096)
def _shipped_for(provider: str) -> tuple[TagRule, ...]:
    """The shipped rules that may tag a provider's records (most rules are a few providers')."""
    return tuple(rule for rule in tag_rules() if rule.providers is None or provider in rule.providers)


def _values(record: dict, path: tuple[str, ...]) -> Iterator[str]:
    """The strings at ``path`` (``sourceResource.description``, ``dataProvider``, split at its dots): strings as
    they are, an agent's ``name``, each item of a list."""
    value: Any = record
    for name in path:
        value = value.get(name) if isinstance(value, dict) else None
    for item in value if isinstance(value, list) else (value,):
        if isinstance(item, dict):
            item = item.get("name")
        if isinstance(item, str):
            yield item
