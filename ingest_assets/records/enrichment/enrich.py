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
from itertools import repeat
from importlib.resources import files
from typing import Any, NamedTuple
from urllib.parse import urlsplit

import yaml

from ingest_assets.core.registry import ENRICHMENT_STEPS
from ingest_assets.records.enrichment import normalize
from ingest_assets.records.enrichment.dates import begin_end, parse_date
from ingest_assets.records.enrichment.filters import block_formats
from ingest_assets.records.enrichment.tags import tags_of
from ingest_assets.records.enrichment.vocabularies import dcmi_type, language_name, wikidata_uris

CONTRIBUTOR_URI = "http://dp.la/api/contributor/"
TOP_FIELDS = frozenset({"provider", "dataProvider", "intermediateProvider", "isShownAt", "object", "preview",
                        "hasView", "iiifManifest", "rightsStatement"})
REQUIRED_TOP = frozenset({"provider", "dataProvider", "isShownAt", "preview"})
REQUIRED_LISTS = frozenset({"title", "rights"})  # never emptied: the record would not index
REQUIRED = REQUIRED_TOP | REQUIRED_LISTS
NAMED = frozenset({"contributor", "creator", "publisher", "rightsHolder", "genre", "subject"})
LISTED_KEYS = frozenset({"providedLabel"})  # keys of structured values that hold lists (a timespan's labels)
SAME, DROP = object(), object()  # a structured value's key stays as it is; the whole value goes
VALUES_CACHED = 65536  # distinct values remembered per chain of normalizations
LISTS_CACHED = 16384  # distinct lists of values remembered per chain of normalizations
Changes = set[tuple[str, str]]


def rights_uri(value: str) -> str:
    """enrichEdmRights: ``http://<host><path>``, rightsstatements.org's ``/page/`` as ``/vocab/``, no query."""
    parts = urlsplit(value)
    host = re.sub(r":\d*$", "", parts.netloc.rpartition("@")[2])
    if not host:
        return value
    path = parts.path.replace("page", "vocab", 1) if parts.path.startswith("/page/") else parts.path
    return f"http://{host}{path}"


@lru_cache(maxsize=4096)
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
    _top: tuple = field(init=False, repr=False, compare=False)
    _source: dict = field(init=False, repr=False, compare=False)
    _vocabularies: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        unknown = set(self.skip) - set(ENRICHMENT_STEPS)
        if unknown:
            raise ValueError(f"unknown enrichment steps {sorted(unknown)}")
        data = chain_data()
        dedupe = "deduplicate" not in self.skip
        top: dict[str, list] = {"hasView": []} if dedupe else {}
        source: dict[str, list] = {}
        runners: dict[tuple[str, ...], Runner] = {}
        for target, steps in data["normalizations"].items():
            name, _, key = target.partition(".")
            kept = tuple(step for step in steps if step not in self.skip)
            if kept:
                if kept not in runners:
                    runners[kept] = _runner(kept)
                (top if name in TOP_FIELDS else source).setdefault(name, []).append((key or None, runners[kept]))
        # per field, its (key, runner) pairs in the chain's order; top-level fields with whether to deduplicate
        object.__setattr__(self, "_top", tuple((name, tuple(keys), dedupe and name == "hasView")
                                               for name, keys in top.items()))
        object.__setattr__(self, "_source", {name: tuple(keys) for name, keys in source.items()})
        object.__setattr__(self, "_vocabularies", {
            name: tuple(step for step in steps if step not in self.skip) for name, steps in data["vocabularies"].items()
        })

    def enrich(self, record: dict[str, Any]) -> tuple[dict[str, Any], Changes]:
        """The enriched copy of ``record`` (not modified) and the ``(step, field)`` pairs that changed."""
        out = dict(record)
        sr = out["sourceResource"] = dict(record["sourceResource"])
        changes: Changes = set()
        for name, keys, dedupe in self._top:
            if value := out.get(name):
                _field(out, name, value, keys, dedupe, changes)
        # each field is deduplicated, then normalized, on its own: one pass over the fields the record has (read
        # from the record, written to its copy)
        dedupe, source = "deduplicate" not in self.skip, self._source
        for name, value in record["sourceResource"].items():
            if value:
                _field(sr, name, value, source.get(name, ()), dedupe, changes)
        self._vocabulary(out, sr, changes)
        if "tags" not in self.skip:  # from the record as mapped, as ingestion3's mappers tag it
            tags = _distinct([*(record.get("tags") or ()), *tags_of(record)])
            _put(out, "tags", tags or None, ("tags", "tags"), changes)
        return out, changes

    def _vocabulary(self, out: dict, sr: dict, changes: Changes) -> None:
        steps = self._vocabularies
        provider, data_provider = out.get("provider") or "", out.get("dataProvider") or ""
        self._wikidata(out, provider, data_provider, changes)
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

    def _wikidata(self, out: dict, provider: str, data_provider: str, changes: Changes) -> None:
        steps = self._vocabularies
        of_provider, of_data_provider = "wikidata" in steps["provider"], "wikidata" in steps["dataProvider"]
        if of_provider or of_data_provider:
            provider_uri, institution_uri = wikidata_uris(provider, data_provider)
            if of_provider:
                _put(out, "providerExactMatch", _listed(provider_uri), ("wikidata", "provider"), changes)
            if of_data_provider:
                _put(out, "dataProviderExactMatch", _listed(institution_uri), ("wikidata", "dataProvider"), changes)

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


