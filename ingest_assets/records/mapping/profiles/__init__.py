"""Mapping profiles: data files (``<name>.yaml`` beside this module) that say how a source format becomes MAP.

A profile file holds::

    description: UNT's UNTL XML (ingestion3's TxMapping)   # one line, shown by ``ingest-assets map``
    extends: oai_dc                             # optional: start from another profile's fields
    source: xml                                 # xml (XPath rules) or json (JMESPath rules)
    namespaces: {untl: http://digital2.library.unt.edu/untl/}   # xml: prefixes beyond xml_input.NAMESPACES;
                                                # also what a record's undeclared prefix of that name means
    namespace_aliases: {http://www.w3.org/1999/xhtml: dc}   # xml: read elements of that namespace as dc:...
    root: [untl:metadata]                       # xml: the metadata element(s); else <oai:metadata>'s child
    id: {header: identifier}                    # the provider's local id, for records read from plain files
    dpla_id: {path: _source.id}                 # optional: the DPLA id the record carries (not minted)
    records: response.docs                      # json: where a file or page holds its records
    embedded_xml: solr_doc_hash.mods_st         # json: the string holding an XML document, which 'xpath' rules read
                                                # (with namespaces, namespace_aliases, root); 'path' rules read the JSON
    provider: {label: The Portal to Texas History, uri: 'http://dp.la/api/contributor/...', id_prefix: texas}
    fields:                                     # MAP field -> rule (``model.py``); null switches one off
      title: {xpath: untl:title}

``extends`` and the registry's ``mapping_overrides`` merge the same way (:func:`merge_rules`): a rule with
``value`` replaces the inherited one, other keys merge onto it key by key. ``provider.id_prefix`` is the key DPLA
ids are minted with, unless ``dpla_id`` reads the id from the record itself (items re-ingested from DPLA's index
keep theirs; a record without one is refused) (``md5(<id_prefix>--<local id>)``; ``false``: ``md5(<local id>)``; absent: the registry
entry's name); the registry may override it, the label and the URI (``id_prefix``, ``label``, ``provider_uri``).

:func:`catalog` is the set a deployment maps with: these shipped profiles and vocabularies, extended by the
profiles folder the settings name (``INGEST_PROFILES``: ``<name>.yaml`` files and a ``vocabularies/`` folder).
"""

from __future__ import annotations

import threading
from collections import ChainMap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Annotated, Any, Literal

import jmespath
import yaml
from jmespath.exceptions import JMESPathError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ingest_assets.core.errors import ConfigError
from ingest_assets.core.xml_input import NAMESPACES
from ingest_assets.records.mapping import vocabularies as vocab
from ingest_assets.records.mapping.embedded import EmbeddedPaths
from ingest_assets.records.mapping.fields import FIELDS
from ingest_assets.records.mapping.json_paths import JsonPaths
from ingest_assets.records.mapping.model import SOURCE_KEYS as _SOURCES
from ingest_assets.records.mapping.paths import Paths
from ingest_assets.records.mapping.rules import compile_rule


SOURCE_KEYS = frozenset({*_SOURCES, "each", "separator"})  # what an override's own source replaces


@dataclass(frozen=True)
class ProviderInfo:
    """The hub a profile maps for: its label, URI and DPLA id minting key (``False``: ids without a prefix;
    ``None``: the registry entry's name)."""

    label: str | None = None
    uri: str | None = None
    id_prefix: str | Literal[False] | None = None


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    source: Literal["xml", "json"]
    namespaces: dict[str, str]
    root_tags: tuple[str, ...]
    rules: dict[str, Any]  # field -> rule mapping or list of them (``model.py``)
    id_rule: dict[str, Any] | None = None
    dpla_id_rule: dict[str, Any] | None = None
    records: str | None = None
    embedded_xml: str | None = None  # JMESPath to the string that holds the record's XML document (json)
    provider: ProviderInfo = ProviderInfo()
    aliases: dict[str, str] = field(default_factory=dict)  # namespace URI -> the URI its elements are read as
    file: str = ""

    @property
    def rule_language(self) -> str:
        """What its rules' expressions are: ``xml`` (XPath), ``json`` (JMESPath) or ``json+xml`` (both)."""
        return "json+xml" if self.embedded_xml is not None else self.source


