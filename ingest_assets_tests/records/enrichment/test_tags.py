"""The ``tags`` step on real records: ingestion3's tag assertions (FlMappingTest, NcMappingTest, MwdlMappingTest,
NorthwestHeritageMappingTest) on its fixtures and inline records, mapped by our profiles and enriched; the tags
DPLA published for the ingestion3-era documents of ``../shared/fixtures/dpla-published/``; the index document."""

from __future__ import annotations

import json
from xml.sax.saxutils import escape

import pytest
from fastavro.validation import validate

from ingest_assets.core.registry import ProviderEntry
from ingest_assets.records.enrichment import Chain, chain_for
from ingest_assets.records.enrichment.tags import parse_rules, tag_rules, tags_of
from ingest_assets.records.indexing import index_record
from ingest_assets.records.mapping import mapper_for
from ingest_assets.records.preview import read_inputs
from ingest_assets.records.mapping.profiles import PROFILES
from ingest_assets_tests.support.dpla_published import documents, profile_of, publish

CLEARED_TO_LAND = ('This item was digitized as part of the "Cleared to Land" project, supported by a grant from the '
                   'National Historical Publications & Records Commission (NHPRC).')
MODS = '<mods xmlns="http://www.loc.gov/mods/v3" xmlns:xlink="http://www.w3.org/1999/xlink">{}</mods>'
PRIMO = ('<PrimoNMBib xmlns="http://www.exlibrisgroup.com/xsd/primo/primo_nm_bib"><record><control><recordid>'
         "digcoll_uou_1</recordid></control><display><title>t</title><lds03>{}</lds03><rights>r</rights></display>"
         "</record></PrimoNMBib>")


def enriched(hub: str, record: dict, **settings) -> dict:
    entry = ProviderEntry(hub, {"mapping": hub, **settings})
    result = mapper_for(entry).map(record)
    assert result.record is not None, result.messages
    return chain_for(entry).enrich(result.record)[0]


def fixture(hub: str, path) -> dict:
    (record,) = read_inputs([str(path)], PROFILES[hub], hub)
    return enriched(hub, record)


def inline(hub: str, document: str, **settings) -> dict:
    return enriched(hub, {"id": "oai:hub:1", "ingestDate": 1700000000, "document": document,
                          "mimetype": "application_xml"}, **settings)


def nc_record(note: str) -> str:
    """NcMappingTest's record: a MODS note of type content, with what a record needs to be mapped at all."""
    return ('<record xmlns="http://www.openarchives.org/OAI/2.0/"><header><identifier>oai:hub:1</identifier></header>'
            "<metadata>" + MODS.format(
                '<titleInfo><title>t</title></titleInfo><note type="ownership">d</note><accessCondition>r</accessCondition>'
                '<location><url usage="primary display" access="object in context">https://example.org/1</url></location>'
                f'<note type="content">{escape(note)}</note>') + "</metadata></record>")


def test_ingestion3s_tag_assertions(shared_fixtures, map_schema):
    ingestion3 = shared_fixtures / "ingestion3"
    # FlMappingTest: "apply the correct aviation tag when given a valid value in description" (fl.json)
    assert fixture("fl", ingestion3 / "fl.json")["tags"] == ["aviation"]
    # NcMappingTest: the "Cleared to Land" note (its inline record)
    assert inline("nc", nc_record(CLEARED_TO_LAND))["tags"] == ["aviation"]
    # MwdlMappingTest: a Bushnell University record (lds03, the data provider) is NWDH's
    assert inline("mwdl", PRIMO.format("Bushnell University"))["tags"] == ["nwdh"]
    # NorthwestHeritageMappingTest: "apply a nwdh tag" (northwest-heritage.xml)
    northwest = fixture("northwest-heritage", ingestion3 / "northwest-heritage.xml")
    assert northwest["tags"] == ["nwdh"] and validate(northwest, map_schema, raise_errors=True)  # the Avro field
    # TxMapping and TxdlMapping tag every record (their tests assert nothing about it)
    assert fixture("tx", ingestion3 / "tx.xml")["tags"] == ["texas"]
    assert fixture("txdl", ingestion3 / "txdl.xml")["tags"] == ["texas"]


def test_a_tag_needs_the_whole_value_and_its_hub(shared_fixtures):
    assert "tags" not in inline("nc", nc_record(CLEARED_TO_LAND[:-1]))  # not the whole value: no tag
    assert "tags" not in inline("nc", nc_record(CLEARED_TO_LAND), enrichment={"skip": ["tags"]})  # skipped
    assert "tags" not in inline("mwdl", PRIMO.format("University of Utah"))  # not an NWDH data provider
    # the aviation sentence in another hub's record: only Florida's and North Carolina's mappings tag it
    (md,) = read_inputs([str(shared_fixtures / "ingestion3" / "mdl.json")], PROFILES["mdl"], "mdl")
    mapped = mapper_for(ProviderEntry("mdl", {"mapping": "mdl"})).map(md).record
    mapped["sourceResource"] = {**mapped["sourceResource"], "description": [CLEARED_TO_LAND]}
    assert tags_of(mapped) == [] and tags_of({**mapped, "provider": "Sunshine State Digital Network"}) == ["aviation"]


def test_tags_are_matched_as_mapped_and_reach_the_index_document():
    record = {"id": "x", "provider": "Mountain West Digital Library", "dataProvider": "Oregon State University Libraries",
              "isShownAt": "https://example.org/1", "preview": "https://example.org/1", "ingestDate": 1700000000,
              "sourceResource": {"title": ["t"], "rights": ["r"]}, "tags": ["nwdh", "oregon"]}
    out, changes = Chain().enrich(record)
    assert out["tags"] == ["nwdh", "oregon"] and ("tags", "tags") not in changes  # a tag already there is kept once
    out, changes = Chain().enrich({**record, "tags": None, "dataProvider": "Oregon State University Libraries."})
    assert out.get("tags") is None  # the value as mapped decides, not the normalized one (the period goes later)
    out, changes = Chain().enrich({**record, "tags": None})
    assert out["tags"] == ["nwdh"] and ("tags", "tags") in changes
    assert json.loads(index_record(out)["document"])["tags"] == ["nwdh"]


def test_the_tags_dpla_published(shared_fixtures):
    """Every ingestion3-era document with a shipped profile: our tags are DPLA's (nwdh for Northwest Digital
    Heritage's records, none for the others)."""
    compared = {}
    for path in documents():
        if profile_of(path) in PROFILES:
            ours, dpla = publish(path)
            compared[path.name] = (ours.get("tags"), dpla.get("tags"))
    assert len(compared) >= 11
    assert all(ours == theirs for ours, theirs in compared.values()), compared
    assert compared["northwest-heritage-084fd481.json"] == (["nwdh"], ["nwdh"])


def test_the_rules_are_ingestion3s_and_a_bad_file_is_refused():
    rules = {rule.tag: rule for rule in tag_rules() if rule.fields != ("provider",)}
    assert {r.tag for r in tag_rules()} == {"aviation", "nwdh", "texas"}
    assert len(rules["aviation"].terms) == 2 and CLEARED_TO_LAND in rules["aviation"].terms
    assert len(rules["nwdh"].terms) == 13 and "Bushnell University" in rules["nwdh"].terms
    with pytest.raises(ValueError, match="tags.yaml, rule 2: a rule is a tag"):
        parse_rules("- {tag: a, fields: [provider], terms: [x]}\n- {tag: b, fields: provider, terms: [x]}\n")
    with pytest.raises(ValueError, match="a list of tag rules"):
        parse_rules("tag: a\n")
