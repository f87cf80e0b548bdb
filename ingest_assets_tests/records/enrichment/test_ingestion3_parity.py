"""Parity with ingestion3's enrichment tests: every assertion of its ten enrichment test classes, carried over as
data (``ingestion3_enrichment_tests.yaml``), checked against our functions. At least 95% must match; a case
marked ``differs`` is a deliberate difference (the case says why) and must really differ;
the figures are in docs/parity.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from ingest_assets.records.enrichment import Chain, enrich
from ingest_assets.records.enrichment import normalize
from ingest_assets.records.enrichment.dates import begin_end, parse_date, preprocess_date
from ingest_assets.records.enrichment.filters import block_list_regex
from ingest_assets.records.enrichment.vocabularies import dcmi_type, language_name, wikidata_uri
from ingest_assets.core.registry import ENRICHMENT_STEPS

CASES = yaml.safe_load((Path(__file__).parent / "ingestion3_enrichment_tests.yaml").read_text(encoding="utf-8"))
# StringNormalizationUtilsTest's own helper lists (raw patterns, as the test defines them)
TEST_BLOCK_LIST = ("jpeg", "jpeg/2000", "tiff", "bitmap image", "application+pdf")
TEST_ALLOW_LIST = ("moving image", "film", "audio", "image")
ONLY_DEDUPLICATE = Chain(skip=frozenset(ENRICHMENT_STEPS) - {"deduplicate"})
# StringNormalizations alone: no deduplication, no vocabularies
ONLY_STRINGS = Chain(skip=frozenset({"deduplicate", "wikidata", "data_provider_uri", "dates", "language", "type"}))


def _record(source: dict) -> dict:
    """A mapped record holding ``source`` (MappedRecordsFixture's role: the rest does not matter)."""
    fields = {"creator": lambda v: [{"name": n["name"], "providedLabel": n["name"]} for n in v]}
    sr = {name: fields.get(name, lambda v: v)(value) for name, value in source.items()}
    return {"id": "x", "provider": "p", "dataProvider": "http://example.com", "isShownAt": "http:/example.com/foo",
            "preview": "http:/example.com/foo", "sourceResource": {"rights": ["r"], **sr}}


def _only(result: dict, expected: dict) -> dict:
    sr = result["sourceResource"]
    return {name: ([{"name": v["name"]} for v in sr[name]] if name == "creator" else sr[name]) for name in expected}


def _parsed(label: str) -> dict:
    found = parse_date(label)
    return {"prefLabel": found.pref_label, "begin": found.begin, "end": found.end} if found else \
        {"prefLabel": None, "begin": None, "end": None}


CALLS = {
    "cleanup_geocoordinates": normalize.cleanup_geocoordinates,
    "convert_to_sentence_case": normalize.convert_to_sentence_case,
    "split_at_delimiter": normalize.split_at_delimiter,
    "strip_html": normalize.strip_html,
    "cleanup_leading_punctuation": normalize.cleanup_leading_punctuation,
    "cleanup_ending_punctuation": normalize.cleanup_ending_punctuation,
    "limit_characters_length": lambda value, length: len(normalize.limit_characters(value, length)),
    "reduce_whitespace": normalize.reduce_whitespace,
    "capitalize_first_char": normalize.capitalize_first_char,
    "apply_block_filter_test_list": lambda value: normalize.apply_block_filter(value, TEST_BLOCK_LIST),
    "apply_allow_filter_test_list": lambda value: normalize.apply_allow_filter(value, TEST_ALLOW_LIST),
    "apply_allow_filter": lambda value, *patterns: normalize.apply_allow_filter(value, patterns),
    "strip_ending_period": normalize.strip_ending_period,
    "strip_dbl_quotes": normalize.strip_dbl_quotes,
    "block_list_regex": lambda value, term: re.fullmatch(block_list_regex(term), value) is not None,
    "language": lambda value: language_name(value) or value,  # enrichLanguage: the concept, else as provided
    "type": dcmi_type,
    "wikidata": lambda name, provider="": [uri] if (uri := wikidata_uri(name, provider)) else [],
    "date_builder": lambda label: {"providedLabel": [label], **dict(zip(("begin", "end"), begin_end(label)))},
    "deduplicate": lambda source: _only(ONLY_DEDUPLICATE.enrich(_record(source))[0], source),
    "string_normalizations": lambda source: _only(ONLY_STRINGS.enrich(_record(source))[0], source),
    "preprocess_date": preprocess_date,
    "parse_date": _parsed,
}


def _matches(case: dict) -> bool:
    result = CALLS[case["call"]](case["input"], *case.get("args", ()))
    match = case.get("match", "equals")
    if match == "regex":
        return re.fullmatch(case["expected"], result) is not None
    if match == "not_regex":
        return re.fullmatch(case["expected"], result) is None
    return result == case["expected"]


def _all_cases():
    return [(name, case) for name, cases in CASES.items() for case in cases]


@pytest.mark.parametrize(("test_class", "case"), _all_cases(), ids=lambda value: value if isinstance(value, str) else "")
def test_ingestion3_assertion(test_class, case):
    if case.get("differs"):
        assert not _matches(case), f"{test_class} {case['test']}: listed as differing, but matches"
    else:
        assert _matches(case), f"{test_class} {case['test']}: {case['input']!r}"


def test_parity_share():
    cases = _all_cases()
    matched = sum(_matches(case) for _, case in cases)
    print(f"\ningestion3 enrichment test parity: {matched}/{len(cases)} assertions matched")
    assert len(cases) >= 140 and matched / len(cases) >= 0.95


def test_whole_record_through_the_chain():
    """The default chain on one record exercises every vocabulary of the enrichment driver together."""
    record = _record({"title": ["  Kittens.  "], "creator": [{"name": "Soule, John P."}],
                      "language": ["eng", "Elvish"], "type": ["Photographs", "bucket"],
                      "date": [{"providedLabel": ["1917-1934"], "begin": "1900-01-01", "end": None}]})
    record.update(provider="Minnesota Digital Library", dataProvider="Minneapolis Institute of Art")
    enriched, changes = enrich(record)
    sr = enriched["sourceResource"]
    assert sr["title"] == ["Kittens."] and sr["creator"][0]["name"] == "Soule, John P"
    assert sr["creator"][0]["providedLabel"] == "Soule, John P."
    assert sr["language"] == ["English", "Elvish"] and sr["type"] == ["image"]
    assert sr["date"] == [{"providedLabel": ["1917-1934"], "begin": "1917", "end": "1934"}]
    assert enriched["providerExactMatch"] == ["http://www.wikidata.org/entity/Q83878485"]
    assert enriched["dataProviderExactMatch"] == ["http://www.wikidata.org/entity/Q1700481"]
    assert enriched["dataProviderUri"] == "http://dp.la/api/contributor/minneapolis-institute-of-art"
    assert {("strip_ending_period", "creator"), ("strip_html", "title"), ("capitalize_first_char", "language"),
            ("language", "language"),
            ("type", "type"), ("dates", "date"), ("wikidata", "provider"), ("wikidata", "dataProvider"),
            ("data_provider_uri", "dataProvider")} <= changes
    assert ("strip_ending_period", "title") not in changes
