"""Alias and physical index names: one physical index per full build, ``<alias>-<yyyymmddhhmmss>`` (UTC)."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime

from ingest_assets.core.errors import ConfigError
from ingest_assets.storage.layout import next_free_second

ALIAS_PATTERN = re.compile(r"[a-z0-9][a-z0-9_-]{0,200}")
NO_INDEX_HINT = "index records first (`ingest-assets demo`, or `ingest-assets harvest <provider>`), or check INGEST_SEARCH"


def check_alias(alias: str) -> str:
    """An alias valid for Elasticsearch and safe as a file name (lowercase letters, digits, '-', '_')."""
    if not isinstance(alias, str) or not ALIAS_PATTERN.fullmatch(alias):
        raise ConfigError(f"search alias must match {ALIAS_PATTERN.pattern}, got {alias!r}")
    return alias


def build_name(alias: str, started: datetime, taken: Callable[[str], bool]) -> str:
    """``<alias>-<yyyymmddhhmmss>`` for a build started at ``started``; a later second if that name is taken,
    so two builds in the same second still get distinct, ordered names."""
    def name_at(moment: datetime) -> str:
        return f"{check_alias(alias)}-{moment:%Y%m%d%H%M%S}"

    return name_at(next_free_second(started.astimezone(UTC), lambda moment: not taken(name_at(moment))))