def _field(holder: dict, name: str, value: Any, keys: tuple, dedupe: bool, changes: Changes) -> None:
    """One field deduplicated (``dedupe``), then normalized by each of its ``(key, runner)`` pairs in turn."""
    if dedupe and isinstance(value, list) and len(value) > 1:
        distinct = _distinct(value)
        if len(distinct) != len(value):
            value = holder[name] = distinct
            changes.add(("deduplicate", name))
    for key, run in keys:
        if not value:
            return
        new = _normalized(name, key, value, run, changes)
        if new is not value:
            value = holder[name] = new if (new or name not in REQUIRED) else value


def _listed(uri: str | None) -> list[str] | None:
    return [uri] if uri else None


def _put(holder: dict, name: str, value: Any, change: tuple[str, str], changes: Changes) -> None:
    if value != holder.get(name):
        holder[name] = value
        changes.add(change)


def _distinct(values: list) -> list:
    """Exact duplicates out, first kept (Scala's ``distinct``); values may be dicts."""
    if len(values) < 2:
        return list(values)
    if not isinstance(values[0], dict):
        try:  # hashable values (strings): equal values hash equal, so a dict keeps what the list below keeps
            return list(dict.fromkeys(values))
        except TypeError:  # an unhashable value further on
            pass
    elif _all_differ(values):
        return list(values)
    out: list = []
    for value in values:
        if value not in out:
            out.append(value)
    return out


def _all_differ(values: list) -> bool:
    """Whether no two dicts can be equal because their first key's values all differ (names, titles): one set
    instead of comparing every pair."""
    try:
        probe = next(iter(values[0]))
        return len(set(map(dict.get, values, repeat(probe)))) == len(values)
    except (TypeError, StopIteration):  # not dicts, an empty one, or unhashable values (labels): compare pairs
        return False


class Runner(NamedTuple):
    """One chain of string normalizations, cached: names, subjects, types and rights statements repeat from record
    to record, and so do whole lists of them. ``one(value)``: the result and the steps that changed it;
    ``many(name, values)``: a list's new values and its changes; ``keyed(name, key, values)``: the new ``key`` of
    each structured value and their changes."""

    one: Callable[[str], tuple[str, tuple[str, ...]]]
    many: Callable[[str, tuple], tuple[tuple | None, tuple[tuple[str, str], ...]]]
    keyed: Callable[[str, str, tuple], tuple[tuple | None, tuple[tuple[str, str], ...]]]


