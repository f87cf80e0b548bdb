"""IndexRecord (MAP4_0) documents: a MAPRecord flattened to the JSON a DPLA-style search portal indexes.

The document follows the shape of DPLA API item documents (``@id`` URIs, ``provider``/``dataProvider``
objects, ``sourceResource`` with agents as name strings, dates as ``{begin, end, displayDate}``,
languages as ``{name, iso639_3}``), serialised as compact JSON with sorted keys so that the same record
always yields the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

import orjson

from ingest_assets.core.errors import ValidationError
from ingest_assets.records.enrichment.vocabularies import iso639_3, language_name

ITEM_URI = "http://dp.la/api/items/"
CONTEXT_URI = "http://dp.la/api/items/context"
MAX_ID_BYTES = 512  # Elasticsearch's limit for a document _id
MILLISECONDS_THRESHOLD = 100_000_000_000  # an epoch above this (year 5138 in seconds) is in milliseconds

STRING_FIELDS = (
    "alternative", "description", "extent", "format", "identifier", "isReplacedBy", "relation", "replaces",
    "rights", "title", "type",
)
AGENT_FIELDS = ("contributor", "creator", "publisher", "rightsHolder")
TIMESPAN_FIELDS = ("date", "temporal")
PLACE_KEYS = ("name", "city", "county", "state", "country", "region", "coordinates")


def index_record(map_record: dict) -> dict:
    """IndexRecord for a MAPRecord dict: ``{"id", "document", "deleted": False}``.

    Raises ValidationError (naming provider and record) when a field the portal needs is missing.
    """
    document = index_document(map_record)
    try:
        text = dumps(document)
    except orjson.JSONEncodeError as exc:  # a lone surrogate (a JSON hub's "\ud800"): not UTF-8, so not JSON text
        raise ValidationError(f"the document is not writable as JSON: {exc}", provider=map_record.get("provider"),
                              record=document["id"]) from exc
    return {"id": document["id"], "document": text, "deleted": False}


def index_document(map_record: dict) -> dict:
    """The document of a MAPRecord dict's IndexRecord, before it is serialised (:func:`dumps`)."""
    if not isinstance(map_record, dict):
        raise ValidationError(f"MAPRecord must be a dict, got {type(map_record).__name__}")
    get = map_record.get
    record_id = get("id")
    provider = get("provider")
    where = {"provider": provider if isinstance(provider, str) else None, "record": record_id}
    _check_id(record_id, where)
    source = get("sourceResource")
    if not isinstance(source, dict):
        raise ValidationError("MAPRecord has no sourceResource", **where)
    for name, value in (("provider", provider), ("dataProvider", get("dataProvider"))):
        if not value:
            raise ValidationError(f"MAPRecord has no {name}", **where)
        if not isinstance(value, (str, dict)):
            raise ValidationError(f"MAPRecord {name} must be a string or an agent, got {value!r}", **where)
    for name, value in (("isShownAt", get("isShownAt")), ("sourceResource.title", source.get("title"))):
        if not value:
            raise ValidationError(f"MAPRecord has no {name}", **where)
    item_uri = get("dplaUri") or ITEM_URI + record_id
    # Built already pruned (no None, empty strings, lists or objects): the sourceResource field by field, the
    # values of the top level in one _pruned pass (a call per value cost more than the walk).
    document = {
        "@context": CONTEXT_URI,
        "@id": item_uri,
        "@type": "ore:Aggregation",
        "aggregatedCHO": "#sourceResource",
        "id": record_id,
        "ingestDate": _iso_utc(get("ingestDate"), where),
        "sourceResource": _source_resource(source, item_uri + "#SourceResource"),  # as DPLA writes it
    }
    document.update(_pruned({
        "ingestType": get("ingestType") or "item",
        # DPLA's documents name the provider and the data provider and give their URI and Wikidata entity
        "dataProvider": _agent(map_record["dataProvider"], get("dataProviderUri"), get("dataProviderExactMatch")),
        "provider": _agent(provider, get("providerUri"), get("providerExactMatch")),
        "isShownAt": map_record["isShownAt"],
        "object": get("object"),
        "rights": get("rightsStatement"),
        "iiifManifest": get("iiifManifest"),  # at the top level, as DPLA's documents carry it
        "intermediateProvider": _strings(get("intermediateProvider")),
        "mediaMaster": _strings(get("mediaMaster")),  # URLs at the top level, as DPLA's documents carry them
        "tags": _strings(get("tags")),  # at the top level, as DPLA's documents carry them
    }))
    views = _strings(get("hasView"))
    if views:
        document["hasView"] = [{"@id": uri} for uri in views]
    return document


