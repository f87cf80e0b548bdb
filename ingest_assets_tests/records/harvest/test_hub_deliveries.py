"""Every shipped hub end to end: its shipped block (``records/mapping/hubs.yaml``), only its endpoint or path pointed
at a delivery in the hub's real shape (:mod:`ingest_assets_tests.support.hub_deliveries`), harvested, mapped and
enriched by the domain functions the assets call. The ids come in order, the deletions are deletions, no record is
lost, and every record maps with no required field missing, each its own DPLA record under the hub's display name.
One test per shipped hub: a hub added to the registry without a delivery shape fails here."""

from __future__ import annotations

import pytest
import yaml

from ingest_assets.core.registry import ProviderEntry
from ingest_assets.core.settings import Settings
from ingest_assets.records.engines.steps import RecordActivity
from ingest_assets.records.harvest import StorageCheckpoint, harvest_records
from ingest_assets.records.mapping.hubs import shipped_text
from ingest_assets.records.mapping.mapper import MISSING_REQUIRED
from ingest_assets_tests.support.hub_deliveries import DELIVERIES, DOCS_PAGE, page_with_table

SHIPPED = yaml.safe_load(shipped_text())


def activity(name: str, entry: ProviderEntry, records: list[dict]) -> tuple[list[dict], object]:
    """``name`` (mapping, enrichment) of ``records`` as the engines run it: its one step, then its report."""
    steps = RecordActivity(name, entry)
    report = steps.new_report()
    [step] = steps.steps(report)
    return [out for out in map(step, records) if out is not None], report


@pytest.mark.parametrize("hub", sorted(SHIPPED))
def test_each_shipped_hub_is_harvested_mapped_and_enriched(hub, hub_place, tmp_storage, started, http):
    assert hub in DELIVERIES, f"{hub!r} has no delivery in support/hub_deliveries.py: add the shape the hub delivers"
    delivery = DELIVERIES[hub]()
    made = delivery.make(hub_place)
    settings = {**SHIPPED[hub], "harvest": {**SHIPPED[hub]["harvest"], **made.keys, "allow_private": True}}
    entry = ProviderEntry(hub, settings, "hubs.yaml")
    run = harvest_records(entry, started=started, window=None, http=http, checkpoint=StorageCheckpoint(tmp_storage, hub),
                          settings=Settings.from_env(delivery.env), s3_client=hub_place.s3_client)
    records = list(run)
    assert [record["id"] for record in records] == made.ids and len(made.ids) >= 3
    assert [record["id"] for record in records if record["deleted"]] == made.deleted
    assert run.stats.failed == 0 and run.stats.errors == []
    assert made.pages is None or run.stats.pages == made.pages > 1  # OAI-PMH: every resumption token followed
    assert (run.harvester.reader.dropped if SHIPPED[hub]["harvest"]["type"] == "file" else 0) == made.dropped

    mapped, mapping = activity("mapping", entry, records)
    assert (mapping.attempted, mapping.mapped, mapping.deleted, mapping.failed) == (
        len(records), len(records) - len(made.deleted), len(made.deleted), 0)
    assert not [key for key in mapping.summary()["messages"] if key.startswith(MISSING_REQUIRED)]
    assert len({record["id"] for record in mapped}) == len(mapped)  # each its own DPLA record

    enriched, _ = activity("enrichment", entry, mapped)
    assert [record["id"] for record in enriched] == [record["id"] for record in mapped]
    assert {record["provider"] for record in enriched} == {entry.label}


def test_the_docs_table_is_the_shipped_registry_and_its_deliveries(shared_fixtures, tmp_path):
    page = DOCS_PAGE.read_text(encoding="utf-8")
    assert page == page_with_table(page, tmp_path), (
        "docs/hubs.md's table is stale: run `uv run python -m ingest_assets_tests.support.hub_deliveries --docs`")
