"""MAPRecords (the MAP4_x Avro shape) built from DPLA's own Elasticsearch documents, as an aggregator would
have held them."""

from __future__ import annotations

import json
from datetime import datetime


def _as_list(value) -> list:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _agent(label: str) -> dict:
    return {"name": label, "providedLabel": label, "note": None, "inScheme": None, "exactMatch": None,
            "closeMatch": None}


def map_record_from_es(source: dict) -> dict:
    """The MAPRecord an aggregator would have held for a DPLA ES item document (legacy or current)."""
    sr = source["sourceResource"]
    ingest = datetime.fromisoformat(source["ingestDate"].replace("Z", "+00:00"))
    named = lambda v: v["name"] if isinstance(v, dict) else v  # noqa: E731
    return {
        "id": source["id"],
        "ingestType": source.get("ingestType", "item"),
        "ingestDate": int(ingest.timestamp() * 1000),  # milliseconds, as DPLA's ES dates carry them
        "dataProvider": named(source["dataProvider"]),
        "hasView": None,
        "intermediateProvider": None,
        "isShownAt": source["isShownAt"],
        "object": source.get("object"),
        "originalRecord": json.dumps(source.get("originalRecord")),
        "preview": source.get("object") or "",
        "provider": source["provider"]["name"],
        "rightsStatement": None,
        "sourceResource": {
            "alternative": None,
            "collection": [{"title": c.get("title"), "description": None} for c in _as_list(sr.get("collection"))],
            "contributor": None,
            "creator": [_agent(c) for c in _as_list(sr.get("creator"))],
            "date": [{"providedLabel": [d["displayDate"]], "begin": d.get("begin"), "end": d.get("end")}
                     for d in _as_list(sr.get("date"))],
            "description": _as_list(sr.get("description")),
            "extent": _as_list(sr.get("extent")),
            "format": _as_list(sr.get("format")),
            "genre": None,
            "identifier": _as_list(sr.get("identifier")),
            "language": [lang["name"] for lang in _as_list(sr.get("language"))],
            "spatial": [{"name": p["name"], "city": None, "county": None, "state": None, "country": None,
                         "region": None, "coordinates": None} for p in _as_list(sr.get("spatial"))],
            "publisher": [_agent(p) for p in _as_list(sr.get("publisher"))],
            "relation": _as_list(sr.get("relation")),
            "isReplacedBy": None,
            "replaces": None,
            "rights": _as_list(sr.get("rights")),
            "rightsHolder": None,
            "subject": [{**_agent(s["name"]), "inScheme": s.get("scheme")} for s in _as_list(sr.get("subject"))],
            "temporal": [{"providedLabel": [t["displayDate"]], "begin": None, "end": None}
                         for t in _as_list(sr.get("temporal"))],
            "title": _as_list(sr.get("title")),
            "type": _as_list(sr.get("type")),
        },
        "title": None,
    }


