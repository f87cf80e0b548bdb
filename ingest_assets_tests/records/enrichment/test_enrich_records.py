"""enrich() on real mapped records (field by field) and on the ugly values providers send."""

from __future__ import annotations

import copy

from fastavro.validation import validate

from ingest_assets.records.enrichment import enrich
from ingest_assets.core.registry import ProviderEntry


def test_maryland_qdc(maryland, map_schema):
    before = copy.deepcopy(maryland)
    enriched, changes = enrich(maryland)
    assert maryland == before  # the input is not modified
    assert changes == {"date", "temporal", "language", "type"}
    assert validate(enriched, map_schema, raise_errors=True)
    sr = enriched["sourceResource"]
    assert sr["date"] == [{"providedLabel": ["2008-10-21"], "begin": "2008-10-21", "end": "2008-10-21"}]
    assert sr["temporal"] == [{"providedLabel": ["1970-1979"], "begin": "1970-01-01", "end": "1979-12-31"}]
    assert sr["language"] == ["eng"]
    assert sr["type"] == ["image"]  # the DCMI term Image, as DPLA labels it
    assert [a["name"] for a in sr["publisher"]] == ["Alfred A. Knopf, Inc."]  # abbreviation period kept
    assert sr["title"] == before["sourceResource"]["title"]
    assert enriched["rightsStatement"] == "http://rightsstatements.org/vocab/NoC-OKLR/1.0/"
    assert enrich(enriched)[1] == set()  # idempotent


def test_zenodo_html_description_types_and_titles(zenodo, map_schema):
    first, changes = enrich(zenodo[0])
    assert validate(first, map_schema, raise_errors=True)
    assert changes == {"description", "date", "type"}
    (description,) = first["sourceResource"]["description"]
    assert description.startswith(
        "Ergebnisse aus der Masterthesis „Untersuchung zum Einsatz von Forschungsinformationssystemen an "
        "Hochschulen in Deutschland“ am Institut für Bibliotheks- und Informationswissenschaft"
    )
    assert "<p>" not in description and "&" not in description and "\u00ad" not in description
    assert "Berichterstattung der Forschungsaktivitäten" in description  # &shy; removed, not a space
    assert "Humboldt-Universität Berlin, 2014 Zugrunde liegende" in description  # paragraphs become spaces
    assert first["sourceResource"]["type"] == ["text"]
    assert first["sourceResource"]["date"][0]["begin"] == "2015-01-08"

    second, changes = enrich(zenodo[1])
    assert second["sourceResource"]["title"] == ["Quelques fourmis de Tokio"]  # trailing period dropped
    assert [a["name"] for a in second["sourceResource"]["creator"]] == ["Forel, A."]  # initial kept
    assert second["sourceResource"]["creator"][0]["providedLabel"] == "Forel, A."
    assert second["sourceResource"]["date"][0] == {
        "providedLabel": ["1912-12-31"], "begin": "1912-12-31", "end": "1912-12-31",
    }
    assert "title" in changes


def test_messy_values(maryland, map_schema):
    record = copy.deepcopy(maryland)
    sr = record["sourceResource"]
    sr["title"] = ["  Main   street,\n looking north ;  ", "Main Street, looking north"]
    sr["subject"] = [dict(s, name=s["name"] + " ;", providedLabel=s["name"] + " ;") for s in sr["subject"]]
    sr["subject"].append(dict(sr["subject"][0]))
    sr["type"] = ["Photographs", "image", "Mixed material"]
    sr["format"] = ["jpeg"]
    sr["language"] = ["en", "English", "Elvish"]
    sr["date"] = [{"providedLabel": ["ca. 1950s "], "begin": None, "end": None},
                  {"providedLabel": ["undated"], "begin": None, "end": None}]
    sr["rights"] = ["See https://rightsstatements.org/page/InC/1.0/", "https://creativecommons.org/licenses/by/4.0/"]
    record["rightsStatement"] = None
    record["dataProvider"] = "Maryland  State Archives."

    enriched, changes = enrich(record)
    assert validate(enriched, map_schema, raise_errors=True)
    out = enriched["sourceResource"]
    assert out["title"] == ["Main street, looking north"]  # whitespace, punctuation, case-insensitive duplicate
    assert [s["name"] for s in out["subject"]] == [
        "Brown, Anthony G., 1961-", "Governors--Maryland", "Maryland--Politics and government", "Asthma",
    ]
    assert out["subject"][0]["providedLabel"] == "Brown, Anthony G., 1961- ;"  # as provided
    assert out["type"] == ["image"]  # StillImage and Image: both 'image' in DPLA's records
    assert out["format"] == ["jpeg", "Mixed material"]  # not a type: kept as a format
    assert out["language"] == ["eng", "Elvish"]
    assert out["date"] == [
        {"providedLabel": ["ca. 1950s"], "begin": "1950-01-01", "end": "1959-12-31"},
        {"providedLabel": ["undated"], "begin": None, "end": None},
    ]
    assert enriched["rightsStatement"] == "http://creativecommons.org/licenses/by/4.0/"  # first full URI value
    assert enriched["dataProvider"] == "Maryland State Archives"
    assert changes == {
        "title", "subject", "type", "format", "language", "date", "temporal", "rightsStatement", "dataProvider",
    }


def test_required_fields_are_never_emptied(maryland):
    record = copy.deepcopy(maryland)
    record["sourceResource"]["title"] = ["<br/>"]
    enriched, changes = enrich(record)
    assert enriched["sourceResource"]["title"] == ["<br/>"] and "title" not in changes


def test_provided_begin_and_end_are_kept(maryland):
    record = copy.deepcopy(maryland)
    record["sourceResource"]["date"] = [{"providedLabel": ["1950"], "begin": "1950-06-01", "end": "1950-06-30"}]
    enriched, changes = enrich(record)
    assert enriched["sourceResource"]["date"] == record["sourceResource"]["date"] and "date" not in changes


def test_format_and_extent_stop_words(maryland):
    record = copy.deepcopy(maryland)
    sr = record["sourceResource"]
    sr["format"] = ["Format: Color digital photograph/jpeg", "Image", "Format", "Formation of clouds", "Still image"]
    sr["extent"] = ["Extent: 1 photograph", "Extent", "EXTENT - 8 x 10 in."]
    enriched, changes = enrich(record)
    out = enriched["sourceResource"]
    # the label and the bare stop word go, and type words are the type (ingestion3's block list), not a format
    assert out["format"] == ["Color digital photograph/jpeg", "Formation of clouds"]
    assert out["extent"] == ["1 photograph", "8 x 10 in"]  # labels lose a final period, as before
    assert {"format", "extent"} <= changes
    assert enrich(enriched)[1] == set()  # idempotent


def test_montana_mods_placeholder_format_and_extent(mapped):
    (record,) = mapped("dpla/provider-montana-repox-getrecord-mods.xml", ProviderEntry("mt", {"mapping": "mods"}))
    assert record["sourceResource"]["format"] == ["Format", "jpeg"] and record["sourceResource"]["extent"] == ["Extent"]
    enriched, changes = enrich(record)
    assert enriched["sourceResource"]["format"] == ["jpeg"]  # the field's name is not a value
    assert enriched["sourceResource"]["extent"] is None
    assert {"format", "extent"} <= changes
