"""``enrich(record)``: one MAPRecord dict in, the enriched copy and the ``(step, field)`` pairs that changed it out.

The chain is ingestion3's (``data/chain.yaml`` says which step runs on which field, in which order); a provider's
registry entry may skip steps or choose the date parser (:class:`Chain`, ``enrichment:``). A chain is built
once per provider and is pure: the same record always gives the same result, in any process.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache, lru_cache
from importlib.resources import files
from typing import Any
from urllib.parse import urlsplit

import yaml

from ingest_assets.core.registry import ENRICHMENT_STEPS
from ingest_assets.records.enrichment import normalize
from ingest_assets.records.enrichment.dates import begin_end, parse_date
from ingest_assets.records.enrichment.filters import block_formats
from ingest_assets.records.enrichment.tags import tags_of
from ingest_assets.records.enrichment.vocabularies import dcmi_type, language_name, wikidata_uri

CONTRIBUTOR_URI = "http://dp.la/api/contributor/"
TOP_FIELDS = frozenset({"provider", "dataProvider", "intermediateProvider", "isShownAt", "object", "preview",
                        "hasView", "iiifManifest", "rightsStatement"})
REQUIRED_TOP = frozenset({"provider", "dataProvider", "isShownAt", "preview"})
REQUIRED_LISTS = frozenset({"title", "rights"})  # never emptied: the record would not index
NAMED = frozenset({"contributor", "creator", "publisher", "rightsHolder", "genre", "subject"})
Changes = set[tuple[str, str]]


def rights_uri(value: str) -> str:
    """enrichEdmRights: ``http://<host><path>``, rightsstatements.org's ``/page/`` as ``/vocab/``, no query."""
    parts = urlsplit(value)
    host = re.sub(r":\d*$", "", parts.netloc.rpartition("@")[2])
    if not host:
        return value
    path = parts.path.replace("page", "vocab", 1) if parts.path.startswith("/page/") else parts.path
    return f"http://{host}{path}"


def data_provider_uri(name: str) -> str:
    """createDataProviderUri: the contributor URI DPLA mints from a data provider's name."""
    return CONTRIBUTOR_URI + re.sub("[^a-z0-9s-]", "", re.sub("( )+", "-", name.lower().strip(normalize.JAVA_TRIM)))


STRING_STEPS: dict[str, Callable[[str], str]] = {
    "strip_html": normalize.strip_html,
    "reduce_whitespace": normalize.reduce_whitespace,
    "cleanup_leading_punctuation": normalize.cleanup_leading_punctuation,
    "cleanup_ending_punctuation": normalize.cleanup_ending_punctuation,
    "strip_ending_period": normalize.strip_ending_period,
    "capitalize_first_char": normalize.capitalize_first_char,
    "strip_dbl_quotes": normalize.strip_dbl_quotes,
    "cleanup_geocoordinates": normalize.cleanup_geocoordinates,
    "format_blocklist": block_formats,
    "rights_uri": rights_uri,
}
VOCABULARY_STEPS = frozenset({"wikidata", "data_provider_uri", "dates", "language", "type"})


@cache
def chain_data() -> dict[str, dict[str, list[str]]]:
    """``data/chain.yaml``: per field (or ``field.key``), its normalizations; per field, its vocabularies."""
    return yaml.safe_load(files("ingest_assets.records.enrichment.data").joinpath("chain.yaml").read_text())


