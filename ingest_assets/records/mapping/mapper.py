"""OriginalRecord -> MAPRecord (MAP4_x) for one provider: a profile plus registry overrides.

The provider's label, URI and DPLA id minting key come from the registry entry (``label``, ``provider_uri``,
``id_prefix``), else from the profile's ``provider:`` block, else (label, key) from the entry's name.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from lxml import etree

from ingest_assets.core.errors import ConfigError, context
from ingest_assets.core.settings import Settings
from ingest_assets.core.xml_input import UnsafeXML, parse_document, refuse_declared_entities, safe_parser
from ingest_assets.records.mapping.fields import FIELDS, SHAPERS, SR_FIELDS, SR_REQUIRED_ARRAYS
from ingest_assets.records.mapping.json_paths import WideNumber, compile_path, decode, exact_numbers
from ingest_assets.records.mapping.profiles import Catalog, Profile, catalog, compile_rules, merge_rules, paths_for
from ingest_assets.records.mapping.rules import Refused, Structured, compile_rule, label

ITEM_URI = "http://dp.la/api/items/"
_URL = re.compile(r"^https?://[^\s/]+\S*$")
_URL_FIELDS = frozenset({"isShownAt", "object", "preview", "iiifManifest"})
INGEST_TYPES = ("item", "collection")
_ONE, _URL_ONE, _TOP = object(), object(), object()  # rule targets, see Mapper.__init__
OAI_METADATA = "{http://www.openarchives.org/OAI/2.0/}metadata"
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


def base_id(prefix: str | None, local_id: str) -> str:
    """What a DPLA id is minted from (ingestion3's ``prehashId``): ``<prefix>--<local id>``, or the local id alone
    for a hub that mints without its name (``prefix`` None or empty)."""
    return f"{prefix}--{local_id}" if prefix else local_id


def mint_id(prefix: str | None, local_id: str) -> str:
    """The DPLA id, as ingestion3 mints it: md5 hex of :func:`base_id`."""
    return hashlib.md5(base_id(prefix, local_id).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ProviderSettings:
    """Who the records are mapped for: the name, the label and URI the records carry, the DPLA id prefix."""

    name: str
    label: str
    uri: str | None = None
    id_prefix: str | None = None


class Mapper:
    """Maps OriginalRecord dicts of one provider. Rules and XPaths are compiled once here."""

    def __init__(self, provider: ProviderSettings, profile: Profile, rules: Mapping[str, Any],
                 catalog_: Catalog | None = None):
        self.provider = provider
        self.profile = profile
        self._parser = safe_parser(remove_comments=True)
        self._paths = paths_for(profile)
        self._embedded = None if profile.embedded_xml is None else compile_path(profile.embedded_xml)
        vocabularies = (catalog_ or catalog()).vocabularies
        compiled = compile_rules(profile, rules, self._paths, vocabularies)
        self._dpla_id = None if profile.dpla_id_rule is None else compile_rule(
            profile.dpla_id_rule, field="dpla_id", paths=self._paths, source=profile.rule_language,
            vocabularies=vocabularies)
        # (name, rule, target): target is _URL_ONE / _ONE (first value, on the record), _TOP (the list, on the
        # record), else the shaper of the sourceResource values (None: the strings themselves). A rule that may
        # give structured values is wrapped to give labels where only strings have a place.
        self._rules: list[tuple[str, Any, Any]] = []
        for name, rule in compiled.items():
            section, shape = FIELDS[name]
            if shape == "one":
                target = _URL_ONE if name in _URL_FIELDS else _ONE
            else:
                target = _TOP if section == "top" else SHAPERS.get(shape)
            if rule.structured:
                rule, target = (rule, _with_properties(target)) if callable(target) else (_labels(rule), target)
            self._rules.append((name, rule, target))

    def mint(self, local_id: str) -> str:
        return mint_id(self.provider.id_prefix, local_id)

    def map(self, original: Mapping[str, Any]) -> MappingResult:
        local_id = str(original.get("id") or "")
        if original.get("deleted"):
            return MappingResult(None, [Message(DELETED, "", local_id, "", "deleted at the source; not mapped")])
        if not local_id:
            return _fail(MISSING_REQUIRED, "id", "", "", "the OriginalRecord has no local id to mint the DPLA id from")
        document = original.get("document") or ""
        try:
            return self._mapped(original, local_id, document)
        except WideNumber:  # an integer longer than 64 bits, maybe: read again, every digit kept
            with exact_numbers():
                return self._mapped(original, local_id, document)

    def _mapped(self, original: Mapping[str, Any], local_id: str, document: str) -> MappingResult:
        found = self._document(original, local_id, document)
        if isinstance(found, MappingResult):
            return found
        dpla_id = self.mint(local_id)
        if self._dpla_id is not None:  # the id the record carries
            carried = [label(value) for value in self._dpla_id(found)]
            if not carried:
                return _fail(MISSING_REQUIRED, "id", local_id, "", "the record carries no DPLA id (profile's dpla_id)")
            dpla_id = carried[0]
        try:
            top, sr, messages = self._values(found, local_id)
        except Refused as exc:
            return _fail(INVALID_VALUE, exc.field, local_id, exc.value, exc.reason)
        return self._record(original, local_id, dpla_id, document, top, sr, messages)

    def _document(self, original: Mapping[str, Any], local_id: str, document: str) -> Any:
        """The selection of the record's paths, or the failed MappingResult."""
        mimetype, source = original.get("mimetype"), self.profile.source
        if mimetype not in MIMETYPES[source]:
            return _fail(UNPARSEABLE, "document", local_id, str(mimetype),
                         f"mapping {self.profile.name!r} reads {source.upper()} documents, not {mimetype}")
        if source == "json":
            try:
                parsed = decode(document)
            except ValueError as exc:
                return _fail(UNPARSEABLE, "document", local_id, document[:200], f"not well-formed JSON: {exc}")
            if self._embedded is None:
                return self._paths.select(parsed)
            embedded = self._embedded(parsed)
            if not isinstance(embedded, str) or not embedded.strip():
                return _fail(UNPARSEABLE, "document", local_id, document[:200],
                             f"no XML document at {self.profile.embedded_xml!r}")
            xml = self._xml(embedded, local_id)
            if isinstance(xml, MappingResult):
                return xml
            try:  # a document read from a file or a harvest was checked when read; an embedded one is checked here
                refuse_declared_entities(xml[1])
            except UnsafeXML as exc:
                return _fail(UNPARSEABLE, "document", local_id, embedded[:200], f"embedded XML: {exc}")
            return self._paths.select(parsed, parsed, xml)
        xml = self._xml(document, local_id)
        return xml if isinstance(xml, MappingResult) else self._paths.select(*xml)

    def _xml(self, document: str, local_id: str) -> tuple[etree._Element, etree._Element] | MappingResult:
        """(metadata root, record) of an XML document, or the failed MappingResult."""
        try:
            record = parse_document(document, self._parser, self.profile.namespaces)
        except (etree.XMLSyntaxError, ValueError) as exc:
            return _fail(UNPARSEABLE, "document", local_id, document[:200], f"not well-formed XML: {exc}")
        if self.profile.aliases:
            read_aliases(record, self.profile.aliases)
        root = find_root(record, self.profile.root_tags)
        if root is None:
            return _fail(UNPARSEABLE, "document", local_id, document[:200],
                         f"no {self.profile.name} metadata element found")
        return root, record

    def _values(self, found: Any, local_id: str) -> tuple[dict[str, Any], dict[str, Any], list[Message]]:
        messages: list[Message] = []
        top: dict[str, Any] = {}
        sr: dict[str, Any] = {}
        for name, rule, target in self._rules:
            try:
                values = rule(found)
            except Refused as exc:
                exc.field = name
                raise
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
        return top, sr, messages

    def _record(self, original: Mapping[str, Any], local_id: str, dpla_id: str, document: str, top: dict[str, Any],
                sr: dict[str, Any], messages: list[Message]) -> MappingResult:
        ingest_type = top.get("ingestType", "item")
        if ingest_type not in INGEST_TYPES:
            messages.append(Message(INVALID_VALUE, "ingestType", local_id, ingest_type, "not 'item' or 'collection'"))
            ingest_type = "item"
        for name in SR_REQUIRED_ARRAYS:
            sr.setdefault(name, [])
        invalid = {m.field for m in messages}
        missing = [name for name in _missing_required(top, sr, self.provider.label) if name not in invalid]
        if missing or "isShownAt" in invalid:
            messages.extend(
                Message(MISSING_REQUIRED, name, local_id, "", "required field has no value") for name in missing
            )
            return MappingResult(None, messages)
        for name in SR_FIELDS:
            sr.setdefault(name, None)
        obj = top.get("object")
        record = {
            "id": dpla_id,
            "ingestType": ingest_type,
            "ingestDate": int(original.get("ingestDate") or 0),
            "dataProvider": top["dataProvider"],
            "hasView": top.get("hasView"),
            "intermediateProvider": top.get("intermediateProvider"),
            "isShownAt": top["isShownAt"],
            "object": obj,
            "originalRecord": document,
            "preview": top.get("preview") or obj or top["isShownAt"],
            "provider": self.provider.label,
            "providerUri": self.provider.uri,
            "rightsStatement": top.get("rightsStatement"),
            "sourceResource": sr,
            "title": sr["title"][0] if ingest_type == "collection" else None,  # MAP: collection records only
            "iiifManifest": top.get("iiifManifest"),
            "originalId": local_id,
            "dplaUri": ITEM_URI + dpla_id,
            "mediaMaster": top.get("mediaMaster"),
        }
        return MappingResult(record, messages)


def _labels(rule: Callable[[Any], list]) -> Callable[[Any], list]:
    """``rule`` giving the labels of its structured values (for a field whose values are strings)."""
    return lambda found: [label(value) for value in rule(found)]


def _with_properties(shaper: Callable[[str], dict[str, Any]]) -> Callable[[Any], dict[str, Any]]:
    """``shaper`` that also fills in a structured value's sub-properties."""
    def shaped(value: Any) -> dict[str, Any]:
        if not isinstance(value, Structured):
            return shaper(value)
        out = shaper(value.label)
        out.update((name, given) for name, given in value.properties.items() if given)
        return out

    return shaped


def find_root(doc: etree._Element, tags: tuple[str, ...]) -> etree._Element | None:
    """The metadata element: the document itself, the first descendant with one of ``tags``,
    or else the first element inside an OAI-PMH ``<metadata>``."""
    if doc.tag in tags:
        return doc
    for element in doc.iter(*tags):
        return element
    for metadata in doc.iter(OAI_METADATA):
        for child in metadata.iterchildren(tag=etree.Element):
            return child
    return None


def read_aliases(record: etree._Element, aliases: Mapping[str, str]) -> None:
    """Elements in an aliased namespace are renamed into the namespace they are read as, in place."""
    for element in record.iter(etree.Element):
        tag = element.tag
        if tag[0] == "{":
            uri, _, local = tag[1:].partition("}")
            if uri in aliases:
                element.tag = "{%s}%s" % (aliases[uri], local)


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


# ---- from a registry entry ---------------------------------------------------------------------------------

def profile_for(entry: Any, catalog_: Catalog | None = None) -> Profile:
    """The profile a registry ``ProviderEntry`` names (``mapping:``: a known profile, or a file relative to the
    registry file); a ConfigError names the entry and the registry file."""
    mapping = entry.settings.mapping
    catalog_ = catalog_ or deployment_catalog()
    if mapping is None:
        raise entry.error(f"{entry.name}.mapping", f"is missing (one of {sorted(catalog_.profiles)}, or a profile file)")
    relative_to = Path(entry.source).parent if entry.source and not entry.source.startswith("<") else None
    try:
        return catalog_.profile(mapping, relative_to)
    except ConfigError as exc:
        raise ConfigError(f"registry key '{entry.name}.mapping': {exc.message}", provider=entry.name,
                          file=exc.file or entry.source) from None


def provider_settings(entry: Any, profile: Profile) -> ProviderSettings:
    """Label, URI and DPLA id prefix: the registry entry's, else the profile's, else (label, key) its name."""
    given = entry.settings
    prefix = given.id_prefix if entry.has("id_prefix") else profile.provider.id_prefix
    return ProviderSettings(
        name=entry.name,
        label=given.label or profile.provider.label or entry.name,
        uri=given.provider_uri or profile.provider.uri,
        id_prefix=entry.name if prefix is None else prefix or None,
    )


def minter_for(entry: Any) -> Callable[[str], str]:
    """``local id -> DPLA id`` for a registry entry (as its mapper mints them), without compiling its rules."""
    prefix = provider_settings(entry, profile_for(entry)).id_prefix
    return lambda local_id: mint_id(prefix, local_id)


def base_id_for(entry: Any) -> Callable[[str], str]:
    """``local id -> what its DPLA id is minted from`` (ingestion3's ``prehashId``) for a registry entry."""
    return partial(base_id, provider_settings(entry, profile_for(entry)).id_prefix)


def mapper_for(entry: Any) -> Mapper:
    """Build the mapper a registry ``ProviderEntry`` asks for (``mapping:`` + ``mapping_overrides:``)."""
    catalog_ = deployment_catalog()
    profile = profile_for(entry, catalog_)
    with context(provider=entry.name, file=entry.source):
        return build_mapper(provider_settings(entry, profile), profile, entry.settings.mapping_overrides, catalog_)


def build_mapper(provider: ProviderSettings, profile: Profile, overrides: Any,
                 catalog_: Catalog | None = None) -> Mapper:
    """A mapper for ``profile`` with per-field ``overrides`` (as the registry's ``mapping_overrides``) merged on."""
    def fail(reason: str) -> ConfigError:
        return ConfigError(f"mapping_overrides {reason}", provider=provider.name)

    rules = merge_rules(profile.rules, overrides, fail)
    try:
        return Mapper(provider, profile, rules, catalog_)
    except ConfigError as exc:  # the profile's own rules compiled when it loaded: the overrides broke this one
        raise fail(f"(merged onto profile {profile.name!r}): {exc.message}") from None


def deployment_catalog() -> Catalog:
    """The shipped profiles and vocabularies, with the settings' profiles folder (``INGEST_PROFILES``)."""
    return catalog(Settings.current().profiles_path)


_CHECKED: dict[tuple, tuple[Catalog, Profile]] = {}  # what check_registry compiled already, and with what
_MAX_CHECKED = 4096


def check_registry(registry: Any) -> None:
    """Compile every entry's profile and rules (profile, ``mapping_overrides``, label, URI, id prefix) before
    anything runs: an entry naming an unknown profile or carrying a rule that does not compile is refused into
    ``registry.problems`` (a ConfigError naming the entry and the file; asking for the entry raises it), so it stops
    only itself. Entries already checked with the same profile and settings are not compiled again."""
    catalog_ = deployment_catalog()
    for entry in list(registry.values()):
        if entry.settings.mapping is None and not entry.settings.mapping_overrides:
            continue
        try:
            profile = profile_for(entry, catalog_)
            given = entry.settings.model_dump(include={"mapping", "mapping_overrides", "label", "provider_uri",
                                                       "id_prefix"})
            key = (entry.name, entry.source, json.dumps(given, sort_keys=True, default=str))
            checked = _CHECKED.get(key)
            if checked is not None and checked[0] is catalog_ and checked[1] is profile:
                continue
            mapper_for(entry)
        except ConfigError as exc:
            registry.refuse(entry.name, exc)
            continue
        if len(_CHECKED) >= _MAX_CHECKED:
            _CHECKED.clear()
        _CHECKED[key] = (catalog_, profile)
