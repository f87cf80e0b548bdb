"""Parity with ingestion3: each hub's assertions (``parity/<hub>.yaml``, carried over from its MappingTest) checked
against our profile mapping the same fixture (``support/parity.py``). A hub below its recorded floor fails, as
does a deliberate difference that no longer differs, or a table in docs/parity.md that no longer says what the data does."""

from __future__ import annotations

import pytest
from fastavro.validation import validate

from ingest_assets.records.indexing import index_record
from ingest_assets_tests.support.parity import DOCS_PAGE, MINIMUM_FLOOR, TARGET, hubs, page_with_table

HUBS = [hub.name for hub in hubs()]

pytestmark = pytest.mark.xdist_group("parity")  # the module's parity (every hub's records mapped) is built once, on one xdist worker


@pytest.fixture(scope="module")
def parity(shared_fixtures):
    return {hub.name: hub for hub in hubs()}


def test_every_data_file_is_well_formed(parity):
    assert {name: hub.problems() for name, hub in parity.items()} == {name: [] for name in parity}
    assert len(parity) >= 10 and {"nara", "mdl", "tx", "hathi", "lc"} <= set(parity)


@pytest.mark.parametrize("name", HUBS)
def test_a_hub_stays_at_or_above_its_floor(parity, name):
    hub = parity[name]
    unmatched = [(o.field, o.it, o.expected, o.actual) for o in hub.outcomes if not o.matched and not o.deliberate]
    assert hub.share >= hub.floor >= MINIMUM_FLOOR, unmatched


@pytest.mark.parametrize("name", HUBS)
def test_a_deliberate_difference_still_differs(parity, name):
    stale = [o.it for o in parity[name].outcomes if o.deliberate and o.matched]
    assert stale == [], "these now match: drop their 'deliberate' reason"


@pytest.mark.parametrize("name", HUBS)
def test_a_hubs_records_fit_the_map_schema_and_index(parity, name, map_schema):
    assertions = parity[name].data["assertions"]
    refused = {a.get("record", a.get("fixture")) for a in assertions if a.get("refused")}  # as ingestion3 refuses them
    for key, (result, _) in parity[name].mapped.items():
        if key in refused:
            assert result.record is None
            continue
        assert result.record is not None, result.messages
        assert validate(result.record, map_schema, raise_errors=True)
        assert index_record(result.record)["id"] == result.record["id"]


def test_all_hubs_together_reach_the_target(parity):
    matched = sum(hub.matched for hub in parity.values())
    total = sum(hub.total for hub in parity.values())
    assert matched / total >= TARGET, (matched, total)


def test_the_docs_table_is_the_data(parity):
    text = DOCS_PAGE.read_text(encoding="utf-8")
    assert page_with_table(text, list(parity.values())) == text, (
        "the parity table in docs/parity.md is stale: run `uv run python -m ingest_assets_tests.support.parity --docs`"
    )
