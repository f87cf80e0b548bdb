"""Profiles as data files: the shipped ones, a hub's own file (any XML root and namespace), ``extends``, the rule
keys both path languages share, and configuration errors named by profile and file."""

from __future__ import annotations

import json

import pytest

from ingest_assets.core.errors import ConfigError
from ingest_assets.records.mapping.mapper import ProviderSettings, build_mapper
from ingest_assets.records.mapping.profiles import PROFILES, load_profile

# A museum's own XML export: a namespace and root no shipped profile knows.
MUSEUM_RECORD = """<?xml version="1.0" encoding="UTF-8"?>
<export xmlns:m="urn:example:museum">
  <m:object id="1987.12">
    <m:name>Quilt, Log Cabin pattern</m:name>
    <m:maker role="maker">Hannah Ames</m:maker>
    <m:maker role="donor">Ames family</m:maker>
    <m:made>1870-1880</m:made>
    <m:kind>Textile</m:kind>
    <m:size>Format: 210 x 190 cm</m:size>
    <m:link>https://collections.example.org/objects/1987.12</m:link>
    <m:image>https://collections.example.org/iiif/1987.12/full/200,/0/default.jpg</m:image>
    <m:licence>http://rightsstatements.org/vocab/NoC-US/1.0/</m:licence>
  </m:object>
</export>"""

MUSEUM_PROFILE = """
description: Example museum object export
source: xml
namespaces: {m: 'urn:example:museum'}
root: [m:object]
id: {xpath: '@id'}
fields:
  title: {xpath: m:name}
  creator: {xpath: "m:maker[@role='maker']"}
  date: {xpath: m:made}
  type: {xpath: m:kind, map: {textile: physical object, photograph: image}}
  extent: {xpath: m:size, pattern: '^(?:Format:\\s*)?(.+)$', template: '{0}'}
  isShownAt: {xpath: m:link, first: true}
  object: {xpath: m:image, first: true}
  rightsStatement: {xpath: m:licence, first: true}
  dataProvider: {default: Example Museum}
"""


def museum_original() -> dict:
    return {"id": "1987.12", "ingestDate": 1, "document": MUSEUM_RECORD, "mimetype": "application_xml"}


def test_the_shipped_profiles():
    assert {"oai_dc", "qdc", "mods", "nara", "mdl", "cdl"} <= set(PROFILES)
    assert PROFILES["qdc"].source == "xml" and PROFILES["mdl"].source == "json"
    # qdc extends oai_dc: it inherits what it does not restate and adds ';' splits
    assert PROFILES["qdc"].rules["identifier"] == PROFILES["oai_dc"].rules["identifier"]
    assert PROFILES["qdc"].rules["creator"] == {"xpath": "dc:creator", "split": ";"}
    assert all(p.description for p in PROFILES.values())


def test_a_hubs_own_profile_file_maps_its_own_xml(tmp_path):
    path = tmp_path / "museum.yaml"
    path.write_text(MUSEUM_PROFILE)
    profile = load_profile(path)
    assert profile.name == "museum" and profile.root_tags == ("{urn:example:museum}object",)
    record = build_mapper(ProviderSettings("museum", "Example Hub"), profile, {}).map(museum_original()).record
    assert record["dataProvider"] == "Example Museum"  # the default: the source has none
    assert record["isShownAt"] == "https://collections.example.org/objects/1987.12"
    assert record["object"] == record["preview"] == "https://collections.example.org/iiif/1987.12/full/200,/0/default.jpg"
    assert record["rightsStatement"] == "http://rightsstatements.org/vocab/NoC-US/1.0/"
    sr = record["sourceResource"]
    assert sr["title"] == ["Quilt, Log Cabin pattern"]
    assert [c["name"] for c in sr["creator"]] == ["Hannah Ames"]
    assert sr["date"][0]["providedLabel"] == ["1870-1880"]
    assert sr["type"] == ["physical object"]  # looked up case-insensitively
    assert sr["extent"] == ["210 x 190 cm"]


def test_a_record_may_carry_its_dpla_id_instead_of_minting_one(tmp_path):
    """``dpla_id``: items re-ingested from DPLA's index keep their ids; a record without one is refused."""
    path = tmp_path / "retcon.yaml"
    path.write_text("description: re-ingested items\nsource: json\nid: {path: _id}\ndpla_id: {path: _source.id}\n"
                    "fields:\n  title: {path: _source.title}\n  rights: {value: r}\n  dataProvider: {value: d}\n"
                    "  isShownAt: {value: 'https://example.org/1'}\n")
    mapper = build_mapper(ProviderSettings("retcon", "Hub", id_prefix="hub"), load_profile(path), {})

    def original(source: dict) -> dict:
        document = json.dumps({"_id": "hub--1", "_source": {"title": "t", **source}})
        return {"id": "1", "ingestDate": 1, "document": document, "mimetype": "application_json"}

    record = mapper.map(original({"id": "8bca6ea2341791bb4b30c471115e76e8"})).record
    assert record["id"] == "8bca6ea2341791bb4b30c471115e76e8" != mapper.mint("1")
    assert record["dplaUri"] == "http://dp.la/api/items/8bca6ea2341791bb4b30c471115e76e8"
    refused = mapper.map(original({}))
    assert refused.record is None and [(m.kind, m.field) for m in refused.messages] == [("missing_required", "id")]


