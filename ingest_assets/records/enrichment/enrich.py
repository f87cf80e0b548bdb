"""``enrich(record)``: one MAPRecord dict in, an enriched copy and the names of the fields it changed out."""

from __future__ import annotations

import re
from typing import Any

from ingest_assets.records.enrichment.dates import parse_date
from ingest_assets.records.enrichment.dcmitype import dpla_label, normalize_type
from ingest_assets.records.enrichment.language import normalize_language
from ingest_assets.records.enrichment.rights import normalize_rights
from ingest_assets.records.enrichment.text import clean, clean_label, unique

LABEL_FIELDS = ("title", "alternative")
TEXT_FIELDS = ("description", "rights", "relation", "identifier", "isReplacedBy", "replaces")
NAMED_FIELDS = ("contributor", "creator", "publisher", "rightsHolder", "genre", "subject", "spatial")
TIME_FIELDS = ("date", "temporal")
REQUIRED = frozenset({"title", "rights"})
# ingestion3's stop words for these fields: their own name as a label ("Format: JPEG", "Extent - 2 pages", "Extent")
STOP_LABEL = {name: re.compile(rf"(?i)^\s*{name}\s*(?:[:\-\u2013]\s*|$)") for name in ("extent", "format")}
# type words are the record's type, not its format (ingestion3's FormatTypeValuesBlockList)
TYPE_WORDS = frozenset({
    "image", "still image", "stillimage", "sound", "audio", "text", "moving image", "movingimage", "object",
    "physical object", "physicalobject", "interactive resource", "interactiveresource",
})


def enrich(record: dict[str, Any]) -> tuple[dict[str, Any], set[str]]:
    """Clean text, dedupe, resolve dates, languages, types and rights URIs. The input is not modified."""
    source = record["sourceResource"]
    sr = dict(source)
    changes: set[str] = set()

    def put(name: str, new: list | None) -> None:
        if not new and name in REQUIRED:
            return
        if new != source.get(name):
            sr[name] = new or None
            changes.add(name)

    get = source.get
    for name in LABEL_FIELDS:
        if values := get(name):
            put(name, unique(map(clean_label, values)))
    for name in TEXT_FIELDS:
        if values := get(name):
            put(name, unique(map(clean, values)))
    for name in STOP_LABEL:
        if values := get(name):
            put(name, _without_stop_words(name, values))
    for name in NAMED_FIELDS:
        if values := get(name):
            put(name, _named(values))
    for name in TIME_FIELDS:
        if values := get(name):
            put(name, [_timespan(span) for span in values])
    if source.get("collection"):
        put("collection", [_collection(c) for c in source["collection"] if c.get("title") or c.get("description")])
    if source.get("language"):
        put("language", _languages(source["language"]))
    if source.get("type"):
        types, formats = _types(source["type"])
        put("type", types)
        if formats:
            put("format", unique([*(sr.get("format") or []), *formats]))

    enriched = dict(record)
    enriched["sourceResource"] = sr
    data_provider = clean_label(record["dataProvider"])
    if data_provider and data_provider != record["dataProvider"]:
        enriched["dataProvider"] = data_provider
        changes.add("dataProvider")
    if record.get("intermediateProvider"):
        providers = unique(map(clean_label, record["intermediateProvider"]))
        if providers != record["intermediateProvider"]:
            enriched["intermediateProvider"] = providers or None
            changes.add("intermediateProvider")
    statement = _rights_statement(record.get("rightsStatement"), sr.get("rights") or ())
    if statement != record.get("rightsStatement"):
        enriched["rightsStatement"] = statement
        changes.add("rightsStatement")
    return enriched, changes


def _named(entities: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Agents, concepts and places: clean ``name``, drop empty and duplicate names."""
    seen: set[str] = set()
    out = []
    for entity in entities:
        name = clean_label(entity.get("name") or entity.get("providedLabel") or "")
        key = name.casefold()
        if not name or key in seen:
            continue
        seen.add(key)
        out.append(entity if name == entity.get("name") else {**entity, "name": name})
    return out


def _timespan(span: dict[str, Any]) -> dict[str, Any]:
    labels = span.get("providedLabel") or []
    cleaned = unique(map(clean, labels))
    begin, end = span.get("begin"), span.get("end")
    if begin is None and end is None:
        for label in cleaned:
            parsed = parse_date(label)
            if parsed:
                begin, end = parsed
                break
    if cleaned == labels and begin == span.get("begin") and end == span.get("end"):
        return span
    return {**span, "providedLabel": cleaned or None, "begin": begin, "end": end}


def _collection(item: dict[str, Any]) -> dict[str, Any]:
    title = clean_label(item["title"]) if item.get("title") else item.get("title")
    description = clean(item["description"]) if item.get("description") else item.get("description")
    if title == item.get("title") and description == item.get("description"):
        return item
    return {**item, "title": title or None, "description": description or None}


def _languages(values: list[str]) -> list[str]:
    """ISO 639-3 codes where the value is a known code or name (unknown values kept, cleaned)."""
    out = []
    for value in values:
        label = clean_label(value)
        found = normalize_language(label) if label else None
        out.append(found[0] if found else label)
    return unique(out)


def _without_stop_words(name: str, values: list[str]) -> list[str]:
    labels = (clean_label(STOP_LABEL[name].sub("", value)) for value in values)
    return unique(v for v in labels if v and not (name == "format" and v.casefold() in TYPE_WORDS))


def _types(values: list[str]) -> tuple[list[str], list[str]]:
    """DCMI types as DPLA labels them, and the values that are not types (moved to ``format`` rather than lost)."""
    types, other = [], []
    for value in values:
        label = clean_label(value)
        if not label:
            continue
        term = normalize_type(label)
        if term:
            types.append(dpla_label(term))
        else:
            other.append(label)
    return unique(types), other


def _rights_statement(current: str | None, rights: Any) -> str | None:
    if current:
        return normalize_rights(current) or current
    for value in rights:
        found = normalize_rights(value)
        if found:
            return found
    return None
