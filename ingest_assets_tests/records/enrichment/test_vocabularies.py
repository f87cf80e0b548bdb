"""The chain's data: ingestion3's lists and tables as shipped, and the lookups over them."""

from __future__ import annotations

import re

import pytest

from ingest_assets.core.registry import ENRICHMENT_STEPS
from ingest_assets.records.enrichment.data import rows
from ingest_assets.records.enrichment.institutions import institutions
from ingest_assets.records.enrichment.enrich import STRING_STEPS, VOCABULARY_STEPS, chain_data, data_provider_uri, rights_uri
from ingest_assets.records.enrichment.filters import (
    block_formats, digital_surrogate_block_list, extract_extents, format_type_values_block_list, type_allow_list,
)
from ingest_assets.records.enrichment.vocabularies import dcmi_type, iso639_3, language_name, wikidata_uri


def test_the_chain_names_only_known_steps_and_every_step_is_used():
    data = chain_data()
    used = {step for steps in data["normalizations"].values() for step in steps}
    used |= {step for steps in data["vocabularies"].values() for step in steps}
    assert used | {"deduplicate", "tags"} == set(ENRICHMENT_STEPS) == set(STRING_STEPS) | VOCABULARY_STEPS | {
        "deduplicate", "tags"}


def test_the_lists_are_ingestion3s():
    surrogates = digital_surrogate_block_list()
    assert len(surrogates) == 209 and r"(?i)^\s*image\/tiff\s*$" in surrogates
    assert all(re.compile(pattern) for pattern in surrogates)
    assert len(format_type_values_block_list()) == 13 and len(type_allow_list()) == 74
    assert len(rows("languages/deduped-iso639x.csv", 2)) == 7911  # the BOM-prefixed header is a comment here
    table = institutions()  # institutions_v2.json: hubs and institutions with a Wikidata id, as WikiEntityEnrichment reads it
    assert (len(table.hubs), len(table.wikidata), len(table.upload)) == (48, 2734, 2499)


@pytest.mark.parametrize(
    ("value", "blocked"),
    [("image/tiff", True), (" JPEG 2000 ", True), ("Image", True), ("physical object", True), ("Photographs", False),
     ("Lithograph", False), ("Image/tiff : text/Color: 24 bits; 800 ppi, Microtek ScanMaker 9800XL.", True),
     ("tiff images", False)],
)
def test_format_block_lists(value, blocked):
    assert block_formats(value) == ("" if blocked else value)


def test_extents_from_format():
    assert extract_extents("8 x 10 in.") == "8 x 10 in."
    assert extract_extents("16mm film") == "16 film"  # ingestion3's exception list removes the term, not the value
    assert extract_extents("Lithograph") == ""


@pytest.mark.parametrize(
    ("value", "label"),
    [("Photographs", "image"), (" STILL IMAGE ", "image"), ("sound recording", "sound"), ("Film", "moving image"),
     ("statue", "physical object"), ("online exhibit", "interactive resource"), ("dataset", "dataset"),
     ("photo, print, drawing", "image"), ("Mixed material", "image"), ("info:eu-repo/semantics/article", None),
     ("StillImage", "image"), ("bucket", None)],
)
def test_types(value, label):
    assert dcmi_type(value) == label


@pytest.mark.parametrize(
    ("value", "name", "code"),
    [("eng", "English", "eng"), ("en-US", "English", "eng"), ("fre", "French", "fra"), ("FR", "French", "fra"),
     ("zxx", "No linguistic content", "zxx"), ("Hawaiian", "Hawaiian", "haw"), ("gre", "Greek, Modern (1453-)", None),
     ("Elvish", None, None), ("", None, None)],
)
def test_languages(value, name, code):
    assert language_name(value) == name
    assert (iso639_3(name) if name else None) == code


def test_wikidata():
    assert wikidata_uri("Digital Commonwealth") == "http://www.wikidata.org/entity/Q72380652"
    assert wikidata_uri("boston public library", "Digital Commonwealth") == "http://www.wikidata.org/entity/Q894583"
    assert wikidata_uri(" Boston Public Library", "Digital Commonwealth") is None  # keyed as concatenated
    assert wikidata_uri("Boston Public Library") is None  # institutions are keyed under their hub


@pytest.mark.parametrize(
    ("value", "uri"),
    [("https://rightsstatements.org/page/InC/1.0/?language=en", "http://rightsstatements.org/vocab/InC/1.0/"),
     ("http://creativecommons.org/licenses/by/4.0", "http://creativecommons.org/licenses/by/4.0"),
     ("https://creativecommons.org:443/publicdomain/zero/1.0/#x", "http://creativecommons.org/publicdomain/zero/1.0/"),
     ("not a uri", "not a uri")],
)
def test_rights_uri(value, uri):
    assert rights_uri(value) == uri


def test_data_provider_uri():
    assert data_provider_uri("Pepperdine University, Special Collections and University Archives") == (
        "http://dp.la/api/contributor/pepperdine-university-special-collections-and-university-archives")
    assert data_provider_uri(" Minneapolis  Institute of Art ") == "http://dp.la/api/contributor/minneapolis-institute-of-art"
