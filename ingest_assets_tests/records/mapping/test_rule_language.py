"""The rule language construct by construct, on small records, through the registry's ``mapping_overrides`` (the
way a hub uses them on a shipped profile) and a profile of one's own: what each gives, in which order, and the
ConfigError each refusal is."""

from __future__ import annotations

import json

import pytest

from ingest_assets.core.errors import ConfigError
from ingest_assets.core.registry import ProviderEntry
from ingest_assets.records.mapping import mapper_for
from ingest_assets.records.mapping.cleaning import CLEANERS
from ingest_assets.records.mapping.mapper import ProviderSettings, build_mapper
from ingest_assets.records.mapping.profiles import load_profile

OAI = "http://www.openarchives.org/OAI/2.0/"
DC = "http://purl.org/dc/elements/1.1/"
REQUIRED = {"title": {"value": "t"}, "rights": {"value": "r"}, "dataProvider": {"value": "d"},
            "isShownAt": {"value": "https://example.org/x"}}


def oai_record(metadata: str, sets: tuple[str, ...] = ("partner:UNT",)) -> dict:
    specs = "".join(f"<setSpec>{s}</setSpec>" for s in sets)
    document = (f'<record xmlns="{OAI}"><header><identifier>oai:x:1</identifier>{specs}</header><metadata>'
                f'<oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/" xmlns:dc="{DC}">{metadata}'
                "</oai_dc:dc></metadata></record>")
    return {"id": "oai:x:1", "ingestDate": 1, "document": document, "mimetype": "application_xml"}


def mapped(overrides: dict, record: dict, mapping: str = "oai_dc") -> dict:
    result = mapper_for(ProviderEntry("hub", {"mapping": mapping, "mapping_overrides": {**REQUIRED, **overrides}}))
    return result.map(record).record


def sr(overrides: dict, metadata: str, **kwargs) -> dict:
    return mapped(overrides, oai_record(metadata, **kwargs))["sourceResource"]


def test_header_sources_reach_the_oai_header_from_the_metadata_root():
    record = mapped({"identifier": {"header": "identifier"}, "relation": {"header": "setSpec"}},
                    oai_record("", sets=("partner:UNT", "collection:AD")))
    assert record["sourceResource"]["identifier"] == ["oai:x:1"]
    assert record["sourceResource"]["relation"] == ["partner:UNT", "collection:AD"]


def test_fallbacks_concatenation_and_concat():
    metadata = "<dc:title>A</dc:title><dc:subject>s1</dc:subject><dc:subject>s2</dc:subject><dc:format>f</dc:format>"
    found = sr({
        "description": {"first_of": [{"xpath": "dc:description"}, {"xpath": "dc:subject", "first": True}]},
        "format": {"all_of": [{"xpath": "dc:format"}, {"xpath": "dc:subject"}], "index": -1},
        "alternative": {"concat": [{"xpath": "dc:title"}, {"xpath": "dc:subject"}, {"xpath": "dc:nothing"}],
                        "separator": " / "},
    }, metadata)
    assert found["description"] == ["s1"]  # the first rule gave nothing, the second its first value
    assert found["format"] == ["s2"]  # all values, then the last
    assert found["alternative"] == ["A / s1 / s2"]  # a part without values is left out


def test_zip_pairs_values_by_position():
    metadata = ("<dc:title>Art of dying well</dc:title><dc:title>Act 2</dc:title><dc:title>Act 3</dc:title>"
                "<dc:relation>vol 1.</dc:relation><dc:relation>vol 2.</dc:relation><dc:source>issue 1</dc:source>")
    found = sr({"alternative": {"zip": [{"xpath": "dc:title"}, {"xpath": "dc:relation"}, {"xpath": "dc:source"}],
                                "separator": ", "},
                "description": {"zip": [{"xpath": "dc:nothing"}, {"xpath": "dc:source"}]}}, metadata)
    # the n-th title with the n-th volume and issue; a part that ran out adds nothing
    assert found["alternative"] == ["Art of dying well, vol 1., issue 1", "Act 2, vol 2.", "Act 3"]
    assert found["description"] == ["issue 1"]
    with pytest.raises(ConfigError, match="'separator' goes with 'concat' or 'zip'"):
        sr({"alternative": {"xpath": "dc:title", "separator": ", "}}, metadata)