def test_a_profile_extends_a_shipped_one_field_by_field(tmp_path, shared_fixtures):
    path = tmp_path / "mdl_plus.yaml"
    path.write_text(
        "description: MDL with the creators as contributors\nextends: mdl\n"
        "fields:\n"
        "  contributor:\n    - {path: attributes.metadata.sourceResource.contributor}\n"
        "    - {path: attributes.metadata.sourceResource.creator}\n"
        "  creator: null\n"
        "  dataProvider: {value: Minnesota Public Radio Archive}\n"
    )
    profile = load_profile(path)
    assert profile.source == "json" and profile.id_rule == PROFILES["mdl"].id_rule
    document = (shared_fixtures / "dpla" / "provider-minnesota-mdl-json.json").read_text()
    record = build_mapper(ProviderSettings("minnesota", "MDL"), profile, {}).map(
        {"id": "x", "ingestDate": 1, "document": document, "mimetype": "application_json"}).record
    assert [c["name"] for c in record["sourceResource"]["contributor"]] == [
        "contrib1", "contrib2", "creator1", "creator2",
    ]
    assert record["sourceResource"]["creator"] is None
    assert record["dataProvider"] == "Minnesota Public Radio Archive"
    assert record["sourceResource"]["title"] == ["Hmong vendors learn the law on legal drug sales"]  # inherited


@pytest.mark.parametrize(("text", "needle"), [
    ("description: x\nroot: [dc]\nfields: {}\n", "needs 'source: xml' or 'source: json'"),
    ("description: x\nsource: csv\n", "key 'source'"),
    ("description: x\nsource: xml\ncolour: red\n", "key 'colour'"),
    ("description: x\nsource: xml\nroot: [q:item]\n", "unknown prefix 'q'"),
    ("description: x\nextends: marc\n", "extends unknown profile 'marc'"),
    ("description: x\nsource: json\nfields: {colour: {path: a}}\n", "unknown field 'colour'"),
    ("description: [x\n", "not valid YAML"),
    ("description: x\nsource: json\nrecords: 'response.[docs'\n", "records: bad JMESPath"),
])
def test_bad_profile_files_are_config_errors_naming_the_file(tmp_path, text, needle):
    path = tmp_path / "mine.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_profile(path)
    assert needle in str(caught.value)
    assert str(path) in str(caught.value) and "'mine'" in str(caught.value)


@pytest.mark.parametrize(("rule", "needle"), [
    ({"path": "a.[b"}, "bad path"),
    ({"xpath": "a"}, "a JSON profile's rules take 'path' (JMESPath), not 'xpath'"),
    ({"path": "a", "map": {}}, "map: Dictionary should have at least 1 item"),
    ({"path": "a", "default": ""}, "default.0: must be a non-empty string"),
    ({"path": "a", "header": "identifier"}, "not 'xpath' or 'header'"),
    ({"each": "a[]", "coordinates": {"path": "c"}}, "not sub-properties of a strings value"),
    ([], "an empty list of rules"),
])
def test_bad_json_rules_are_config_errors_naming_the_field(rule, needle):
    with pytest.raises(ConfigError) as caught:
        build_mapper(ProviderSettings("cdl", "CDL"), PROFILES["cdl"], {"title": rule})
    assert needle in str(caught.value) and "'title'" in str(caught.value) and "provider 'cdl'" in str(caught.value)


def test_json_values_of_any_shape_become_strings():
    profile = PROFILES["cdl"]
    document = {**_minimal_cdl(), "year": 1901, "flags": [True, None, 2.5], "nested": {"a": "b"}}
    record = build_mapper(ProviderSettings("cdl", "CDL"), profile, {"identifier": {"path": "[id, year, flags, nested]"}}).map(
        {"id": "x", "ingestDate": 1, "document": json.dumps(document), "mimetype": "application_json"}).record
    assert record["sourceResource"]["identifier"] == ["k1", "1901", "2.5"]  # booleans, nulls and objects skipped


def _minimal_cdl() -> dict:
    return {"id": "k1", "title_ss": ["t"], "repository_name": ["r"], "url_item": "https://calisphere.org/item/k1/",
            "rights_uri": "http://rightsstatements.org/vocab/InC/1.0/"}


@pytest.mark.parametrize(("fields", "needle"), [
    ("title: {xpath: 'm:name['}", "mapping rule for 'title': bad xpath"),
    ("title: {xpath: m:name, pattern: '('}", "bad regex"),
    ("title: {xpath: m:name, colour: red}", "mapping rule for 'title': colour: unknown key"),
])
def test_a_profile_files_rules_are_checked_when_it_is_loaded(tmp_path, fields, needle):
    path = tmp_path / "museum.yaml"
    path.write_text(MUSEUM_PROFILE.split("fields:")[0] + "fields:\n  " + fields + "\n")
    with pytest.raises(ConfigError) as caught:
        load_profile(path)
    assert needle in str(caught.value) and str(path) in str(caught.value)
