"""OriginalRecord -> MAPRecord (MAP4_x) for one provider: a named mapping plus registry overrides."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lxml import etree

from ingest_assets.core import json_input
from ingest_assets.core.errors import ConfigError
from ingest_assets.records.mapping.fields import FIELDS, SHAPERS, SR_FIELDS, SR_REQUIRED_ARRAYS
from ingest_assets.records.mapping.profiles import PROFILES, Profile, merge_rules, paths_for
from ingest_assets.records.mapping.rules import Rule, compile_rule
from ingest_assets.records.mapping.xml import find_root, make_parser, parse

_URL = re.compile(r"^https?://[^\s/]+\S*$")
_URL_FIELDS = frozenset({"isShownAt", "object", "preview", "providerUri"})
INGEST_TYPES = ("item", "collection")
_ONE, _URL_ONE, _TOP = object(), object(), object()  # rule targets, see Mapper.__init__
MIMETYPES = {
    "xml": frozenset({"application_xml", "application/xml"}),
    "json": frozenset({"application_json", "application/json"}),
}

# Message kinds. Only "deleted" is not a failure; "invalid_value" on an optional field is a warning.
DELETED = "deleted"
MISSING_REQUIRED = "missing_required"
INVALID_VALUE = "invalid_value"
UNPARSEABLE = "unparseable"


@dataclass(frozen=True, slots=True)
class Message:
    """One mapping message: ``record`` is the provider's local id."""

    kind: str
    field: str
    record: str
    value: str
    reason: str


@dataclass(slots=True)
class MappingResult:
    record: dict[str, Any] | None
    messages: list[Message] = field(default_factory=list)

    @property
    def deleted(self) -> bool:
        return self.record is None and any(m.kind == DELETED for m in self.messages)

    @property
    def failed(self) -> bool:
        return self.record is None and not self.deleted


def mint_id(provider: str, local_id: str) -> str:
    """The DPLA id, as ingestion3 mints it: md5 hex of ``<provider>--<local id>``."""
    return hashlib.md5(f"{provider}--{local_id}".encode("utf-8")).hexdigest()


