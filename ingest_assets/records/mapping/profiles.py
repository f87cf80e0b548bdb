"""The named mappings (registry ``mapping:``), written in the rule vocabulary of ``rules.py``.

Registry ``mapping_overrides`` are merged key by key onto these rules, so a provider changes
one field (a constant dataProvider, another isShownAt XPath or pattern) without copying a mapping.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ingest_assets.records.mapping.xml import NAMESPACES

URL = r"^https?://\S+$"
RIGHTS_URI = r"^\s*https?://(www\.)?(rightsstatements|creativecommons)\.org/"


@dataclass(frozen=True)
class Profile:
    name: str
    root_tags: tuple[str, ...]
    rules: dict[str, dict[str, Any]]


def _tag(prefix: str, local: str) -> str:
    return "{%s}%s" % (NAMESPACES[prefix], local)


def _dc(split: str | None) -> dict[str, dict[str, Any]]:
    """Dublin Core element rules; ``split`` separates several values packed in one element."""

    def rule(xpath: str, **extra: Any) -> dict[str, Any]:
        base: dict[str, Any] = {"xpath": xpath}
        if split:
            base["split"] = split
        return {**base, **extra}

    return {
        "title": {"xpath": "dc:title"},
        "creator": rule("dc:creator"),
        "contributor": rule("dc:contributor"),
        "publisher": rule("dc:publisher"),
        "subject": rule("dc:subject"),
        "description": {"xpath": "dc:description"},
        "date": rule("dc:date"),
        "type": rule("dc:type"),
        "format": rule("dc:format"),
        "identifier": {"xpath": "dc:identifier"},
        "language": rule("dc:language"),
        "relation": rule("dc:relation"),
        "spatial": rule("dc:coverage"),
        "rights": {"xpath": "dc:rights", "exclude": RIGHTS_URI},
        "rightsStatement": {"xpath": "dc:rights", "pattern": RIGHTS_URI, "first": True},
        "isShownAt": {"xpath": "dc:identifier", "pattern": URL, "first": True},
    }


OAI_DC = Profile(
    name="oai_dc",
    root_tags=(_tag("oai_dc", "dc"),),
    rules={**_dc(None), "dataProvider": {"xpath": "dc:publisher", "first": True}},
)

QDC = Profile(
    name="qdc",
    root_tags=(_tag("oai_qdc", "qualifieddc"),),
    rules={
        **_dc(";"),
        "alternative": {"xpath": "dcterms:alternative", "split": ";"},
        "description": {"xpath": "dc:description | dcterms:abstract"},
        "date": {"xpath": "dc:date | dcterms:created | dcterms:issued", "split": ";"},
        "temporal": {"xpath": "dcterms:temporal", "split": ";"},
        "spatial": {"xpath": "dc:coverage | dcterms:spatial", "split": ";"},
        "extent": {"xpath": "dcterms:extent", "split": ";"},
        "format": {"xpath": "dc:format | dcterms:medium", "split": ";"},
        "relation": {"xpath": "dc:relation | dcterms:isPartOf", "split": ";"},
        "rightsHolder": {"xpath": "dcterms:rightsHolder", "split": ";"},
        "rights": {"xpath": "dc:rights | dcterms:accessRights", "exclude": RIGHTS_URI},
        "rightsStatement": {"xpath": "dc:rights | dcterms:license", "pattern": RIGHTS_URI, "first": True},
        # CONTENTdm: the contributing institution is the first dc:source value.
        "dataProvider": {"xpath": "dc:source", "split": ";", "first": True},
    },
)

_IS_CREATOR = "mods:role/mods:roleTerm[translate(normalize-space(.), 'CREATOR', 'creator')='creator']"
MODS = Profile(
    name="mods",
    root_tags=(_tag("mods", "mods"),),
    rules={
        "title": {"xpath": "mods:titleInfo[not(@type='alternative')]/mods:title"},
        "alternative": {"xpath": "mods:titleInfo[@type='alternative']/mods:title"},
        "creator": {"xpath": f"mods:name[{_IS_CREATOR}]/mods:namePart"},
        "contributor": {"xpath": f"mods:name[not({_IS_CREATOR})]/mods:namePart"},
        "publisher": {"xpath": "mods:originInfo/mods:publisher"},
        "date": {"xpath": [
            "mods:originInfo/mods:dateCreated[not(@point)] | mods:originInfo/mods:dateIssued[not(@point)]",
            "mods:originInfo/mods:dateCreated | mods:originInfo/mods:dateIssued",
        ]},
        "description": {"xpath": "mods:abstract | mods:note[@type='content' or not(@type)]"},
        "extent": {"xpath": "mods:physicalDescription/mods:extent"},
        "format": {"xpath": "mods:physicalDescription/mods:form", "split": ";"},
        "genre": {"xpath": "mods:genre"},
        "identifier": {"xpath": "mods:identifier | mods:recordInfo/mods:recordIdentifier"},
        # Prefer coded languages; fall back to the text form.
        "language": {"xpath": [
            "mods:language/mods:languageTerm[@type='code']",
            "mods:language/mods:languageTerm",
        ]},
        "subject": {"xpath": "mods:subject/mods:topic | mods:subject/mods:name/mods:namePart", "split": ";"},
        "spatial": {"xpath": "mods:subject/mods:geographic", "split": ";"},
        "temporal": {"xpath": "mods:subject/mods:temporal"},
        "collection": {"xpath": (
            "mods:relatedItem[@type='host' or (not(@type) and not(@otherType))]/mods:titleInfo/mods:title"
        ), "first": True},
        "relation": {"xpath": "mods:relatedItem[@type='series']/mods:titleInfo/mods:title"},
        "rights": {"xpath": "mods:accessCondition", "exclude": RIGHTS_URI},
        "rightsStatement": {
            "xpath": "mods:accessCondition/@xlink:href | mods:accessCondition",
            "pattern": RIGHTS_URI,
            "first": True,
        },
        "type": {"xpath": "mods:typeOfResource"},
        "dataProvider": {"xpath": (
            "mods:note[@type='ownership'] | mods:location/mods:physicalLocation[@type='repository']"
            " | mods:relatedItem[@type='host']/mods:location/mods:physicalLocation[@type='repository']"
        ), "first": True},
        "isShownAt": {"xpath": [
            "mods:location/mods:url[@access='object in context' and @usage='primary display']",
            "mods:location/mods:url[@access='object in context']",
        ], "pattern": URL, "first": True},
        "object": {"xpath": "mods:location/mods:url[@access='preview']", "pattern": URL, "first": True},
        "hasView": {"xpath": "mods:location/mods:url[@access='raw object']", "pattern": URL},
    },
)

PROFILES: dict[str, Profile] = {p.name: p for p in (OAI_DC, QDC, MODS)}
