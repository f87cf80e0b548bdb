"""Registry overrides on top of a named mapping, configuration errors, and records that cannot be mapped."""

from __future__ import annotations

import pytest

from ingest_assets.core.errors import ConfigError
from ingest_assets.records.mapping import mapper_for
from ingest_assets.core.registry import ProviderEntry, parse_registry


@pytest.fixture
def maryland(originals):
    (original,) = originals("dpla/provider-maryland-cdm-oai_qdc-record.xml", "maryland")
    return original


def qdc(**overrides):
    return ProviderEntry("maryland", {"mapping": "qdc", "mapping_overrides": overrides})


def test_identifier_pattern_and_template_build_the_thumbnail(maryland):
    # ingestion3 derives Maryland's thumbnail from the collection and item in the CONTENTdm reference URL.
    mapper = mapper_for(qdc(object={
        "xpath": "dc:identifier",
        "pattern": r"/cdm/ref/collection/(?P<collection>[^/]+)/id/(?P<item>\d+)",
        "template": "http://webconfig.digitalmaryland.org/utils/getthumbnail/collection/{collection}/id/{item}",
    }))
    record = mapper.map(maryland).record
    assert record["object"] == "http://webconfig.digitalmaryland.org/utils/getthumbnail/collection/mamo/id/29817"
    assert record["preview"] == record["object"]
    assert record["isShownAt"] == "http://collections.digitalmaryland.org/cdm/ref/collection/mamo/id/29817"


def test_overrides_merge_key_by_key_and_constants_replace(maryland):
    record = mapper_for(qdc(
        dataProvider={"first": False, "index": 1},  # keeps the named rule's xpath and ';' split: the second value
        intermediateProvider={"value": ["Maryland Digital Cultural Heritage"]},
        subject=None,  # switched off
    )).map(maryland).record
    assert record["dataProvider"] == "foo"
    assert record["intermediateProvider"] == ["Maryland Digital Cultural Heritage"]
    assert record["sourceResource"]["subject"] is None
    assert [c["name"] for c in record["sourceResource"]["creator"]] == ["O'Dell, Mark"]  # untouched


def test_overrides_from_yaml_registry(maryland):
    registry = parse_registry({"maryland": {
        "mapping": "qdc",
        "label": "Digital Maryland",
        "mapping_overrides": {"isShownAt": {"xpath": ["dc:relation", "dc:identifier"], "pattern": "digitalmaryland"}},
    }})
    record = mapper_for(registry["maryland"]).map(maryland).record
    assert record["isShownAt"] == "http://collections.digitalmaryland.org/cdm/ref/collection/mamo/id/29817"


def test_isshownat_that_is_not_a_url_fails_the_record(maryland):
    result = mapper_for(qdc(isShownAt={"pattern": None, "index": 0})).map(maryland)
    assert result.record is None and result.failed
    (message,) = result.messages
    assert (message.kind, message.field, message.value) == ("invalid_value", "isShownAt", "mamo036830")
    assert message.record == maryland["id"]


def test_each_missing_required_field_gets_its_own_message(maryland):
    result = mapper_for(qdc(title=None, dataProvider=None, rights=None, rightsStatement=None)).map(maryland)
    assert result.record is None
    assert sorted((m.kind, m.field) for m in result.messages) == [
        ("missing_required", "dataProvider"), ("missing_required", "rights"), ("missing_required", "title"),
    ]
    assert {m.record for m in result.messages} == {maryland["id"]}


def test_rights_text_without_a_rights_uri_is_enough(maryland):
    record = mapper_for(qdc(rightsStatement=None)).map(maryland).record
    assert record["rightsStatement"] is None and record["sourceResource"]["rights"]