class Mapper:
    """Maps OriginalRecord dicts of one provider. Rules and XPaths are compiled once here."""

    def __init__(self, provider: str, label: str, profile: Profile, rules: Mapping[str, Mapping[str, Any]]):
        self.provider = provider
        self.label = label
        self.profile = profile
        self._parser = make_parser()
        self._paths = paths_for(profile)
        # (name, rule, target): target is _URL_ONE / _ONE (first value, on the record), _TOP (the list, on the
        # record), else the shaper of the sourceResource values (None: the strings themselves).
        self._rules: list[tuple[str, Rule, Any]] = []
        for name, spec in rules.items():
            section, shape = FIELDS[name]
            if shape == "one":
                target = _URL_ONE if name in _URL_FIELDS else _ONE
            else:
                target = _TOP if section == "top" else SHAPERS.get(shape)
            self._rules.append((name, compile_rule(spec, provider=provider, field=name, paths=self._paths), target))

    def map(self, original: Mapping[str, Any]) -> MappingResult:
        local_id = str(original.get("id") or "")
        if original.get("deleted"):
            return MappingResult(None, [Message(DELETED, "", local_id, "", "deleted at the source; not mapped")])
        if not local_id:
            return _fail(MISSING_REQUIRED, "id", "", "", "the OriginalRecord has no local id to mint the DPLA id from")
        mimetype = original.get("mimetype")
        source = self.profile.source
        if mimetype not in MIMETYPES[source]:
            return _fail(UNPARSEABLE, "document", local_id, str(mimetype),
                         f"mapping {self.profile.name!r} reads {source.upper()} documents, not {mimetype}")
        document = original.get("document") or ""
        if source == "json":
            try:
                root = json_input.loads(document)
            except ValueError as exc:
                return _fail(UNPARSEABLE, "document", local_id, document[:200], f"not well-formed JSON: {exc}")
        else:
            try:
                root = find_root(parse(document, self._parser), self.profile.root_tags)
            except (etree.XMLSyntaxError, ValueError) as exc:
                return _fail(UNPARSEABLE, "document", local_id, document[:200], f"not well-formed XML: {exc}")
            if root is None:
                return _fail(UNPARSEABLE, "document", local_id, document[:200],
                             f"no {self.profile.name} metadata element found")

        messages: list[Message] = []
        top: dict[str, Any] = {}
        sr: dict[str, Any] = {}
        found = self._paths.select(root)
        for name, rule, target in self._rules:
            values = rule(found)
            if not values:
                continue
            if target is None:
                sr[name] = values
            elif target is _ONE:
                top[name] = values[0]
            elif target is _URL_ONE:
                value = values[0]
                if not _URL.match(value):
                    messages.append(Message(INVALID_VALUE, name, local_id, value, "not an http(s) URL"))
                    continue
                top[name] = value
            elif target is _TOP:
                top[name] = values
            else:
                sr[name] = [target(v) for v in values]

        ingest_type = top.get("ingestType", "item")
        if ingest_type not in INGEST_TYPES:
            messages.append(Message(INVALID_VALUE, "ingestType", local_id, ingest_type, "not 'item' or 'collection'"))
            ingest_type = "item"
        for name in SR_REQUIRED_ARRAYS:
            sr.setdefault(name, [])
        invalid = {m.field for m in messages}
        missing = [name for name in _missing_required(top, sr, self.label) if name not in invalid]
        if missing or "isShownAt" in invalid:
            messages.extend(
                Message(MISSING_REQUIRED, name, local_id, "", "required field has no value") for name in missing
            )
            return MappingResult(None, messages)

        for name in SR_FIELDS:
            sr.setdefault(name, None)
        obj = top.get("object")
        record = {
            "id": mint_id(self.provider, local_id),
            "ingestType": ingest_type,
            "ingestDate": int(original.get("ingestDate") or 0),
            "dataProvider": top["dataProvider"],
            "hasView": top.get("hasView"),
            "intermediateProvider": top.get("intermediateProvider"),
            "isShownAt": top["isShownAt"],
            "object": obj,
            "originalRecord": document,
            "preview": top.get("preview") or obj or top["isShownAt"],
            "provider": self.label,
            "providerUri": top.get("providerUri"),
            "rightsStatement": top.get("rightsStatement"),
            "sourceResource": sr,
            "title": sr["title"][0] if ingest_type == "collection" else None,  # MAP: collection records only
        }
        return MappingResult(record, messages)


def _missing_required(top: Mapping[str, Any], sr: Mapping[str, Any], provider_label: str) -> list[str]:
    missing = [name for name in ("dataProvider", "isShownAt") if not top.get(name)]
    if not sr["title"]:
        missing.append("title")
    if not sr["rights"] and not top.get("rightsStatement"):
        missing.append("rights")
    if not provider_label.strip():
        missing.append("provider")
    return missing


def _fail(kind: str, field_name: str, local_id: str, value: str, reason: str) -> MappingResult:
    return MappingResult(None, [Message(kind, field_name, local_id, value, reason)])


def mapper_for(provider: Any) -> Mapper:
    """Build the mapper a registry ``ProviderEntry`` asks for (``mapping:`` + ``mapping_overrides:``)."""
    name = provider.name
    mapping = provider.settings.mapping
    if mapping is None:
        raise ConfigError(f"registry entry has no 'mapping' (one of {sorted(PROFILES)})", provider=name)
    if mapping not in PROFILES:
        raise ConfigError(f"unknown mapping {mapping!r} (known: {sorted(PROFILES)})", provider=name)
    return build_mapper(name, provider.label, PROFILES[mapping], provider.settings.mapping_overrides)


def build_mapper(provider: str, label: str, profile: Profile, overrides: Any) -> Mapper:
    """A mapper for ``profile`` with per-field ``overrides`` (as the registry's ``mapping_overrides``) merged on."""
    rules = merge_rules(profile.rules, overrides,
                        lambda reason: ConfigError(f"mapping_overrides {reason}", provider=provider))
    return Mapper(provider, label, profile, rules)