def test_each_keeps_document_order_and_gives_sub_properties():
    metadata = ('<dc:subject scheme="LCSH" uri="http://id.loc.gov/1">Rivers</dc:subject><dc:coverage>Ohio</dc:coverage>'
                '<dc:subject>Floods</dc:subject><dc:subject scheme="AAT">Maps</dc:subject>')
    found = sr({"subject": {
        "each": "dc:subject",
        "inScheme": {"xpath": "@scheme", "map": {"LCSH": "http://id.loc.gov/authorities#conceptscheme"}},
        "exactMatch": {"xpath": "@uri"},
    }}, metadata)
    assert [(s["name"], s["inScheme"], s["exactMatch"]) for s in found["subject"]] == [
        ("Rivers", "http://id.loc.gov/authorities#conceptscheme", ["http://id.loc.gov/1"]),
        ("Floods", None, None),
        ("Maps", None, None),  # not in the table: no scheme (an unlisted value is dropped)
    ]


def test_each_item_rules_are_relative_to_the_item_with_fallbacks_and_conditions():
    metadata = ("<dc:creator><dc:name>Adams</dc:name><dc:role>aut</dc:role></dc:creator>"
                "<dc:creator>Plain text</dc:creator><dc:creator><dc:name>Bell</dc:name><dc:role>ill</dc:role></dc:creator>")
    found = sr({
        "creator": {"each": "dc:creator", "xpath": ["dc:name", "."]},
        "contributor": {"each": "dc:creator", "when": "dc:role = 'ill'", "xpath": "dc:name"},
    }, metadata)
    assert [c["name"] for c in found["creator"]] == ["Adams", "Plain text", "Bell"]
    assert [c["name"] for c in found["contributor"]] == ["Bell"]


def test_the_default_of_an_each_rule_is_the_rules_when_no_item_gives_a_value():
    metadata = "<dc:creator><dc:name>Adams</dc:name></dc:creator><dc:creator><dc:role>aut</dc:role></dc:creator>"
    found = sr({
        "creator": {"each": "dc:creator", "xpath": "dc:name", "default": "Unknown"},  # Adams: no default added
        "publisher": {"each": "dc:publisher", "xpath": "dc:name", "default": "Unknown"},  # no items at all
        "contributor": {"each": "dc:creator", "when": "dc:role = 'ill'", "xpath": "dc:name", "default": "None"},
    }, metadata)
    assert [c["name"] for c in found["creator"]] == ["Adams"]
    assert [p["name"] for p in found["publisher"]] == ["Unknown"]
    assert [c["name"] for c in found["contributor"]] == ["None"]  # no item passes its condition


def test_conditions_on_another_element_or_attribute():
    metadata = '<dc:type kind="x">Image</dc:type><dc:rights>open</dc:rights>'
    found = sr({
        "format": {"xpath": "dc:type", "when": "dc:rights = 'open'"},
        "genre": {"each": "dc:type", "when": "@kind='x' or @kind='y'"},  # attribute tests, answered without lxml
        "extent": {"xpath": "dc:type", "when": "dc:rights = 'closed'", "default": "never"},
    }, metadata)
    assert found["format"] == ["Image"] and [g["name"] for g in found["genre"]] == ["Image"]
    assert found["extent"] is None  # a condition that fails gives nothing, not even the default


