"""A registry file's entries: provider names, :class:`ProviderEntry` (an entry checked whole), :class:`Registry` (the
entries that loaded, and the problems of those refused), :func:`parse_registry` and :func:`load_registry`."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol

import yaml
from pydantic import ValidationError

from ingest_assets.core.errors import ConfigError
from ingest_assets.core.registry.settings import EntrySettings

# lowercase letters and digits, '-' between them (ingestion3's northwest-heritage): a folder, a graph IRI, an index
# name, a partition key, a Dagster tag and a file-name part, each of which reads it back by this pattern
NAME_PATTERN = r"[a-z0-9]+(?:-[a-z0-9]+)*"
NAME_RE = re.compile(NAME_PATTERN)
MAX_NAME_LENGTH = 64
# names no provider may take: ResourceSync's sets of whole capabilities (resourcesync/config.py's CAPABILITY_SETS),
# which share the provider sets' namespace
RESERVED_NAMES = frozenset({"repository-objects", "dataset-files", "linked-data"})
# the key whose presence makes an entry a provider of each partitioned capability
CAPABILITY_KEYS = {"records": "harvest", "linked_data": "void", "repository": "repository"}


def key_error(provider: str, key: str, message: str, file: str | None = None) -> ConfigError:
    """The one wording of a registry problem: entry, dotted key (``maryland.harvest.path``), reason, and the file (the
    registry's, or what the key names when a run finds it unusable: an S3 prefix without credentials)."""
    return ConfigError(f"registry key {key!r}: {message}", provider=provider, file=file)


def _key(error: Mapping[str, Any], data: Any) -> list[str]:
    """The YAML path of ``error``: its location without pydantic's union branches (tags, type names)."""
    path, node, loc = [], data, error["loc"]
    for number, part in enumerate(loc):
        if isinstance(node, Mapping) and part in node:
            path.append(str(part))
            node = node[part]
        elif isinstance(node, Mapping) and number == len(loc) - 1 and error["type"] in ("missing", "config"):
            path.append(str(part))  # a key that is absent
    return path


class ProviderEntry:
    """One registry entry: its name, its file and its settings, checked here (:class:`EntrySettings`)."""

    def __init__(self, name: str, settings: Mapping[str, Any] | None = None, source: str = "<memory>"):
        self.name, self.source = name, source
        try:
            self.settings = EntrySettings.model_validate(dict(settings or {}))
        except ValidationError as exc:
            error = exc.errors()[0]
            key = ".".join([name, *_key(error, settings)])
            if error["type"] == "extra_forbidden":
                message = "unknown key"
            elif error["type"] in ("missing", "config") or isinstance(error["input"], Mapping):
                message = error["msg"]
            else:
                message = f"{error['msg']} (given {error['input']!r})"
            raise self.error(key, message) from None

    @property
    def label(self) -> str:
        return self.settings.label or self.name

    def error(self, key: str, message: str) -> ConfigError:
        """The one wording of a registry problem: entry, dotted key, reason (and the file)."""
        return key_error(self.name, key, message, self.source)

    def require(self, key: str) -> Any:
        """The typed value of ``key``, which this use of the entry cannot do without."""
        value = getattr(self.settings, key)
        if value is None:
            raise self.error(f"{self.name}.{key}", "is missing")
        return value

    def has(self, key: str) -> bool:
        """Whether the entry's YAML gives ``key``."""
        return key in self.settings.model_fields_set


class Registry(Mapping[str, ProviderEntry]):
    """The entries that loaded, by name. An entry the file holds but that was refused is not among them: it is in
    :attr:`problems` (name -> its ConfigError), and asking for it raises that error, so one bad entry stops only
    itself. :attr:`stale` is set when the file itself could not be read and this is the last good copy of it."""

    def __init__(self, entries: Mapping[str, ProviderEntry], source: str = "<memory>",
                 problems: Mapping[str, ConfigError] | None = None, stale: ConfigError | None = None):
        self._entries = dict(entries)
        self.source = source
        self.problems: dict[str, ConfigError] = dict(problems or {})
        self.stale = stale

    def refuse(self, name: str, error: ConfigError) -> None:
        """Move a loaded entry to :attr:`problems` (a capability's own check of it failed: a mapping rule that
        does not compile); the other entries are not affected."""
        self._entries.pop(name, None)
        self.problems[name] = error

    def __getitem__(self, name: str) -> ProviderEntry:
        if name in self._entries:
            return self._entries[name]
        if name in self.problems:
            refused = self.problems[name]
            raise ConfigError(refused.message, provider=refused.provider, file=refused.file,
                              hint=f"{refused.hint or 'fix this entry'}; the other entries are not affected")
        raise ConfigError(f"provider {name!r} is not in the registry", provider=name, file=self.source,
                          hint=f"known providers: {', '.join(sorted(self._entries)) or 'none'}")

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def providers_with(self, key: str) -> list[ProviderEntry]:
        return [entry for entry in self._entries.values() if entry.has(key)]

    def providers_of(self, capability: str) -> list[str]:
        """Names of the entries that carry ``capability``'s block (see :data:`CAPABILITY_KEYS`)."""
        return sorted(entry.name for entry in self.providers_with(CAPABILITY_KEYS[capability]))


def parse_registry(data: Any, source: str = "<memory>", *, shipped: bool = False) -> Registry:
    """Validate parsed YAML: a mapping of provider names (:data:`NAME_PATTERN`) to mappings of settings. A file that
    is not such a mapping is a ConfigError; an entry that breaks a rule is refused into :attr:`Registry.problems`,
    and so is one whose harvest still holds a placeholder (``delivery: private``) unless the file is ``shipped``:
    the package's registry of hubs, whose private deliveries only the hub can fill in."""
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ConfigError("the registry must map provider names to settings", file=source)
    entries: dict[str, ProviderEntry] = {}
    problems: dict[str, ConfigError] = {}
    for name, settings in data.items():
        try:
            entries[name] = _entry(name, settings, source)
            if not shipped:
                _filled_in(entries[name])
        except ConfigError as exc:
            entries.pop(name, None)
            problems[str(name)] = exc
    return Registry(entries, source, problems)


def _entry(name: Any, settings: Any, source: str) -> ProviderEntry:
    if not isinstance(name, str) or not NAME_RE.fullmatch(name) or len(name) > MAX_NAME_LENGTH:
        raise ConfigError(
            f"registry entry {name!r}: provider names are lowercase letters and digits, '-' between them, at most "
            f"{MAX_NAME_LENGTH} characters (they become folder, graph and index names)",
            provider=str(name),
            file=source,
        )
    if name in RESERVED_NAMES:
        raise ConfigError(f"registry entry {name!r}: the name of one of ResourceSync's capability sets, no provider's "
                          f"(reserved: {', '.join(sorted(RESERVED_NAMES))})", provider=name, file=source)
    if settings is None:
        settings = {}
    if not isinstance(settings, Mapping):
        raise ConfigError(f"registry entry {name!r} must be a mapping of settings", provider=name, file=source)
    return ProviderEntry(name, settings, source)


def _filled_in(entry: ProviderEntry) -> None:
    """A ConfigError for an entry copied from the shipped hubs whose harvest still waits for the hub's location."""
    harvest = entry.settings.harvest
    placeholder = harvest.placeholder() if harvest is not None else None
    if placeholder is not None:
        key, what = placeholder
        raise ConfigError(f"registry key {entry.name + '.harvest.' + key!r}: needs your delivery location: {what}",
                          provider=entry.name, file=entry.source,
                          hint="put your own value there, then remove harvest.delivery and harvest.fill_in")


class LastGood(Protocol):
    """Where the text of the last registry file that loaded is kept (:func:`load_registry`)."""

    def read(self) -> str | None: ...

    def write(self, text: str) -> None: ...


def load_registry(path: str | Path, last_good: LastGood | None = None) -> Registry:
    """The registry file at ``path``. With ``last_good``: each file that loads is kept there, and a file that can
    no longer be read or parsed yields the kept copy with :attr:`Registry.stale` saying why (the hub keeps
    running on it); without a kept copy the error is raised."""
    path = Path(path)
    try:
        text = _read(path)
        registry = parse_registry(_yaml(text, path), str(path))
    except ConfigError as exc:
        kept = last_good.read() if last_good else None
        if kept is None:
            raise
        registry = parse_registry(yaml.safe_load(kept), str(path))
        registry.stale = exc
        return registry
    if last_good and last_good.read() != text:
        last_good.write(text)
    return registry


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("registry file not found", file=str(path), hint="set INGEST_REGISTRY to the registry file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"registry file cannot be read: {exc}", file=str(path)) from None


def _yaml(text: str, path: Path) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(f"registry is not valid YAML: {getattr(exc, 'problem', None) or exc}{where}", file=str(path),
                          hint="fix the YAML there") from None