def deletion_record(dpla_id: str) -> dict:
    """IndexRecord that removes ``dpla_id`` from the index."""
    _check_id(dpla_id, {"record": dpla_id})
    return {"id": dpla_id, "document": "", "deleted": True}


def _check_id(record_id: Any, where: dict) -> None:
    if not isinstance(record_id, str) or not record_id.strip():
        raise ValidationError(f"record id must be a non-empty string, got {record_id!r}", **where)
    try:
        size = len(record_id.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate, as json.loads gives for a JSON hub's "\ud800"
        raise ValidationError(f"record id is not writable as UTF-8: {record_id!r}", **where) from None
    if size > MAX_ID_BYTES:
        raise ValidationError(f"record id is longer than {MAX_ID_BYTES} bytes", **where)


def _iso_utc(value: Any, where: dict) -> str:
    """MAPRecord ingestDate (UNIX seconds, or milliseconds when huge; or an aware datetime) -> ISO-8601 UTC."""
    if type(value) is int:  # the Avro long: no bool (an int subclass) to rule out
        return _iso_timestamp(value)
    if isinstance(value, bool) or value is None:
        raise ValidationError(f"ingestDate must be a UNIX timestamp, got {value!r}", **where)
    if isinstance(value, (int, float)):
        return _iso_timestamp(value)
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ValidationError("ingestDate datetime must be timezone-aware", **where)
        return _iso(value)
    raise ValidationError(f"ingestDate must be a UNIX timestamp, got {value!r}", **where)


@lru_cache(maxsize=1024)
def _iso_timestamp(value: float) -> str:
    """UNIX seconds (milliseconds when huge) -> ISO-8601 UTC (cached: a harvest shares one ingestDate)."""
    seconds = value / 1000 if abs(value) >= MILLISECONDS_THRESHOLD else value
    return _iso(datetime.fromtimestamp(seconds, tz=UTC))


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _source_resource(source: dict, uri: str) -> dict:
    out: dict[str, Any] = {"@id": uri}
    get = source.get
    for name in STRING_FIELDS:
        values = get(name)
        if values is not None:
            values = _strings(values)
            if values:
                out[name] = values
    for name, convert in _CONVERTED_FIELDS:
        values = get(name)
        if values:
            converted = []  # each comes pruned; a loop, not a comprehension (a function made per call) or map()
            for value in values:
                value = convert(value)
                if value:
                    converted.append(value)
            if converted:
                out[name] = converted
    return out


def _strings(values: Any) -> list[str]:
    if type(values) is not list:  # most are lists (and an isinstance that fails costs a __class__ lookup)
        if values is None:
            return []
        if isinstance(values, str):
            values = [values]
    strings = []  # a loop: most lists hold one or two values, and a comprehension makes a function per call
    for value in values:
        if isinstance(value, str) and value.strip():
            strings.append(value)
    return strings


def _label(value: Any) -> Any:
    """Agent/Concept -> its display label: the (enriched) name, else the provided label (pruned)."""
    if type(value) is dict or isinstance(value, dict):  # enriched: most are dicts (exact type: no __class__ lookup)
        label = value.get("name") or value.get("providedLabel")
        return label if type(label) is str else _kept(label)
    return value if isinstance(value, str) else None


def _named(value: Any) -> dict:
    """provider / dataProvider (a name, a URI, or an Agent dict) -> ``{"@id", "name"}``."""
    if isinstance(value, dict):
        return {"@id": value.get("uri") or value.get("@id"), "name": _label(value),
                "exactMatch": value.get("exactMatch")}
    if value.startswith(("http://", "https://")):
        return {"@id": value}
    return {"name": value}


def _agent(value: Any, uri: str | None, exact_match: list[str] | None) -> dict:
    """provider / dataProvider with its URI and Wikidata entity, before pruning."""
    named = _named(value)
    if uri:
        named["@id"] = uri
    if exact_match:
        named["exactMatch"] = exact_match
    return named


# The converters of sourceResource values below return them pruned.


def _concept(value: Any) -> dict:
    if isinstance(value, dict):
        return _pruned({"name": _label(value), "scheme": value.get("inScheme"), "exactMatch": value.get("exactMatch")})
    return _pruned({"name": value})


def _collection(item: Any) -> dict:
    if isinstance(item, dict):
        return _pruned({"title": item.get("title"), "description": item.get("description")})
    return _pruned({"title": item})


def _place(place: Any) -> dict:
    return _pruned({key: place.get(key) for key in PLACE_KEYS} if isinstance(place, dict) else {"name": place})


def _timespan(value: Any) -> dict:
    if not isinstance(value, dict):
        return _pruned({"displayDate": value})
    labels = value.get("providedLabel")
    display = "; ".join(_strings(labels)) if not isinstance(labels, str) else labels
    return _pruned({"begin": value.get("begin"), "end": value.get("end"), "displayDate": display})


def _language(value: Any) -> dict:
    """A language code or label -> ``{"name", "iso639_3"}`` when ISO 639 knows it, else ``{"name"}``."""
    if isinstance(value, dict):
        return _pruned({"name": value.get("name"), "iso639_3": value.get("iso639_3") or value.get("code")})
    return _known_language(value) if isinstance(value, str) and value.strip() else {}


def _known_language(value: str) -> dict:
    """Through enrichment's language table, so indexing and enrichment agree on every code and name: the name
    (enrichment gives names; a code not enriched is looked up), and the ISO 639-3 code of that name."""
    name = language_name(value) or value
    code = iso639_3(name)
    return {"name": name, "iso639_3": code} if code else {"name": name}


# sourceResource fields whose values are converted one by one (dicts or labels), with their converter.
_CONVERTED_FIELDS: tuple[tuple[str, Callable[[Any], Any]], ...] = (
    *((name, _label) for name in AGENT_FIELDS),
    ("genre", _label),
    *((name, _timespan) for name in TIMESPAN_FIELDS),
    ("subject", _concept),
    ("collection", _collection),
    ("spatial", _place),
    ("language", _language),
)


def _pruned(value: dict | list) -> dict | list:
    """Drop None, empty strings, empty lists and empty objects, recursively (documents hold no numbers)."""
    if isinstance(value, dict):
        out: dict = {}
        for key, item in value.items():
            if item:  # most values are strings, kept as they are: type() first (a failed isinstance is slow)
                if type(item) is not str and isinstance(item, (dict, list)):
                    item = _pruned(item)
                    if not item:
                        continue
                out[key] = item
        return out
    items = []
    for item in value:
        if item:
            if type(item) is not str and isinstance(item, (dict, list)):
                item = _pruned(item)
                if not item:
                    continue
            items.append(item)
    return items


def _kept(value: Any) -> Any:
    """``value`` as pruning leaves it (falsy when nothing is left)."""
    return _pruned(value) if value and isinstance(value, (dict, list)) else value


def dumps(document: dict) -> str:
    """Compact JSON with sorted keys, non-ASCII as itself: the same document always gives the same text (the
    stdlib's ``separators=(",", ":"), ensure_ascii=False, sort_keys=True`` text, 5x faster)."""
    return orjson.dumps(document, option=orjson.OPT_SORT_KEYS).decode()
