"""The ``jsonl_export`` asset on Dagster: refused for a day whose run failed a blocking check (even when its enriched
output was materialized by a later run), written under ``INGEST_JSONL_ROOT`` once the day is published."""

from __future__ import annotations

from datetime import date

import dagster as dg

from ingest_assets.definitions import build_definitions
from ingest_assets.demo.samples import sample_records
from ingest_assets.storage import LocalStorage
from ingest_assets_tests.support.jsonl import read_export, sparkindexer_folder
from ingest_assets_tests.support.publishing import checks, materialized

DAY = date(2026, 1, 15)


def materialize(hub, *assets: str):
    """A run of ``assets`` alone for the demo provider's day (as an operator launches one from the UI)."""
    job = build_definitions(hub.settings).resolve_implicit_global_asset_job_def().get_subset(
        asset_selection={dg.AssetKey(asset) for asset in assets})
    return job.execute_in_process(partition_key=f"{DAY.isoformat()}|demo", instance=hub.instance, raise_on_error=False)


def test_a_day_whose_checks_failed_is_refused_and_a_published_day_is_exported(jsonl_hub):
    samples = sample_records(20, DAY)  # one deletion, one record without rights (mapping rejects it: 1 of 19 fail)
    jsonl_hub.serve("demo", samples, "s3_prefix: riverside\nquality: {max_failure_rate: 0.01}")
    failed = jsonl_hub.run("demo", DAY)
    assert not checks(failed)["mapping_failure_rate"].passed and not materialized(failed, "enriched_records")
    refused = materialize(jsonl_hub, "enriched_records", "jsonl_export")  # that check does not stop a later run
    assert materialized(refused, "enriched_records") and not materialized(refused, "jsonl_export")
    assert not refused.success and ("not exported: demo 2026-01-15 was never reported for publishing: its run stopped "
                                    "at a failed check, or did not index the day") in str(refused.all_events)
    root = LocalStorage(jsonl_hub.settings.jsonl_export_root)
    assert list(root.list_keys()) == []

    jsonl_hub.serve("demo", samples, "s3_prefix: riverside")  # the hub's threshold raised: the day publishes
    assert jsonl_hub.run("demo", DAY).success
    exported = materialize(jsonl_hub, "jsonl_export")
    assert exported.success
    [event] = materialized(exported, "jsonl_export")
    folder = sparkindexer_folder(root, "riverside")
    assert folder.startswith("riverside/jsonl/20260115_") and folder.endswith("-demo-MAP3_1.IndexRecord.jsonl")
    assert event.metadata["dagster/uri"].value == root.uri(folder) and event.metadata["newest"].value is True
    lines = read_export(root, folder)
    kept = sorted(s.identifier for s in samples if not s.deleted and s.fields["rights"])
    assert sorted(line["_id"].removeprefix("demo--") for line in lines) == kept
    assert all(line["_id"].removeprefix("demo--") in line["_source"]["originalRecord"]["stringValue"] for line in lines)
    assert event.metadata["dagster/row_count"].value == len(kept) == 18
