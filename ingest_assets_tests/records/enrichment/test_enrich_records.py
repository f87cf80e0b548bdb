"""enrich() on real mapped records (field by field) and on the ugly values providers send: ingestion3's chain."""

from __future__ import annotations

import copy

from fastavro.validation import validate

from ingest_assets.core.registry import ProviderEntry
from ingest_assets.records.enrichment import Chain, chain_for, enrich


def test_maryland_qdc(maryland, map_schema):
    before = copy.deepcopy(maryland)
    enriched, changes = enrich(maryland)
    assert maryland == before  # the input is not modified
    assert changes == {("cleanup_ending_punctuation", "subject"), ("strip_ending_period", "publisher"),
                       ("type", "type"), ("data_provider_uri", "dataProvider")}
    assert validate(enriched, map_schema, raise_errors=True)
    sr = enriched["sourceResource"]
    assert sr["date"] == [{"providedLabel": ["2008-10-21"], "begin": None, "end": None}]  # DateBuilder: years only
    assert sr["temporal"] == before["sourceResource"]["temporal"]  # temporal: string normalizations only
    assert sr["type"] == ["image"]
    assert [a["name"] for a in sr["publisher"]] == ["Alfred A. Knopf, Inc"]  # agents lose a final period
    assert sr["publisher"][0]["providedLabel"] == "Alfred A. Knopf, Inc."  # as provided
    assert sr["subject"][0]["name"] == "Brown, Anthony G., 1961"  # ending hyphen is punctuation
    assert enriched["dataProviderUri"] == "http://dp.la/api/contributor/maryland-state-archives"
    assert enriched["rightsStatement"] == "http://rightsstatements.org/vocab/NoC-OKLR/1.0/"
    assert enrich(enriched)[1] == set()  # idempotent


def test_zenodo_html_description_titles_and_types(zenodo, map_schema):
    first, changes = enrich(zenodo[0])
    assert validate(first, map_schema, raise_errors=True)
    assert {("strip_html", "description"), ("type", "type")} <= changes
    (description,) = first["sourceResource"]["description"]
    assert description.startswith(
        "Ergebnisse aus der Masterthesis „Untersuchung zum Einsatz von Forschungsinformationssystemen an "
        "Hochschulen in Deutschland“ am Institut für Bibliotheks- und Informationswissenschaft"
    )
    assert "<p>" not in description and "&" not in description
    assert first["sourceResource"]["type"] is None  # not in ingestion3's type table: DPLA drops it
    assert first["sourceResource"]["subject"][0]["name"] == "Cc-by"  # concepts: first character capitalised

    second, changes = enrich(zenodo[1])
    assert second["sourceResource"]["title"] == ["Quelques fourmis de Tokio."]  # titles keep their final period
    assert [a["name"] for a in second["sourceResource"]["creator"]] == ["Forel, A"]  # agents do not
    assert second["sourceResource"]["creator"][0]["providedLabel"] == "Forel, A."
    assert ("strip_ending_period", "creator") in changes and ("strip_ending_period", "title") not in changes


def test_messy_values(maryland, map_schema):
    record = copy.deepcopy(maryland)
    sr = record["sourceResource"]
    sr["title"] = ["  Main   street,\n looking north ;  ", "Main Street, looking north", "Main Street, looking north"]
    sr["subject"] = [dict(s, name=s["name"] + " ;", providedLabel=s["name"] + " ;") for s in sr["subject"]]
    sr["type"] = ["Photographs", "image", "Mixed material", "Sculpture"]
    sr["format"] = ["jpeg", "image/tiff", "Image", "albumen print", "8 x 10 in."]
    sr["language"] = ["en", "English", "Elvish", "fre."]
    sr["date"] = [{"providedLabel": ["1917 - 1934 "], "begin": None, "end": None},
                  {"providedLabel": ["undated"], "begin": "1900", "end": None},
                  {"providedLabel": None, "begin": "1950", "end": "1950"}]
    sr["spatial"] = [{"name": " Hartford ", "coordinates": "41.75N, 72.6833W"}]
    record["rightsStatement"] = "https://rightsstatements.org/page/InC/1.0/?language=en"
    record["dataProvider"] = "Maryland  State Archives."

    enriched, changes = enrich(record)
    assert validate(enriched, map_schema, raise_errors=True)
    out = enriched["sourceResource"]
    assert out["title"] == ["Main street, looking north", "Main Street, looking north"]  # deduplicated as provided
    assert [s["name"] for s in out["subject"]][:2] == ["Brown, Anthony G., 1961", "Governors--Maryland"]
    assert out["type"] == ["image", "physical object"]  # one image, three values
    assert out["format"] == ["Albumen print", "8 x 10 in."]  # media types and type words out, first letter up
    assert out["language"] == ["English", "Elvish", "French"]
    assert out["date"] == [{"providedLabel": ["1917 - 1934"], "begin": "1917", "end": "1934"},
                           {"providedLabel": ["undated"], "begin": None, "end": None}]  # mapped begin replaced
    assert out["spatial"] == [{"name": "Hartford", "coordinates": "41.75, 72.6833"}]
    assert enriched["rightsStatement"] == "http://rightsstatements.org/vocab/InC/1.0/"
    assert enriched["dataProvider"] == "Maryland State Archives"
    assert enriched["dataProviderUri"] == "http://dp.la/api/contributor/maryland-state-archives"
    assert {("deduplicate", "title"), ("format_blocklist", "format"), ("capitalize_first_char", "format"),
            ("cleanup_geocoordinates", "spatial"), ("rights_uri", "rightsStatement"), ("dates", "date"),
            ("strip_ending_period", "dataProvider"), ("language", "language")} <= changes


