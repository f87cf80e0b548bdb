"""Mapping profiles: data files (``<name>.yaml`` beside this module) that say how a source format becomes MAP.

A profile file holds::

    description: NARA catalog item XML          # one line, shown by ``ingest-assets map``
    extends: oai_dc                             # optional: start from another profile's fields
    source: xml                                 # xml (XPath rules) or json (JMESPath rules)
    namespaces: {n: http://description.das.nara.gov/}   # xml: prefixes beyond xml.NAMESPACES
    root: [n:item]                              # xml: the metadata element(s); else <oai:metadata>'s child
    id: {xpath: n:naId}                         # the provider's local id, for records read from plain files
    records: response.docs                      # json: where a file or page holds its records
    fields:                                     # MAP field -> rule (``rules.py``); null switches one off
      title: {xpath: n:title}

``extends`` and the registry's ``mapping_overrides`` merge the same way (:func:`merge_rules`): a rule with
``value`` replaces the inherited one, other keys merge onto it key by key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

import jmespath
import yaml
from jmespath.exceptions import JMESPathError
from pydantic import BaseModel, ConfigDict, ValidationError

from ingest_assets.core.errors import ConfigError
from ingest_assets.records.mapping.fields import FIELDS
from ingest_assets.records.mapping.json_paths import JsonPaths
from ingest_assets.records.mapping.paths import Paths
from ingest_assets.records.mapping.rules import compile_rule
from ingest_assets.records.mapping.xml import NAMESPACES


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    source: Literal["xml", "json"]
    namespaces: dict[str, str]
    root_tags: tuple[str, ...]
    rules: dict[str, Any]  # field -> rule mapping or list of them (``rules.py``)
    id_rule: dict[str, Any] | None = None
    records: str | None = None


class _ProfileFile(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    description: str
    extends: str | None = None
    source: Literal["xml", "json"] | None = None
    namespaces: dict[str, str] = {}
    root: list[str] | None = None
    id: dict[str, Any] | None = None
    records: str | None = None
    fields: dict[str, dict[str, Any] | list[dict[str, Any]] | None] = {}


def paths_for(profile: Profile) -> Paths | JsonPaths:
    """An empty set of the profile's path language (XPath with its namespaces, or JMESPath)."""
    return JsonPaths() if profile.source == "json" else Paths(profile.namespaces)


def merge_rules(base: Mapping[str, Any], overrides: Any, fail) -> dict[str, Any]:
    """``base`` rules with ``overrides`` (field -> rule, list of rules, or null) applied; ``fail(reason)`` makes
    the ConfigError. A list replaces the inherited rule, as a rule with ``value`` does."""
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
            rules[field_name] = {**inherited, **override}
        else:
            raise fail(f"{field_name} must be a mapping or null (or a list of rules)")
    return rules


def load_profile(path: str | Path, known: Mapping[str, Profile] | None = None) -> Profile:
    """A profile from a file of one's own (``ingest-assets map --profile FILE``); ``extends`` names a shipped one."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the profile: {exc.strerror}", file=str(path)) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"mapping profile {path.stem!r}: not valid YAML: {exc}", file=str(path)) from None
    return _profile(path.stem, data, str(path), PROFILES if known is None else known)


def _profile(name: str, data: Any, source: str, known: Mapping[str, Profile]) -> Profile:
    def fail(reason: str) -> ConfigError:
        return ConfigError(f"mapping profile {name!r}: {reason}", file=source)

    try:
        spec = _ProfileFile.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise fail(f"key {'.'.join(map(str, error['loc']))!r}: {error['msg']}") from None
    parent = None
    if spec.extends is not None:
        if spec.extends not in known:
            raise fail(f"extends unknown profile {spec.extends!r} (known: {sorted(known)})")
        parent = known[spec.extends]
    kind = spec.source or (parent.source if parent else None)
    if kind is None:
        raise fail("needs 'source: xml' or 'source: json'")
    if spec.records is not None:
        try:
            jmespath.compile(spec.records)
        except JMESPathError as exc:
            raise fail(f"records: bad JMESPath {spec.records!r}: {exc}") from None
    namespaces = {**NAMESPACES, **(parent.namespaces if parent else {}), **spec.namespaces}
    root = [_qualified(tag, namespaces, fail) for tag in spec.root] if spec.root else None
    profile = Profile(
        name=name,
        description=spec.description,
        source=kind,
        namespaces=namespaces,
        root_tags=tuple(root) if root is not None else (parent.root_tags if parent else ()),
        rules=merge_rules(parent.rules if parent else {}, spec.fields, lambda r: fail(f"fields: {r}")),
        id_rule=spec.id if spec.id is not None else (parent.id_rule if parent else None),
        records=spec.records or (parent.records if parent else None),
    )
    paths = paths_for(profile)  # every rule compiles now, not when a provider first uses the profile
    try:
        for field_name, rule in [*profile.rules.items(), *([("id", profile.id_rule)] if profile.id_rule else [])]:
            compile_rule(rule, provider=name, field=field_name, paths=paths)
    except ConfigError as exc:
        raise fail(exc.message) from None
    return profile


def _qualified(tag: str, namespaces: Mapping[str, str], fail) -> str:
    """``prefix:local`` -> ``{uri}local`` (lxml's tag); a bare name is an element in no namespace."""
    prefix, _, local = tag.rpartition(":")
    if not prefix:
        return local
    if prefix not in namespaces:
        raise fail(f"root {tag!r}: unknown prefix {prefix!r} (declare it under namespaces)")
    return "{%s}%s" % (namespaces[prefix], local)


def _shipped() -> dict[str, Profile]:
    """The profiles shipped with the package; a profile is loaded after the one it extends."""
    pending = {
        entry.name.removesuffix(".yaml"): yaml.safe_load(entry.read_text(encoding="utf-8"))
        for entry in files(__name__).iterdir() if entry.name.endswith(".yaml")
    }
    loaded: dict[str, Profile] = {}
    while pending:
        ready = [name for name, data in pending.items() if data.get("extends") in (None, *loaded)]
        if not ready:
            raise ConfigError(f"mapping profiles extend each other in a circle or unknown ones: {sorted(pending)}")
        for name in sorted(ready):
            loaded[name] = _profile(name, pending.pop(name), f"{__name__}/{name}.yaml", loaded)
    return loaded


PROFILES: dict[str, Profile] = _shipped()