class _Block(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _ProviderBlock(_Block):
    label: Annotated[str, Field(min_length=1)] | None = None
    uri: Annotated[str, Field(pattern=r"^https?://\S+$")] | None = None
    id_prefix: Annotated[str, Field(pattern=r"^\S+$")] | Literal[False] | None = None


class _ProfileFile(_Block):
    description: Annotated[str, Field(min_length=1)]
    extends: str | None = None
    source: Literal["xml", "json"] | None = None
    namespaces: dict[str, str] = {}
    namespace_aliases: dict[str, str] = {}
    root: list[str] | None = None
    id: dict[str, Any] | None = None
    dpla_id: dict[str, Any] | None = None
    records: str | None = None
    embedded_xml: str | None = None
    provider: _ProviderBlock | None = None
    fields: dict[str, dict[str, Any] | list[dict[str, Any]] | None] = {}


def paths_for(profile: Profile) -> Paths | JsonPaths | EmbeddedPaths:
    """An empty set of the profile's path language (XPath with its namespaces, JMESPath, or both)."""
    if profile.embedded_xml is not None:
        return EmbeddedPaths(profile.namespaces)
    return JsonPaths() if profile.source == "json" else Paths(profile.namespaces)


def merge_rules(base: Mapping[str, Any], overrides: Any, fail: Callable[[str], ConfigError]) -> dict[str, Any]:
    """``base`` rules with ``overrides`` (field -> rule, list of rules, or null) applied; ``fail(reason)`` makes
    the ConfigError. A list replaces the inherited rule, as a rule with ``value`` does; an override that gives a
    source (``xpath``, ``first_of``, ``each``...) replaces the inherited source and keeps its other keys."""
    if not isinstance(overrides, Mapping):
        raise fail("must map field names to rules")
    rules = dict(base)
    for field_name, override in overrides.items():
        if field_name not in FIELDS:
            raise fail(f"unknown field {field_name!r} (known: {sorted(FIELDS)})")
        if override is None:  # `field: null` switches the field off
            rules.pop(field_name, None)
        elif isinstance(override, list) or (isinstance(override, Mapping) and "value" in override):
            rules[field_name] = override  # replaces the inherited rule
        elif isinstance(override, Mapping):  # other keys merge onto the inherited rule
            inherited = rules.get(field_name, {})
            if isinstance(inherited, list):
                raise fail(f"{field_name} is a list of rules: override it with a whole rule or list")
            if SOURCE_KEYS.intersection(override):
                inherited = {key: value for key, value in inherited.items() if key not in SOURCE_KEYS}
            rules[field_name] = {**inherited, **override}
        else:
            raise fail(f"{field_name} must be a mapping or null (or a list of rules)")
    return rules


def compile_rules(profile: Profile, rules: Mapping[str, Any], paths: Paths | JsonPaths,
                  vocabularies: Mapping[str, vocab.Vocabulary]) -> dict[str, Any]:
    """Every field rule of ``rules`` compiled against ``paths`` (field -> rule function)."""
    return {name: compile_rule(spec, field=name, paths=paths, source=profile.rule_language, vocabularies=vocabularies)
            for name, spec in rules.items()}


def read_profile(name: str, text: str, source: str, known: Mapping[str, Profile],
                 vocabularies: Mapping[str, vocab.Vocabulary]) -> Profile:
    """A profile from its YAML text; ``extends`` names one of ``known``. Every rule is checked and compiled now."""
    def fail(reason: str) -> ConfigError:
        return ConfigError(f"mapping profile {name!r}: {reason}", file=source)

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise fail(f"not valid YAML: {exc}") from None
    try:
        spec = _ProfileFile.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise fail(f"key {'.'.join(map(str, error['loc']))!r}: {error['msg']}") from None
    profile = _built(name, spec, source, known, fail)
    try:
        paths = paths_for(profile)  # every rule compiles now, not when a provider first uses the profile
        compile_rules(profile, profile.rules, paths, vocabularies)
        for key, rule in (("id", profile.id_rule), ("dpla_id", profile.dpla_id_rule)):
            if rule is not None:
                compile_rule(rule, field=key, paths=paths, source=profile.rule_language, vocabularies=vocabularies)
    except ConfigError as exc:
        raise fail(exc.message) from None
    return profile


def _built(name: str, spec: _ProfileFile, source: str, known: Mapping[str, Profile], fail) -> Profile:
    parent = None
    if spec.extends is not None:
        if spec.extends not in known:
            raise fail(f"extends unknown profile {spec.extends!r} (known: {sorted(known)})")
        parent = known[spec.extends]
    kind = spec.source or (parent.source if parent else None)
    if kind is None:
        raise fail("needs 'source: xml' or 'source: json'")
    for key in ("records", "embedded_xml"):
        given = getattr(spec, key)
        if given is not None:
            try:
                jmespath.compile(given)
            except JMESPathError as exc:
                raise fail(f"{key}: bad JMESPath {given!r}: {exc}") from None
    embedded = spec.embedded_xml or (parent.embedded_xml if parent else None)
    if embedded is not None and kind != "json":
        raise fail("embedded_xml is the string of a JSON record that holds XML: it needs 'source: json'")
    namespaces = {**NAMESPACES, **(parent.namespaces if parent else {}), **spec.namespaces}
    root = [_qualified(tag, namespaces, fail) for tag in spec.root] if spec.root else None
    return Profile(
        name=name,
        description=spec.description,
        source=kind,
        namespaces=namespaces,
        root_tags=tuple(root) if root is not None else (parent.root_tags if parent else ()),
        rules=merge_rules(parent.rules if parent else {}, spec.fields, lambda r: fail(f"fields: {r}")),
        id_rule=spec.id if spec.id is not None else (parent.id_rule if parent else None),
        dpla_id_rule=spec.dpla_id if spec.dpla_id is not None else (parent.dpla_id_rule if parent else None),
        records=spec.records or (parent.records if parent else None),
        embedded_xml=embedded,
        provider=_provider(spec.provider, parent),
        aliases={**(parent.aliases if parent else {}), **_aliases(spec.namespace_aliases, namespaces, fail)},
        file=source,
    )


def _provider(block: _ProviderBlock | None, parent: Profile | None) -> ProviderInfo:
    inherited = parent.provider if parent else ProviderInfo()
    if block is None:
        return inherited
    given = block.model_dump(exclude_unset=True)
    return ProviderInfo(**{**inherited.__dict__, **given})


def _aliases(given: Mapping[str, str], namespaces: Mapping[str, str], fail) -> dict[str, str]:
    out = {}
    for uri, prefix in given.items():
        if prefix not in namespaces:
            raise fail(f"namespace_aliases {uri!r}: unknown prefix {prefix!r} (declare it under namespaces)")
        out[uri] = namespaces[prefix]
    return out


def _qualified(tag: str, namespaces: Mapping[str, str], fail) -> str:
    """``prefix:local`` -> ``{uri}local`` (lxml's tag); a bare name is an element in no namespace."""
    prefix, _, local = tag.rpartition(":")
    if not prefix:
        return local
    if prefix not in namespaces:
        raise fail(f"root {tag!r}: unknown prefix {prefix!r} (declare it under namespaces)")
    return "{%s}%s" % (namespaces[prefix], local)


def read_profiles(texts: Mapping[str, tuple[str, str]], known: Mapping[str, Profile],
                  vocabularies: Mapping[str, vocab.Vocabulary]) -> dict[str, Profile]:
    """Profiles from ``name -> (yaml text, file)``, each loaded after the one it extends (among these or
    ``known``, whose names they may not take)."""
    pending = {}
    for name, (text, source) in texts.items():
        if name in known:
            raise ConfigError(f"mapping profile {name!r} is shipped already: give yours another name", file=source)
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError:
            data = None  # read_profile names the YAML error
        pending[name] = data.get("extends") if isinstance(data, dict) else None
    loaded: dict[str, Profile] = {}
    while pending:
        ready = sorted(name for name, parent in pending.items() if parent in (None, *known, *loaded))
        if not ready:
            raise ConfigError(f"mapping profiles extend each other in a circle or unknown ones: {sorted(pending)}",
                              file=texts[min(pending)][1])
        for name in ready:
            del pending[name]
            text, source = texts[name]
            loaded[name] = read_profile(name, text, source, ChainMap(loaded, known), vocabularies)
    return loaded


def load_profile(path: str | Path, known: Mapping[str, Profile] | None = None,
                 vocabularies: Mapping[str, vocab.Vocabulary] | None = None) -> Profile:
    """A profile from a file of one's own (``ingest-assets map --profile FILE``); ``extends`` names a shipped one."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the profile: {exc.strerror}", file=str(path)) from None
    return read_profile(path.stem, text, str(path), PROFILES if known is None else known,
                        VOCABULARIES if vocabularies is None else vocabularies)


# ---- the catalog a deployment maps with -------------------------------------------------------------------

@dataclass(frozen=True)
class Catalog:
    """Profiles and vocabularies by name: the shipped ones and those of a profiles folder."""

    profiles: Mapping[str, Profile]
    vocabularies: Mapping[str, vocab.Vocabulary]

    def profile(self, given: str, relative_to: Path | None = None) -> Profile:
        """The profile ``given`` names: a known name, else a profile file (relative paths from ``relative_to``)."""
        if given in self.profiles:
            return self.profiles[given]
        path = Path(given).expanduser()
        if not path.is_absolute() and relative_to is not None:
            path = relative_to / path
        if not given.endswith((".yaml", ".yml")) and "/" not in given and not path.is_file():
            raise ConfigError(f"unknown mapping {given!r}",
                              hint=f"known profiles: {', '.join(sorted(self.profiles))}; or a profile file")
        return _profile_file(str(path), _signature(path), self)


def _signature(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


_LOCK = threading.Lock()
_FILES: dict[tuple, tuple[Catalog, Profile]] = {}
_FOLDERS: dict[tuple, Catalog] = {}
_MAX_FILES = 256


def _profile_file(path: str, signature: tuple[int, int] | None, catalog_: Catalog) -> Profile:
    """A profile file, loaded again only when it (or the catalog it extends) changed."""
    with _LOCK:
        found = _FILES.get((path, signature))
    if found is not None and found[0] is catalog_:
        return found[1]
    profile = load_profile(path, catalog_.profiles, catalog_.vocabularies)
    with _LOCK:
        if len(_FILES) >= _MAX_FILES:
            _FILES.clear()
        _FILES[(path, signature)] = (catalog_, profile)
    return profile


def catalog(folder: Path | None = None) -> Catalog:
    """The shipped profiles and vocabularies, extended by ``folder`` (its ``*.yaml`` profiles and
    ``vocabularies/*.yaml``); read again only when a file there changed."""
    if folder is None:
        return SHIPPED
    if not folder.is_dir():
        raise ConfigError("the profiles folder (INGEST_PROFILES) is not a directory", file=str(folder))
    files_ = sorted([*folder.glob("*.yaml"), *folder.glob("*.yml"), *(folder / vocab.FOLDER).glob("*.yaml")])
    state = (str(folder), tuple((str(path), _signature(path)) for path in files_))
    with _LOCK:
        found = _FOLDERS.get(state)
    if found is None:
        found = _folder_catalog(folder)
        with _LOCK:
            _FOLDERS.clear()  # one folder per deployment: keep its newest state only
            _FOLDERS[state] = found
    return found


def _folder_catalog(folder: Path) -> Catalog:
    vocabularies = {**VOCABULARIES, **vocab.from_folder(folder, VOCABULARIES)}
    texts = {}
    for path in sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")]):
        try:
            texts[path.stem] = (path.read_text(encoding="utf-8"), str(path))
        except OSError as exc:
            raise ConfigError(f"cannot read the profile: {exc.strerror}", file=str(path)) from None
    return Catalog(ChainMap(read_profiles(texts, PROFILES, vocabularies), PROFILES), vocabularies)


class ShippedProfiles(Mapping[str, Profile]):
    """The profiles shipped with the package, each read and compiled when first asked for (a process maps with a
    few of them; every one is checked by the tests)."""

    def __init__(self) -> None:
        self._files = {entry.name.removesuffix(".yaml"): entry for entry in files(__name__).iterdir()
                       if entry.name.endswith(".yaml")}
        self._loaded: dict[str, Profile] = {}
        self._lock = threading.RLock()

    def __getitem__(self, name: str) -> Profile:
        found = self._loaded.get(name)
        if found is not None:
            return found
        entry = self._files[name]  # KeyError: not a shipped profile
        with self._lock:
            if name not in self._loaded:
                text = entry.read_text(encoding="utf-8")
                data = yaml.safe_load(text)
                parent = data.get("extends") if isinstance(data, dict) else None
                known = {parent: self[parent]} if parent in self._files else {}
                self._loaded[name] = read_profile(name, text, f"{__name__}/{entry.name}", known, VOCABULARIES)
            return self._loaded[name]

    def __iter__(self):
        return iter(sorted(self._files))

    def __len__(self) -> int:
        return len(self._files)

    def __contains__(self, name: object) -> bool:
        return name in self._files


VOCABULARIES: dict[str, vocab.Vocabulary] = vocab.shipped()
PROFILES: Mapping[str, Profile] = ShippedProfiles()
SHIPPED = Catalog(PROFILES, VOCABULARIES)
