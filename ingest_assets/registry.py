"""The provider registry: one YAML file, provider name -> settings; each capability reads its own block.

Every key has a type, checked when the registry is loaded (:class:`EntrySettings`): a quoted ``"false"`` is
not a boolean, ``max_dump_bytes: lots`` is not a number, and an unknown key is refused, each as a ConfigError
naming entry, key and file. The ``harvest:`` and ``resourcesync:`` blocks are checked in depth by their
capabilities' own validators when they are used.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ingest_assets.errors import ConfigError

NAME_RE = re.compile(r"[a-z0-9]+")
MAX_NAME_LENGTH = 64  # it is a folder, a graph IRI and a file-name part
# the key whose presence makes an entry a provider of each partitioned capability
CAPABILITY_KEYS = {"records": "harvest", "linked_data": "void", "repository": "repository"}


class _Block(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class QualityBlock(_Block):
    max_count_drop: float = Field(default=0.15, ge=0, le=1)
    max_failure_rate: float = Field(default=0.20, ge=0, le=1)


class ScheduleBlock(_Block):
    cron: str = "0 2 * * *"
    timezone: str = "UTC"


class RepositoryBlock(_Block):
    template_index: str | None = None
    wiki_api: str | None = None
    wiki_export: str | None = None
    base_url: str | None = None
    default_language: str = "en"
    wiki_languages: dict[str, str] = Field(default_factory=dict)
    max_ingest_hours: float = Field(default=24, gt=0)
    vocabularies: str | None = None
    start: datetime | date | str | None = None
    wiki_user_env: str | None = None
    wiki_password_env: str | None = None


class EntrySettings(_Block):
    """The keys a registry entry may hold, with their types (YAML's own: ``true``, ``2015-06-01``, ``0.2``)."""

    label: str | None = None
    # record pipeline
    harvest: dict[str, Any] | None = None
    mapping: str | None = None
    mapping_overrides: dict[str, Any] | None = None
    quality: QualityBlock | None = None
    schedule: ScheduleBlock | Literal[False] | None = None
    engine: Literal["in-process", "spark", "auto"] | None = None
    engine_threshold: int | None = Field(default=None, gt=0)
    resourcesync: dict[str, Any] | None = None
    # linked data
    void: str | None = None
    modified: datetime | date | str | None = None
    allow_private: bool = False
    max_dump_bytes: int | None = Field(default=None, gt=0)
    # repository
    repository: RepositoryBlock | None = None


def check_entry(name: str, settings: Mapping[str, Any], source: str) -> None:
    """ConfigError naming entry, key and file for the first key of a wrong type, value or name."""
    try:
        EntrySettings.model_validate(dict(settings))
    except ValidationError as exc:
        error = exc.errors()[0]
        # union members show up in the location as their type names (ScheduleBlock, literal[...]): not keys
        key = ".".join(str(part) for part in error["loc"] if not str(part)[:1].isupper() and "[" not in str(part))
        given = error.get("input")
        message = "unknown key" if error["type"] == "extra_forbidden" else error["msg"]
        raise ConfigError(f"registry entry {name!r}, key {key!r}: {message} (given {given!r})",
                          provider=name, file=source) from None


@dataclass(frozen=True)
class ProviderEntry:
    name: str
    settings: Mapping[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return str(self.settings.get("label") or self.name)

    def get(self, key: str, default: Any = None) -> Any:
        return self.settings.get(key, default)

    def block(self, key: str) -> dict[str, Any]:
        """A nested settings block (``harvest:``, ``resourcesync:``...), ``{}`` when absent."""
        value = self.settings.get(key)
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise ConfigError(f"registry key {key!r} must be a mapping", provider=self.name)
        return dict(value)


class Registry(Mapping[str, ProviderEntry]):
    def __init__(self, entries: Mapping[str, ProviderEntry], source: str = "<memory>"):
        self._entries = dict(entries)
        self.source = source

    def __getitem__(self, name: str) -> ProviderEntry:
        try:
            return self._entries[name]
        except KeyError:
            raise ConfigError(f"provider {name!r} is not in the registry", provider=name, file=self.source) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def providers_with(self, key: str) -> list[ProviderEntry]:
        return [entry for entry in self._entries.values() if key in entry.settings]

    def providers_of(self, capability: str) -> list[str]:
        """Names of the entries that carry ``capability``'s block (see :data:`CAPABILITY_KEYS`)."""
        return sorted(e.name for e in self._entries.values() if CAPABILITY_KEYS[capability] in e.settings)


def parse_registry(data: Any, source: str = "<memory>") -> Registry:
    """Validate parsed YAML: a mapping of ``[a-z0-9]+`` names to mappings of settings."""
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ConfigError("the registry must map provider names to settings", file=source)
    entries: dict[str, ProviderEntry] = {}
    for name, settings in data.items():
        if not isinstance(name, str) or not NAME_RE.fullmatch(name) or len(name) > MAX_NAME_LENGTH:
            raise ConfigError(
                f"registry entry {name!r}: provider names must match [a-z0-9]+, at most {MAX_NAME_LENGTH} "
                "characters (they become folder and graph names)",
                provider=str(name),
                file=source,
            )
        if settings is None:
            settings = {}
        if not isinstance(settings, Mapping):
            raise ConfigError(f"registry entry {name!r} must be a mapping of settings", provider=name, file=source)
        check_entry(name, settings, source)
        entries[name] = ProviderEntry(name, dict(settings))
    return Registry(entries, source)


def load_registry(path: str | Path) -> Registry:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("registry file not found (set INGEST_REGISTRY)", file=str(path)) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"registry is not valid YAML: {exc}", file=str(path)) from exc
    return parse_registry(data, str(path))
