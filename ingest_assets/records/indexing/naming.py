"""Alias and physical index names: one physical index per build, ``<alias>-<provider>-<yyyymmddhhmmss>`` (UTC).

A provider's documents live in their own indices (``dpla-map4-demo-20260115030000``); the alias spans the
current index of every provider. An index built for every provider at once, as builds before per-provider
indices made them, is ``<alias>-<yyyymmddhhmmss>``. A provider name (``northwest-heritage``) sits between the
alias and the 14 digits of the time, so a name reads back unambiguously given its alias (:func:`parse_index`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from ingest_assets.core.errors import ConfigError
from ingest_assets.core.registry import NAME_PATTERN, NAME_RE
from ingest_assets.storage.layout import next_free_second

ALIAS_PATTERN = re.compile(r"[a-z0-9][a-z0-9_-]{0,200}")
STAMP = "%Y%m%d%H%M%S"
_INDEX = re.compile(rf"(?:(?P<provider>{NAME_PATTERN})-)?(?P<stamp>\d{{14}})")
NO_INDEX_HINT = "index records first (`ingest-assets demo`, or `ingest-assets harvest <provider>`), or check INGEST_SEARCH"


def check_alias(alias: str) -> str:
    """An alias valid for Elasticsearch and safe as a file name (lowercase letters, digits, '-', '_')."""
    if not isinstance(alias, str) or not ALIAS_PATTERN.fullmatch(alias):
        raise ConfigError(f"search alias must match {ALIAS_PATTERN.pattern}, got {alias!r}")
    return alias


def build_name(alias: str, started: datetime, taken: Callable[[str], bool], provider: str | None = None) -> str:
    """``<alias>-[<provider>-]<yyyymmddhhmmss>`` for a build started at ``started``; a later second if that name
    is taken, so two builds in the same second still get distinct, ordered names."""
    if provider is not None and not NAME_RE.fullmatch(provider):
        raise ConfigError(f"not a provider name: {provider!r}")
    prefix = f"{check_alias(alias)}-{provider}-" if provider else f"{check_alias(alias)}-"

    def name_at(moment: datetime) -> str:
        return f"{prefix}{moment:{STAMP}}"

    return name_at(next_free_second(started.astimezone(UTC), lambda moment: not taken(name_at(moment))))


@dataclass(frozen=True)
class IndexName:
    """What a physical index name says: its alias, provider (None: every provider) and build time."""

    name: str
    alias: str
    provider: str | None
    created: datetime


def parse_index(alias: str, name: str) -> IndexName | None:
    """The parts of ``name`` if it is a physical index of ``alias``, else None."""
    prefix = f"{alias}-"
    if not name.startswith(prefix):
        return None
    match = _INDEX.fullmatch(name[len(prefix):])
    if match is None:
        return None
    created = datetime.strptime(match["stamp"], STAMP).replace(tzinfo=UTC)
    return IndexName(name, alias, match["provider"], created)