def test_required_fields_are_never_emptied(maryland):
    record = copy.deepcopy(maryland)
    record["sourceResource"]["title"] = ["<br/>"]
    enriched, changes = enrich(record)
    assert enriched["sourceResource"]["title"] == ["<br/>"]


def test_a_provider_skips_steps_and_chooses_the_date_parser(maryland):
    entry = ProviderEntry("maryland", {"mapping": "qdc", "enrichment": {
        "skip": ["strip_ending_period", "cleanup_ending_punctuation"], "dates": "parse_date"}})
    chain = chain_for(entry)
    assert chain == Chain(frozenset({"strip_ending_period", "cleanup_ending_punctuation"}), "parse_date")
    enriched, changes = chain.enrich(maryland)
    assert enriched["sourceResource"]["publisher"][0]["name"] == "Alfred A. Knopf, Inc."  # punctuation kept
    assert enriched["sourceResource"]["subject"][0]["name"] == "Brown, Anthony G., 1961-"
    assert enriched["sourceResource"]["date"] == [
        {"providedLabel": ["2008-10-21"], "begin": "2008-10-21", "end": "2008-10-21"}]  # ParseDateEnrichment
    assert not {step for step, _ in changes} & {"strip_ending_period", "cleanup_ending_punctuation"}


def test_montana_mods_format_and_extent(mapped):
    (record,) = mapped("dpla/provider-montana-repox-getrecord-mods.xml", ProviderEntry("mt", {"mapping": "mods"}))
    assert record["sourceResource"]["format"] == ["Format", "jpeg"] and record["sourceResource"]["extent"] == ["Extent"]
    enriched, changes = enrich(record)
    assert enriched["sourceResource"]["format"] == ["Format"]  # jpeg is a digital surrogate; "Format" is a value
    assert enriched["sourceResource"]["extent"] == ["Extent"]  # ingestion3's MtMapping drops it when mapping
    assert ("format_blocklist", "format") in changes


def test_a_repeated_record_gets_the_same_result_in_lists_of_its_own(maryland):
    """Values and whole lists of values are cached (they repeat from record to record): a later record gets the
    same values and changes in new lists, and a value no cache can hold (not a string) is passed by as before."""
    record = copy.deepcopy(maryland)
    sr = record["sourceResource"]
    sr["identifier"] = [" mamo036830 "]
    sr["relation"] = [" Asthma ", {"not": "a string"}]
    sr["creator"] = [*sr["creator"], {"name": {"not": "a string"}, "providedLabel": "O'Dell, Mark"}]
    first, first_changes = enrich(record)
    expected = copy.deepcopy(first)
    assert first["sourceResource"]["identifier"] == ["mamo036830"]
    assert first["sourceResource"]["relation"] == ["Asthma", {"not": "a string"}]
    assert first["sourceResource"]["creator"] == sr["creator"]
    assert {("strip_html", "identifier"), ("strip_html", "relation"), ("cleanup_ending_punctuation", "subject")} \
        <= first_changes
    for name in ("identifier", "relation", "subject"):
        first["sourceResource"][name].clear()  # a later step changing its record's lists

    second, second_changes = enrich(copy.deepcopy(record))
    assert second == expected and second_changes == first_changes