def test_tables_patterns_and_vocabularies():
    metadata = ("<dc:format>image/jpeg</dc:format><dc:format>Oil on canvas</dc:format><dc:format>Image</dc:format>"
                "<dc:type>by</dc:type><dc:type>a statement</dc:type><dc:language>eng; fre</dc:language>"
                "<dc:publisher>Library of Virginia Richmond, VA 23219</dc:publisher><dc:relation>AB12CD</dc:relation>")
    found = sr({
        "format": {"xpath": "dc:format", "exclude_terms": ["digital-surrogates", "format-type-words"]},
        "type": {"xpath": "dc:type", "map": {"BY": "License: Attribution."}, "unlisted": "keep"},
        "genre": {"xpath": "dc:type", "keep_terms": "dcmi-types"},
        "language": {"xpath": "dc:language", "split": ";", "map": {"eng": "English"}},
        "publisher": {"xpath": "dc:publisher", "map_patterns": {"^Library of Virginia": "Library of Virginia"}},
        "identifier": {"xpath": "dc:relation", "pattern": "[A-Z]{2}", "all_matches": True},
    }, metadata)
    assert found["format"] == ["Oil on canvas"]
    assert found["type"] == ["License: Attribution.", "a statement"]  # compared case-insensitively; others kept
    assert found["genre"] is None  # 'by' and 'a statement' are no DCMI types
    assert found["language"] == ["English"]  # 'fre' is not in the table: dropped
    assert [p["name"] for p in found["publisher"]] == ["Library of Virginia"]
    assert found["identifier"] == ["AB", "CD"]


def test_clean_join_unique_and_slices():
    metadata = "<dc:subject>recital programs.</dc:subject><dc:subject>; opera,</dc:subject><dc:subject>opera</dc:subject>"
    found = sr({
        "subject": {"xpath": "dc:subject", "clean": ["trim-leading-punctuation", "trim-trailing-punctuation",
                                                     "strip-ending-period", "capitalize-first"], "unique": True},
        "description": {"xpath": "dc:subject", "join": " | "},
        "relation": {"xpath": "dc:subject", "slice": [0, -1]},
    }, metadata)
    assert [s["name"] for s in found["subject"]] == ["Recital programs", "Opera"]
    assert found["description"] == ["recital programs. | ; opera, | opera"]
    assert found["relation"] == ["recital programs.", "; opera,"]


def test_split_on_any_of_several_delimiters():
    found = sr({"creator": {"xpath": "dc:creator", "split": ["|", ";", ":"]}, "subject": {"xpath": "dc:subject", "split": "|"}},
               "<dc:creator>Smith, J.|Doe, A.; Roe: R. ;;</dc:creator><dc:subject>a; b|c</dc:subject>")
    assert [c["name"] for c in found["creator"]] == ["Smith, J.", "Doe, A.", "Roe", "R."]
    assert [s["name"] for s in found["subject"]] == ["a; b", "c"]


def test_replace_puts_literal_text_for_every_match_in_order():
    metadata = ("<dc:identifier>http://74.126.224.22/luna/1?a=74.126.224.22</dc:identifier>"
                "<dc:subject>Maps -- Calcutta \\1</dc:subject><dc:subject>--</dc:subject>")
    found = sr({
        "identifier": {"xpath": "dc:identifier", "replace": {r"74\.126\.224\.22": "www.davidrumsey.com"}},
        "subject": {"xpath": "dc:subject", "replace": {r"\s*--\s*": "; ", "^; $": ""}},
    }, metadata)
    assert found["identifier"] == ["http://www.davidrumsey.com/luna/1?a=www.davidrumsey.com"]
    assert [s["name"] for s in found["subject"]] == ["Maps; Calcutta \\1"]  # text as written; '--' alone: nothing


@pytest.mark.parametrize(("name", "given", "expected"), [
    ("trim-leading-punctuation", " ;- :Title", "Title"),
    ("trim-trailing-punctuation", "Title ;/ -", "Title"),
    ("trim-trailing-punctuation", "1893].", "1893]."),  # only after the last letter or digit, '.' stays
    ("trim-trailing-comma", "Smith, John, ", "Smith, John"),
    ("strip-ending-period", "Antiquities.", "Antiquities"),
    ("strip-ending-period", "Et al...", "Et al..."),
    ("strip-unmatched-brackets", "1893]", "1893"),
    ("strip-unmatched-brackets", "[1893]", "[1893]"),
    ("capitalize-first", "...vacationland", "...Vacationland"),
    ("capitalize-first", "3 blind mice", "3 blind mice"),
    ("collapse-whitespace", "  a \n b  ", "a b"),
    ("lowercase", "MAP", "map"),
    ("uppercase", "map", "MAP"),
    ("collapse-year-list", "1903; 1901;1902", "1901-1903"),
    ("collapse-year-list", "1901;1903", "1901;1903"),  # not a run of years
    ("collapse-year-list", "1910", "1910"),
])
def test_the_closed_set_of_clean_functions(name, given, expected):
    assert CLEANERS[name](given) == expected


