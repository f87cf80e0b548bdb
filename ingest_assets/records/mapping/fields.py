"""Where each mappable MAPRecord (MAP4_x) field lives, what shape its values take, and the sub-properties a
rule may give its structured values (a subject's scheme, a place's coordinates, ...)."""

from __future__ import annotations

from typing import Any

# field name -> (section, shape). section "top" = on the record, "sr" = in sourceResource.
# shapes: "one" (first string), "strings", "agent", "concept", "timespan", "place", "collection".
FIELDS: dict[str, tuple[str, str]] = {
    "ingestType": ("top", "one"),  # "item" (the default) or "collection"
    "dataProvider": ("top", "one"),
    "isShownAt": ("top", "one"),
    "object": ("top", "one"),
    "preview": ("top", "one"),  # the thumbnail; defaults to object, else isShownAt
    "iiifManifest": ("top", "one"),  # the IIIF presentation manifest (DPLA documents carry it at the top level)
    "rightsStatement": ("top", "one"),
    "hasView": ("top", "strings"),
    "mediaMaster": ("top", "strings"),  # the master files' URLs (DPLA documents carry them at the top level)
    "intermediateProvider": ("top", "strings"),
    "alternative": ("sr", "strings"),
    "collection": ("sr", "collection"),
    "contributor": ("sr", "agent"),
    "creator": ("sr", "agent"),
    "date": ("sr", "timespan"),
    "description": ("sr", "strings"),
    "extent": ("sr", "strings"),
    "format": ("sr", "strings"),
    "genre": ("sr", "concept"),
    "identifier": ("sr", "strings"),
    "language": ("sr", "strings"),
    "spatial": ("sr", "place"),
    "publisher": ("sr", "agent"),
    "relation": ("sr", "strings"),
    "isReplacedBy": ("sr", "strings"),
    "replaces": ("sr", "strings"),
    "rights": ("sr", "strings"),
    "rightsHolder": ("sr", "agent"),
    "subject": ("sr", "concept"),
    "temporal": ("sr", "timespan"),
    "title": ("sr", "strings"),
    "type": ("sr", "strings"),
}

SR_FIELDS = tuple(name for name, (section, _) in FIELDS.items() if section == "sr")

# sourceResource fields the schema declares as required arrays (never null).
SR_REQUIRED_ARRAYS = ("rights", "title")

# The sub-properties of each structured shape a rule may fill, and whether each holds a list (else one string).
SUB_PROPERTIES: dict[str, dict[str, bool]] = {
    "agent": {"note": False, "inScheme": False, "exactMatch": True, "closeMatch": True},
    "concept": {"note": False, "inScheme": False, "exactMatch": True, "closeMatch": True},
    "place": {"city": False, "county": False, "state": False, "country": False, "region": False,
              "coordinates": False},
    "timespan": {"begin": False, "end": False},
    "collection": {"description": False},
}
ALL_SUB_PROPERTIES = frozenset(name for names in SUB_PROPERTIES.values() for name in names)


def labelled(label: str) -> dict[str, Any]:
    """An edm:Agent or skos:Concept (same fields): ``name`` is cleaned by enrichment, ``providedLabel`` kept."""
    return {
        "name": label, "providedLabel": label, "note": None, "inScheme": None, "exactMatch": None, "closeMatch": None,
    }


def timespan(label: str) -> dict[str, Any]:
    return {"providedLabel": [label], "begin": None, "end": None}


def place(label: str) -> dict[str, Any]:
    return {
        "name": label, "city": None, "county": None, "state": None, "country": None, "region": None,
        "coordinates": None,
    }


def collection(label: str) -> dict[str, Any]:
    return {"title": label, "description": None}


SHAPERS = {"agent": labelled, "concept": labelled, "timespan": timespan, "place": place, "collection": collection}