@pytest.mark.parametrize(
    ("settings", "needle"),
    [
        ({}, "registry key 'maryland.mapping': is missing"),
        ({"mapping": "marc"}, "unknown mapping 'marc'"),
        ({"mapping": "profiles/marc.yaml"}, "cannot read the profile"),
        ({"mapping": "qdc", "mapping_overrides": ["x"]}, "'maryland.mapping_overrides': Input should be a valid dict"),
        ({"mapping": "qdc", "mapping_overrides": {"colour": {"value": "x"}}}, "unknown field 'colour'"),
        ({"mapping": "qdc", "mapping_overrides": {"title": "dc:title"}}, "'maryland.mapping_overrides.title': Input should"),
        ({"mapping": "qdc", "mapping_overrides": {"title": {"xpth": "dc:title"}}},
         "mapping rule for 'title': xpth: unknown key (did you mean 'xpath'?)"),
        ({"mapping": "qdc", "mapping_overrides": {"title": {"xpath": "dc:title["}}}, "bad xpath"),
        ({"mapping": "qdc", "mapping_overrides": {"title": {"xpath": "foo:title"}}}, "foo:title"),
        ({"mapping": "qdc", "mapping_overrides": {"title": {"pattern": "("}}}, "bad regex"),
        ({"mapping": "qdc", "mapping_overrides": {"isShownAt": {"pattern": "(x)", "template": "{y}"}}}, "template"),
        ({"mapping": "qdc", "mapping_overrides": {"dataProvider": {"value": " "}}}, "value.0: must be a non-empty string"),
        ({"mapping": "qdc", "mapping_overrides": {"dataProvider": {"value": 5}}}, "value.0: Input should be a valid string"),
        ({"mapping": "qdc", "mapping_overrides": {"subject": {"split": ""}}}, "split.0: String should have at least 1"),
        ({"mapping": "qdc", "mapping_overrides": {"title": {"xpath": "dc:title", "index": "1"}}},
         "index: Input should be a valid integer"),
        ({"mapping": "qdc", "mapping_overrides": {"title": {"xpath": None}}}, "needs a source (xpath, value, header"),
        ({"mapping": "qdc", "mapping_overrides": {"title": {"first_of": [{"xpath": "dc:title", "clean": "shout"}]}}},
         "first_of.0.clean.0: Input should be 'trim-leading-punctuation'"),
        ({"mapping": "qdc", "mapping_overrides": {"subject": {"xpath": "dc:subject", "inScheme": {"value": "x"}}}},
         "sub-properties ['inScheme'] need 'each'"),
        ({"mapping": "qdc", "mapping_overrides": {"title": {"each": "dc:title", "inScheme": {"value": "x"}}}},
         "not sub-properties of a strings value"),
        ({"mapping": "qdc", "mapping_overrides": {"format": {"xpath": "dc:format", "exclude_terms": "nope"}}},
         "unknown vocabulary 'nope'"),
        ({"mapping": "qdc", "mapping_overrides": {"format": {"xpath": "dc:format", "lookup": "dcmi-types"}}},
         "vocabulary 'dcmi-types' holds no table"),
        ({"mapping": "qdc", "mapping_overrides": {"title": {"xpath": "dc:title", "when": "foo:x"}}}, "bad when"),
        ({"mapping": "qdc", "mapping_overrides": {"title": {"xpath": "dc:title", "map": {"a": "b"}, "lookup": "x"}}},
         "give one of map, map_patterns, lookup"),
        ({"mapping": "qdc", "id_prefix": "two words"}, "'maryland.id_prefix'"),
    ],
)
def test_bad_configuration_is_a_config_error_naming_the_provider(settings, needle):
    with pytest.raises(ConfigError) as caught:
        mapper_for(ProviderEntry("maryland", settings))  # found before any record is mapped
    assert needle in str(caught.value)
    assert "provider 'maryland'" in str(caught.value)


def test_deleted_records_are_not_mapped_and_not_failures(originals):
    (original,) = originals("oai-pmh/erasmus-getrecord-deleted.xml", "erasmus")
    assert original["deleted"]
    result = mapper_for(ProviderEntry("erasmus", {"mapping": "oai_dc"})).map(original)
    assert result.record is None and result.deleted and not result.failed
    assert [(m.kind, m.record) for m in result.messages] == [("deleted", original["id"])]


def test_documents_that_cannot_be_read(maryland):
    mapper = mapper_for(qdc())
    broken = mapper.map({**maryland, "document": maryland["document"][:-40]})
    assert broken.failed
    assert [(m.kind, m.field) for m in broken.messages] == [("unparseable", "document")]
    assert "not well-formed XML" in broken.messages[0].reason

    no_id = mapper.map({**maryland, "id": ""})
    assert no_id.failed and [(m.kind, m.field) for m in no_id.messages] == [("missing_required", "id")]

    json_doc = mapper.map({**maryland, "document": '{"title": "x"}', "mimetype": "application_json"})
    assert json_doc.failed and "reads XML documents" in json_doc.messages[0].reason

    wrong_format = mapper_for(ProviderEntry("maryland", {"mapping": "mods"})).map(maryland)
    # the QDC record holds no MODS element: the first element inside <metadata> is used, and has no MODS fields
    assert wrong_format.failed
    assert {m.field for m in wrong_format.messages} >= {"title", "isShownAt", "dataProvider"}


def test_entities_are_not_expanded(maryland):
    evil = (
        '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        + maryland["document"].replace("<dc:title>", "<dc:title>&x;")
    )
    record = mapper_for(qdc()).map({**maryland, "document": evil}).record
    assert "root:" not in record["sourceResource"]["title"][0]
