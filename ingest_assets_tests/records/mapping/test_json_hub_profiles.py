"""Hub profiles of the hubs-json set on the records ingestion3's tests build inline (IaMappingTest's titles and
default data provider) and on realistic records where ingestion3 has no test; the fixture records themselves are
checked by the parity data (``parity/<hub>.yaml``, ``test_parity.py``)."""

from __future__ import annotations

import json

import pytest

from ingest_assets.core.registry import ProviderEntry
from ingest_assets.records.mapping import mapper_for


def mapped(profile: str, document: dict | str, local_id: str = "1") -> dict:
    text = document if isinstance(document, str) else json.dumps(document)
    mimetype = "application_json" if text.lstrip()[:1] in "{[" else "application_xml"
    result = mapper_for(ProviderEntry(profile.replace("-", ""), {"mapping": profile})).map(
        {"id": local_id, "ingestDate": 1, "document": text, "mimetype": mimetype})
    assert result.record is not None, result.messages
    return result.record


IA_ITEM = {"identifier": "artofdyingwell00bell", "title": "The art of dying well", "mediatype": "texts"}


@pytest.mark.parametrize(("given", "titles"), [
    ({"volume": "vol 1."}, ["The art of dying well, vol 1."]),
    ({"issue": "issue", "volume": "vol 1."}, ["The art of dying well, vol 1., issue"]),
    ({"issue": "issue", "volume": "vol 1.", "title": ["The art of dying well", "Act 2"]},
     ["The art of dying well, vol 1., issue", "Act 2"]),
    ({"issue": "issue", "volume": ["vol 1.", "vol 2."], "title": ["The art of dying well", "Act 2"]},
     ["The art of dying well, vol 1., issue", "Act 2, vol 2."]),
    ({"issue": ["issue 1", "issue 1"], "volume": ["vol 1.", "vol 2."], "title": ["The art of dying well", "Act 2"]},
     ["The art of dying well, vol 1., issue 1", "Act 2, vol 2., issue 1"]),
])
def test_ia_titles_take_their_volumes_and_issues_by_position(given, titles):
    assert mapped("ia", {**IA_ITEM, **given})["sourceResource"]["title"] == titles


def test_ia_data_provider_defaults_to_the_archive_and_consortia_are_intermediate_providers():
    record = mapped("ia", {**IA_ITEM, "contributor": None, "collection": ["americana", "blc"]})
    assert record["dataProvider"] == "Internet Archive"
    assert record["intermediateProvider"] == ["Boston Library Consortium"]
    assert mapped("ia", {**IA_ITEM, "contributor": "Elms College"})["dataProvider"] == "Elms College"


def test_heartland_an_empty_rights_string_is_no_rights():
    document = {"@id": "missouri--1", "isShownAt": "https://example.org/1", "dataProvider": "Missouri State University",
                "rights": "http://rightsstatements.org/vocab/InC/1.0/",
                "sourceResource": {"title": ["t"], "rights": ""}}
    record = mapped("heartland", document, "missouri--1")
    assert record["sourceResource"]["rights"] == []
    assert record["rightsStatement"] == "http://rightsstatements.org/vocab/InC/1.0/"


def test_mississippi_primo_ranges_rights_places_and_identifier_links():
    display = {"title": ["t"], "creationdate": ["1941;1940;1942"], "type": ["text_resource"],
               "rights": ["No known restrictions;http://rightsstatements.org/vocab/NKC/1.0/"],
               "identifier": ["$$Cdcidentifier$$Vhttp://egrove.olemiss.edu/item/1;local 7"],
               "coverage": ["1940s (1940-1949);Canton (Miss.)"], "lds14": ["Madison County"],
               "lds02": ["University of Mississippi"]}
    document = {"@id": "https://example.org/pnxs/L/1", "pnx": {"display": display},
                "delivery": {"availabilityLinksUrl": [""], "link": [{"displayLabel": "Thumbnail", "linkURL": "https://example.org/t.jpg"}]}}
    record = mapped("mississippi", document, "https://example.org/pnxs/L/1")
    sr = record["sourceResource"]
    assert [d["providedLabel"] for d in sr["date"]] == [["1940-1942"]]
    assert sr["type"] == ["text"] and sr["rights"] == ["No known restrictions"]
    assert record["rightsStatement"] == "http://rightsstatements.org/vocab/NKC/1.0/"
    # an empty delivery link: the web address among the identifiers
    assert record["isShownAt"] == "http://egrove.olemiss.edu/item/1"
    assert sr["identifier"] == ["http://egrove.olemiss.edu/item/1", "local 7"]
    assert [p["name"] for p in sr["spatial"]] == ["Madison County", "Canton (Miss.)"]
    assert record["preview"] == "https://example.org/t.jpg"