@dataclass(frozen=True)
class Chain:
    """The enrichment chain of one provider: ingestion3's, less the ``skip``ped steps, with ``dates`` read by
    ``date_builder`` (ingestion3's chain) or ``parse_date`` (its ParseDateEnrichment)."""

    skip: frozenset[str] = frozenset()
    dates: str = "date_builder"
    _normalizations: tuple = field(init=False, repr=False, compare=False)
    _vocabularies: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        unknown = set(self.skip) - set(ENRICHMENT_STEPS)
        if unknown:
            raise ValueError(f"unknown enrichment steps {sorted(unknown)}")
        data = chain_data()
        normalizations, runners = [], {}
        for target, steps in data["normalizations"].items():
            name, _, key = target.partition(".")
            kept = tuple(step for step in steps if step not in self.skip)
            if kept:
                if kept not in runners:
                    runners[kept] = _runner(kept)
                normalizations.append((name, key or None, runners[kept]))
        object.__setattr__(self, "_normalizations", tuple(normalizations))
        object.__setattr__(self, "_vocabularies", {
            name: tuple(step for step in steps if step not in self.skip) for name, steps in data["vocabularies"].items()
        })

    def enrich(self, record: dict[str, Any]) -> tuple[dict[str, Any], Changes]:
        """The enriched copy of ``record`` (not modified) and the ``(step, field)`` pairs that changed."""
        out = dict(record)
        sr = out["sourceResource"] = dict(record["sourceResource"])
        changes: Changes = set()
        if "deduplicate" not in self.skip:
            self._deduplicate(out, sr, changes)
        for name, key, steps in self._normalizations:
            holder = out if name in TOP_FIELDS else sr
            value = holder.get(name)
            if value:
                new = _normalized(name, key, value, steps, changes)
                if new is not value:
                    holder[name] = new if (new or name not in REQUIRED_TOP | REQUIRED_LISTS) else value
        self._vocabulary(out, sr, changes)
        if "tags" not in self.skip:  # from the record as mapped, as ingestion3's mappers tag it
            tags = _distinct([*(record.get("tags") or ()), *tags_of(record)])
            _put(out, "tags", tags or None, ("tags", "tags"), changes)
        return out, changes

    @staticmethod
    def _deduplicate(out: dict, sr: dict, changes: Changes) -> None:
        for holder, names in ((sr, sr.keys()), (out, ("hasView",))):
            for name in list(names):
                values = holder.get(name)
                if isinstance(values, list) and len(values) > 1:
                    distinct = _distinct(values)
                    if len(distinct) != len(values):
                        holder[name] = distinct
                        changes.add(("deduplicate", name))

    def _vocabulary(self, out: dict, sr: dict, changes: Changes) -> None:
        steps = self._vocabularies
        provider, data_provider = out.get("provider") or "", out.get("dataProvider") or ""
        if "wikidata" in steps["provider"]:
            _put(out, "providerExactMatch", _listed(wikidata_uri(provider)), ("wikidata", "provider"), changes)
        if "wikidata" in steps["dataProvider"]:
            _put(out, "dataProviderExactMatch", _listed(wikidata_uri(data_provider, provider)),
                 ("wikidata", "dataProvider"), changes)
        if "data_provider_uri" in steps["dataProvider"] and data_provider:
            _put(out, "dataProviderUri", data_provider_uri(data_provider), ("data_provider_uri", "dataProvider"),
                 changes)
        if "dates" in steps["date"] and sr.get("date"):
            _put(sr, "date", self._dates(sr["date"]) or None, ("dates", "date"), changes)
        if "language" in steps["language"] and sr.get("language"):
            _put(sr, "language", _distinct([language_name(v) or v for v in sr["language"]]), ("language", "language"),
                 changes)
        if "type" in steps["type"] and sr.get("type"):
            types = _distinct([label for value in sr["type"] if (label := dcmi_type(value))])
            _put(sr, "type", types or None, ("type", "type"), changes)

    def _dates(self, spans: list[dict]) -> list[dict]:
        """DateBuilder (or ParseDateEnrichment) on each date's label: begin and end replaced, a date with no
        label dropped, as ingestion3 builds each date anew from its original label."""
        out = []
        for span in spans:
            labels = span.get("providedLabel") or []
            if not labels:
                continue
            if self.dates == "parse_date":
                parsed = parse_date(labels[0])
                begin, end = (parsed.begin, parsed.end) if parsed else (span.get("begin"), span.get("end"))
            else:
                begin, end = begin_end(labels[0])
            out.append(span if (begin, end) == (span.get("begin"), span.get("end"))
                       else {**span, "begin": begin, "end": end})
        return _distinct(out)


def _listed(uri: str | None) -> list[str] | None:
    return [uri] if uri else None


def _put(holder: dict, name: str, value: Any, change: tuple[str, str], changes: Changes) -> None:
    if value != holder.get(name):
        holder[name] = value
        changes.add(change)


def _distinct(values: list) -> list:
    """Exact duplicates out, first kept (Scala's ``distinct``); values may be dicts."""
    if all(isinstance(value, str) for value in values):
        return list(dict.fromkeys(values))
    out: list = []
    for value in values:
        if value not in out:
            out.append(value)
    return out


def _runner(steps: tuple[str, ...]) -> Callable[[str], tuple[str, tuple[str, ...]]]:
    """``value -> (normalized value, the steps that changed it)``, cached: names, subjects, types and rights
    statements repeat from record to record."""
    functions = tuple((step, STRING_STEPS[step]) for step in steps)

    @lru_cache(maxsize=65536)
    def run(value: str) -> tuple[str, tuple[str, ...]]:
        changed = []
        for step, function in functions:
            new = function(value)
            if new != value:
                changed.append(step)
                value = new
        return value, tuple(changed)

    return run


def _run(value: str, run: Callable, name: str, changes: Changes) -> str:
    new, changed = run(value)
    for step in changed:
        changes.add((step, name))
    return new


def _normalized(name: str, key: str | None, value: Any, steps: tuple, changes: Changes) -> Any:
    """The field's value with ``steps`` applied (the same object when nothing changed): strings, lists of
    strings, or the ``key`` of each structured value; empty results are dropped."""
    if isinstance(value, str):
        new = _run(value, steps, name, changes)
        return value if new == value else (new or None)
    if key is None:
        new_values = [_run(v, steps, name, changes) if isinstance(v, str) else v for v in value]
        return value if new_values == value else [v for v in new_values if v]
    changed, new_values = False, []
    for item in value:
        new_item = _item(name, key, item, steps, changes)
        changed = changed or new_item is not item
        if new_item is not None:
            new_values.append(new_item)
    return new_values if changed else value


def _item(name: str, key: str, item: dict, steps: tuple, changes: Changes) -> dict | None:
    current = item.get(key)
    if isinstance(current, str):
        new: Any = _run(current, steps, name, changes) or None
    elif isinstance(current, list):  # a timespan's labels
        new = [v for v in (_run(v, steps, name, changes) for v in current) if v] or None
    else:
        return item
    if new == current:
        return item
    if new is None and name in NAMED and key == "name":
        return None  # an agent or concept without a name is no value
    if new is None and name == "spatial" and key == "name":
        new = ""  # a place's name is a required string
    return {**item, key: new}


@cache
def default_chain() -> Chain:
    return Chain()


def enrich(record: dict[str, Any], chain: Chain | None = None) -> tuple[dict[str, Any], Changes]:
    """Enrich one MAPRecord with ``chain`` (ingestion3's whole chain by default)."""
    return (chain or default_chain()).enrich(record)


def chain_for(entry: Any) -> Chain:
    """The chain a registry ``ProviderEntry`` asks for (its ``enrichment:`` block)."""
    settings = entry.settings.enrichment
    return Chain(skip=frozenset(settings.skip), dates=settings.dates)