def _runner(steps: tuple[str, ...]) -> Runner:
    functions = tuple((step, STRING_STEPS[step]) for step in steps)

    @lru_cache(maxsize=VALUES_CACHED)
    def one(value: str) -> tuple[str, tuple[str, ...]]:
        changed = []
        for step, function in functions:
            new = function(value)
            if new != value:
                changed.append(step)
                value = new
        return value, tuple(changed)

    @lru_cache(maxsize=LISTS_CACHED)
    def many(name: str, values: tuple) -> tuple[tuple | None, tuple[tuple[str, str], ...]]:
        """A list's strings normalized, empty results dropped (``None``: nothing changed), and its changes."""
        changes: Changes = set()
        new_values = tuple(_run(value, one, name, changes) if isinstance(value, str) else value for value in values)
        return (None if new_values == values else tuple(v for v in new_values if v)), tuple(changes)

    @lru_cache(maxsize=LISTS_CACHED)
    def keyed(name: str, key: str, values: tuple) -> tuple[tuple | None, tuple[tuple[str, str], ...]]:
        """Each structured value's new ``key`` (:func:`_key_value`; ``None``: none changed), and their changes."""
        changes: Changes = set()
        outcomes = tuple(_key_value(name, key, value, one, changes) for value in values)
        return (None if all(outcome is SAME for outcome in outcomes) else outcomes), tuple(changes)

    return Runner(one, many, keyed)


def _run(value: str, one: Callable, name: str, changes: Changes) -> str:
    new, changed = one(value)
    for step in changed:
        changes.add((step, name))
    return new


def _normalized(name: str, key: str | None, value: Any, run: Runner, changes: Changes) -> Any:
    """The field's value with ``run``'s steps applied (the same object when nothing changed): strings, lists of
    strings, or the ``key`` of each structured value; empty results are dropped."""
    if isinstance(value, str):
        new = _run(value, run.one, name, changes)
        return value if new == value else (new or None)
    if key is None:
        values = tuple(value)
        try:
            new_values, noted = run.many(name, values)
        except TypeError:  # an unhashable value in a list of strings: not cached
            new_values, noted = run.many.__wrapped__(name, values)
        changes.update(noted)
        return value if new_values is None else list(new_values)
    if key in LISTED_KEYS:
        return _items(name, key, value, run.one, changes)
    try:  # map in C: no per-item Python call; not a dict or an unhashable key's value: value by value
        outcomes, noted = run.keyed(name, key, tuple(map(dict.get, value, repeat(key))))
    except TypeError:
        return _items(name, key, value, run.one, changes)
    changes.update(noted)
    if outcomes is None:
        return value
    return [item if new is SAME else {**item, key: new} for item, new in zip(value, outcomes) if new is not DROP]


def _items(name: str, key: str, value: list, one: Callable, changes: Changes) -> list:
    """:func:`_normalized` of structured values one by one, uncached."""
    changed, new_items = False, []
    for item in value:
        new = _key_value(name, key, item.get(key), one, changes)
        if new is SAME:
            new_items.append(item)
            continue
        changed = True
        if new is not DROP:
            new_items.append({**item, key: new})
    return new_items if changed else value


def _key_value(name: str, key: str, current: Any, one: Callable, changes: Changes) -> Any:
    """The new ``key`` of one structured value: ``SAME`` when it stays, ``DROP`` when the whole value goes."""
    if isinstance(current, str):
        new = _run(current, one, name, changes) or None
    elif isinstance(current, list):  # a timespan's labels
        new = []
        for label in current:
            if label := _run(label, one, name, changes):
                new.append(label)
        new = new or None
    else:
        return SAME
    if new == current:
        return SAME
    if new is None and name in NAMED and key == "name":
        return DROP  # an agent or concept without a name is no value
    if new is None and name == "spatial" and key == "name":
        return ""  # a place's name is a required string
    return new


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