def test_json_rules_iterate_values_with_sub_properties_and_conditions():
    document = {"title": "t", "rights": "r", "url": "https://example.org/x", "owner": "d",
                "places": [{"name": ["cincinnati", "ohio"], "coordinates": ["1.2 3.4"]}, "dayton"],
                "dates": {"display": "2014-08-14", "begin": "2014", "end": "2014"},
                "kinds": [{"map": "https://loc.gov/map"}], "flag": 0}
    overrides = {
        "spatial": {"each": "places", "path": ["name", "@"], "first": True,
                    "coordinates": {"path": "coordinates", "first": True}},
        "date": {"each": "dates", "path": "display", "begin": {"path": "begin"}, "end": {"path": "end"}},
        "type": {"path": "kinds[?type(@) == 'object'].keys(@)[]", "clean": "capitalize-first"},
        "format": {"path": "title", "when": "flag"},  # 0 is true for JMESPath
    }
    rules = {"title": {"path": "title"}, "rights": {"path": "rights"}, "isShownAt": {"path": "url"},
             "dataProvider": {"path": "owner"}}
    mapper = mapper_for(ProviderEntry("hub", {"mapping": "mdl", "mapping_overrides": {**rules, **overrides}}))
    record = mapper.map({"id": "1", "ingestDate": 1, "document": json.dumps(document), "mimetype": "application_json"})
    found = record.record["sourceResource"]
    assert [(p["name"], p["coordinates"]) for p in found["spatial"]] == [("cincinnati", "1.2 3.4"), ("dayton", None)]
    assert [(d["providedLabel"], d["begin"], d["end"]) for d in found["date"]] == [(["2014-08-14"], "2014", "2014")]
    assert found["type"] == ["Map"] and found["format"] == ["t"]


@pytest.mark.parametrize(("override", "needle"), [
    ({"subject": {"xpath": "dc:subject", "colour": "red"}}, "mapping rule for 'subject': colour: unknown key"),
    ({"subject": {"each": "dc:subject", "coordinates": {"xpath": "@c"}}}, "not sub-properties of a concept value"),
    ({"spatial": {"first_of": [{"each": "dc:coverage", "inScheme": {"xpath": "@s"}}]}},
     "first_of.0: ['inScheme']: not sub-properties of a place value"),
    ({"subject": {"xpath": "dc:subject", "header": "setSpec"}}, "give one source, not ['xpath', 'header']"),
    ({"subject": {"header": "status"}}, "header: Input should be 'identifier', 'datestamp' or 'setSpec'"),
    ({"subject": {"xpath": "dc:subject", "all_matches": True}}, "'all_matches' needs a 'pattern'"),
    ({"subject": {"concat": [{"xpath": "dc:a"}], "separator": 5}}, "separator: Input should be a valid string"),
    ({"subject": {"xpath": "dc:subject", "slice": [1]}}, "slice: List should have at least 2 items"),
    ({"subject": {"xpath": "dc:subject", "split": [";", ""]}}, "split.1: String should have at least 1 character"),
    ({"subject": {"each": "dc:subject["}}, "bad each 'dc:subject['"),
    ({"subject": {"xpath": "dc:subject", "replace": {"(": "x"}}}, "bad regex '(': missing )"),
    ({"subject": {"xpath": "dc:subject", "lookup": "marc-leader-formats", "unlisted": "maybe"}},
     "unlisted: Input should be 'drop' or 'keep'"),
])
def test_every_construct_is_checked_when_the_overrides_are(override, needle):
    with pytest.raises(ConfigError) as caught:
        mapper_for(ProviderEntry("hub", {"mapping": "oai_dc", "mapping_overrides": override}))
    assert needle in str(caught.value) and "provider 'hub'" in str(caught.value)


