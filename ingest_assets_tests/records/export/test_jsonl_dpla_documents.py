"""Every ingestion3-era DPLA document of ``../shared/fixtures/dpla-published/`` (read in place): its original record
through a harvest output, mapping, enrichment, indexing and the JSON-L export, the line read back from its gzipped
part and compared with DPLA's document on the cross-project API field contract (``support/jsonl_contract.py``;
``python -m ingest_assets_tests.support.jsonl_contract`` prints the figures per hub and each difference)."""

from __future__ import annotations

import pytest

from ingest_assets_tests.support.jsonl_contract import CONTRACT, FRAME, compare

# the export's shape, whatever a hub's mapping gives: every line has these, as every DPLA document does
ALWAYS = ("@context", "@id", "@type", "aggregatedCHO", "ingestType", "ingestDate", "originalRecord.stringValue", "id",
          "provider.name", "dataProvider.name", "isShownAt", "sourceResource.title")
SAME_VALUE = ("@context", "@id", "@type", "aggregatedCHO", "ingestType", "id", "provider.name")


@pytest.fixture(scope="module")
def comparison(shared_fixtures):
    return compare(shared_fixtures / "dpla-published")


def test_every_line_has_dplas_keys_and_types_on_the_api_field_contract(comparison):
    print("\n" + comparison.table())
    assert sum(comparison.documents.values()) == 11 and set(comparison.skipped) == {"esdn-bf12d2a3.json"}
    wrong_types = [d for d in comparison.differences if d.what == "type"]
    assert wrong_types == []  # every field both hold has DPLA's JSON type
    missing = [d for d in comparison.differences if d.what == "key" and d.field in ALWAYS]
    assert missing == []
    assert comparison.totals()["types"] == comparison.totals()["typed"] > 200
    assert {path for _, path in comparison.counts} <= set(CONTRACT) | set(FRAME)
    for name, line in comparison.lines.items():
        assert line["_type"] == "item" and line["_id"] == line["_source"]["_id"], name


def test_the_frame_and_the_ids_are_dplas_own(comparison):
    wrong = [(d.document, d.field, d.ours, d.dpla) for d in comparison.differences if d.field in SAME_VALUE]
    assert wrong == []
    for hub in comparison.documents:
        for path in SAME_VALUE:
            counts = comparison.counts[hub, path]
            assert counts["values"] == counts["compared"] == comparison.documents[hub], (hub, path)