def test_a_condition_may_be_a_rule_that_holds_when_it_gives_a_value():
    metadata = ("<dc:creator role='Engraver .'>Kay, John</dc:creator><dc:creator role='Owner'>Someone</dc:creator>"
                "<dc:creator>Nobody</dc:creator>")
    role = {"xpath": "@role", "clean": "lowercase", "pattern": r"^(.*?)(?: \.)?$", "template": "{0}"}
    found = sr({"creator": {"each": "dc:creator", "when": {**role, "map": {"engraver": "x", "artist": "x"}}},
                "contributor": {"each": "dc:creator", "when": {**role, "exclude": "^engraver$"}}}, metadata)
    assert [c["name"] for c in found["creator"]] == ["Kay, John"]
    assert [c["name"] for c in found["contributor"]] == ["Someone"]  # no role: the condition gives nothing


NYPL_LIKE = {"uuid": "u1", "thumbnail_url": "https://example.org/t.jpg",
             "solr": {"rights": ["r"], "mods": '<?xml version="1.0" encoding="UTF-8"?>\n<mods '
                      'xmlns="http://www.loc.gov/mods/v3"><titleInfo><title>T</title></titleInfo>'
                      '<subject><topic valueURI="http://id.loc.gov/1">Topic</topic></subject>'
                      '<location><url>https://example.org/u1</url></location></mods>'}}
EMBEDDED_PROFILE = """
description: JSON records with their MODS inside a string
source: json
embedded_xml: solr.mods
root: [mods:mods]
id: {path: uuid}
fields:
  title: {xpath: mods:titleInfo/mods:title}
  subject: {each: mods:subject/mods:topic, exactMatch: {xpath: '@valueURI'}}
  rights: {path: solr.rights}
  preview: {path: thumbnail_url}
  isShownAt: {xpath: mods:location/mods:url, first: true}
  dataProvider: {value: d}
"""


def embedded_mapper(tmp_path, profile: str = EMBEDDED_PROFILE):
    path = tmp_path / "embedded.yaml"
    path.write_text(profile, encoding="utf-8")
    return build_mapper(ProviderSettings("hub", "Hub"), load_profile(path), {})


def test_xpath_reads_the_xml_a_json_record_embeds_and_path_the_record(tmp_path):
    mapper = embedded_mapper(tmp_path)
    record = mapper.map({"id": "u1", "ingestDate": 1, "document": json.dumps(NYPL_LIKE),
                         "mimetype": "application_json"}).record
    assert record["sourceResource"]["title"] == ["T"] and record["sourceResource"]["rights"] == ["r"]
    assert record["sourceResource"]["subject"][0]["exactMatch"] == ["http://id.loc.gov/1"]
    assert (record["isShownAt"], record["preview"]) == ("https://example.org/u1", "https://example.org/t.jpg")


@pytest.mark.parametrize(("mods", "reason"), [
    (None, "no XML document at 'solr.mods'"),
    ("<mods", "not well-formed XML"),
    ('<!DOCTYPE m [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
     '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><mods xmlns="http://www.loc.gov/mods/v3">&c;</mods>',
     "declares entities in its DTD"),  # as a document read from a file or a harvest would be
])
def test_a_record_without_readable_embedded_xml_is_refused_alone(tmp_path, mods, reason):
    document = json.dumps({**NYPL_LIKE, "solr": {"rights": ["r"], "mods": mods}})
    result = embedded_mapper(tmp_path).map({"id": "u1", "ingestDate": 1, "document": document,
                                            "mimetype": "application_json"})
    assert result.failed and reason in result.messages[0].reason


@pytest.mark.parametrize(("change", "needle"), [
    (("source: json", "source: xml"), "embedded_xml is the string of a JSON record that holds XML"),
    (("embedded_xml: solr.mods", "embedded_xml: 'solr.['"), "embedded_xml: bad JMESPath"),
    (("  dataProvider: {value: d}", "  dataProvider: {header: identifier}"), "have no OAI-PMH 'header'"),
    (("  dataProvider: {value: d}", "  dataProvider: {each: mods:name, path: name}"), "bad path 'name'"),
])
def test_embedded_xml_profiles_are_checked_when_loaded(tmp_path, change, needle):
    with pytest.raises(ConfigError, match=needle):
        embedded_mapper(tmp_path, EMBEDDED_PROFILE.replace(*change))
