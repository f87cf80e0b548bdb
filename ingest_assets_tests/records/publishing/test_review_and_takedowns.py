"""Review before publish, takedowns that stick and the report mail, end to end on the record pipeline (a demo
OAI-PMH endpoint, full harvests) and the commands an operator or a hub contact types."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date, datetime, timedelta, timezone

import dagster as dg
import pyarrow.parquet as pq
import pytest
from sqlalchemy import update

from ingest_assets.cli.main import main
from ingest_assets.defs.records.publishing import PublishingResource
from ingest_assets.defs.resources import SqlResource
from ingest_assets.demo.samples import sample_records
from ingest_assets.definitions import build_definitions
from ingest_assets.records.indexing import open_search_index
from ingest_assets.records.mapping import mint_id
from ingest_assets.core.registry import load_registry
from ingest_assets.operations.failures import last_failure
from ingest_assets.records.publishing.daily import Mail, report_day
from ingest_assets.records.publishing.report import read_report
from ingest_assets.records.publishing.review import Ledger
from ingest_assets.records.publishing.tables import days as days_table
from ingest_assets.storage import LocalStorage, layout
from ingest_assets.storage.activities import RecordSource
from ingest_assets_tests.support import free_port
from ingest_assets_tests.support.publishing import materialized
from ingest_assets_tests.support.notices import MailServer

DAY1, DAY2, DAY3 = date(2026, 1, 15), date(2026, 1, 16), date(2026, 1, 17)
ALIAS = "dpla-map4"
REVIEW = ("label: Riverside Historical Society\nreview: {required: true, auto_approve_after: 48h}\n"
          "contact: [curator@example.org, ops@example.org]")


def live(record) -> bool:
    return not record.deleted and bool(record.fields["rights"])


def retitled(records, record, title):
    return [replace(r, fields={**r.fields, "title": [title]}) if r is record else r for r in records]


def dpla(record) -> str:
    return mint_id("demo", record.identifier)


def command(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def titles(index) -> set[str]:
    return {doc["sourceResource"]["title"][0] for doc in index.search(ALIAS, "*", 100)}


def review_sensor(pipeline):
    defs = build_definitions(pipeline.settings)
    resource = PublishingResource.from_settings(pipeline.settings, SqlResource(url=pipeline.settings.database_url))
    with dg.build_sensor_context(instance=pipeline.instance, resources={"publishing": resource}) as context:
        return defs.get_sensor_def("review_sensor")(context)


@pytest.mark.parametrize("search_backend", ["embedded"])  # the ledger is the backend's; the publish, the days test's
def test_a_held_day_is_published_only_after_approval_and_never_after_rejection(pipeline, capsys):
    samples = sample_records(30, DAY1)
    kept = [r for r in samples if live(r)]
    pipeline.serve("demo", samples, REVIEW)
    held = pipeline.run("demo", DAY1)
    assert held.success  # held is not failed: the day waits
    assert not materialized(held, "search_index") and not materialized(held, "resourcesync_changes")
    assert materialized(held, "provider_report")[0].metadata["review"].value == "pending"
    index = open_search_index(pipeline.settings.search)
    assert index.aliased(ALIAS) == []
    export = build_definitions(pipeline.settings).resolve_implicit_global_asset_job_def().get_subset(
        asset_selection={dg.AssetKey("enriched_parquet")})
    refused = export.execute_in_process(partition_key=f"{DAY1.isoformat()}|demo", instance=pipeline.instance,
                                        raise_on_error=False)
    assert not refused.success and "not exported: demo 2026-01-15 is pending" in str(refused.all_events)

    code, out, _ = command(capsys, "review", "list")
    assert code == 0 and out.startswith("demo 2026-01-15: pending, approved by itself at")
    code, out, err = command(capsys, "review", "approve", "demo", "--date", DAY1)
    assert code == 0, err
    assert "approved by" in out and f"demo {DAY1.isoformat()}: published" in out
    assert index.count(ALIAS) == len(kept)

    # day 2 changes a title and is rejected: it never reaches the index, even through a publish run of its own
    pipeline.serve("demo", retitled(samples, kept[0], "Rejected title"), REVIEW)
    assert pipeline.run("demo", DAY2).success
    code, out, _ = command(capsys, "review", "reject", "demo", "--date", DAY2, "--reason", "wrong collection")
    assert code == 0 and "rejected by" in out and "(wrong collection)" in out
    assert review_sensor(pipeline).run_requests == []
    again = pipeline.run("demo", DAY2, job="record_publish")
    assert again.success and not materialized(again, "search_index")
    assert "Rejected title" not in titles(index)

    # day 3 is approved by its window passing; it publishes on top of day 1 (day 2 stays out)
    pipeline.serve("demo", retitled(samples, kept[1], "Approved title"), REVIEW)
    assert pipeline.run("demo", DAY3).success
    assert "Approved title" not in titles(index)
    with pipeline.settings_engine() as engine, engine.begin() as conn:  # the 48 hours pass
        conn.execute(update(days_table).where(days_table.c.day == DAY3).values(
            deadline=datetime.now(timezone.utc) - timedelta(minutes=1)))
    [request] = review_sensor(pipeline).run_requests
    assert request.partition_key == f"{DAY3.isoformat()}|demo" and request.tags["ingest/trigger"] == "review"
    published = pipeline.run("demo", DAY3, job="record_publish", tags=request.tags)
    assert published.success and materialized(published, "search_index")
    assert "Approved title" in titles(index) and "Rejected title" not in titles(index)
    code, out, _ = command(capsys, "status", "demo", "--days", "366")
    assert "2026-01-16" in out and "rejected" in out and "auto-approval" in out

    # an approval left to the sensor: the day waits for its run
    with pipeline.settings_engine() as engine:
        Ledger(engine).register("demo", date(2026, 1, 18), "demo/indexing/20260118/x.avro",
                                load_registry(pipeline.registry_path)["demo"].settings.review, datetime.now(timezone.utc))
    code, out, _ = command(capsys, "review", "approve", "demo", "--no-publish")
    assert code == 0 and "within a minute" in out
    [request] = review_sensor(pipeline).run_requests
    assert request.partition_key == "2026-01-18|demo"

    code, out, err = command(capsys, "review", "approve", "demo")
    assert (code, out) == (1, "") and err == ("ingest-assets review: nothing to review for demo: no day is held; "
                                              "hint: see `ingest-assets review list`\n")


@pytest.mark.parametrize("search_backend", ["embedded"])
def test_a_day_is_approved_from_the_ui(pipeline):
    """The launchpad's run config of ``record_publish``: ``review_gate: {config: {decision: approve}}``."""
    pipeline.serve("demo", sample_records(20, DAY1), REVIEW)
    assert pipeline.run("demo", DAY1).success
    config = {"ops": {"review_gate": {"config": {"decision": "approve", "by": "curator (UI)"}}}}
    result = pipeline.run("demo", DAY1, job="record_publish", run_config=config)
    assert result.success and materialized(result, "search_index")[0].metadata["promoted"].value is True
    assert materialized(result, "review_gate")[0].metadata["state"].value == "approved"
    with pipeline.settings_engine() as engine:
        state = Ledger(engine).get("demo", DAY1)
    assert (state.state, state.decided_by) == ("published", "curator (UI)")


def test_a_takedown_survives_a_reharvest_of_the_same_records(pipeline, capsys):
    samples = sample_records(30, DAY1)
    kept = [r for r in samples if live(r)]
    pipeline.serve("demo", samples)
    assert pipeline.run("demo", DAY1).success
    index = open_search_index(pipeline.settings.search)
    storage = LocalStorage(pipeline.settings.storage_url)
    total = index.count(ALIAS)
    first, second = kept[0], kept[1]
    ids = [dpla(first), dpla(second)]
    gone = [storage.root / "_resourcesync" / "demo" / "resources" / "items" / f"{i}.jsonld" for i in ids]
    assert all(path.exists() for path in gone)

    code, out, err = command(capsys, "takedown", dpla(first), second.identifier, "--provider", "demo",
                             "--reason", "rights holder request")
    assert code == 2 and "2 record(s) to take down" in out and "hint: add --yes" in err
    assert index.count(ALIAS) == total  # nothing changed without --yes
    code, out, err = command(capsys, "takedown", dpla(first), second.identifier, "--provider", "demo",
                             "--reason", "rights holder request", "--yes")
    assert code == 0, err
    assert f"{ALIAS}: {total} -> {total - 2} documents; change feed: deleted 2" in out
    assert index.documents(ALIAS, ids) == {} and not any(path.exists() for path in gone)
    code, out, _ = command(capsys, "takedown", "--list")
    assert len(out.splitlines()) == 2 and "rights holder request" in out

    # the same records harvested again: they stay out of the index and the change feed
    assert pipeline.run("demo", DAY2).success
    assert index.documents(ALIAS, ids) == {} and index.count(ALIAS) == total - 2
    assert not any(path.exists() for path in gone)
    report = read_report(RecordSource(storage, layout.latest_output(storage, "demo", "indexing", DAY2)))
    assert report["diff"]["kept_out"] == 2

    export = build_definitions(pipeline.settings).resolve_implicit_global_asset_job_def().get_subset(
        asset_selection={dg.AssetKey("enriched_parquet")})
    assert export.execute_in_process(partition_key=f"{DAY2.isoformat()}|demo", instance=pipeline.instance).success
    [parquet] = storage.root.glob("demo/export/20260116/*.parquet")
    exported = set(pq.read_table(parquet, columns=["id"]).column("id").to_pylist())
    assert len(exported) == len(kept) - 2 and not exported & set(ids)  # the export leaves them out too

    code, out, err = command(capsys, "takedown", "--undo", dpla(first))
    assert code == 0, err
    assert f"{ALIAS}: {total - 2} -> {total - 1} documents; change feed: created 1" in out
    assert list(index.documents(ALIAS, ids)) == [dpla(first)] and gone[0].exists()
    code, out, _ = command(capsys, "takedown", "--list", "--all")
    assert len(out.splitlines()) == 2 and sum("undone" in line for line in out.splitlines()) == 1

    code, out, err = command(capsys, "takedown", "--provider", "demo", "--query", "Millbrook", "--reason", "test")
    assert code == 2 and "record(s) to take down" in out and "add --yes" in err
    code, _, err = command(capsys, "takedown", "f" * 32, "--reason", "x", "--yes")
    assert code == 1 and err.startswith("ingest-assets takedown: not in the live index") and len(err.splitlines()) == 1


@pytest.mark.parametrize("search_backend", ["embedded"])
def test_the_report_is_mailed_with_the_review_commands(pipeline, capsys):
    sink = MailServer().start()
    try:
        pipeline.settings = replace(pipeline.settings, smtp_url=sink.url, smtp_given=True,
                                    notify_from="ingest@hub.example.org")
        samples = sample_records(30, DAY1)
        pipeline.serve("demo", samples, REVIEW)
        result = pipeline.run("demo", DAY1)
        assert result.success
        assert materialized(result, "provider_report")[0].metadata["mailed"].value == "curator@example.org, ops@example.org"
        [message] = sink.messages
    finally:
        sink.stop()
    assert sink.envelopes == [("ingest@hub.example.org", ["curator@example.org", "ops@example.org"])]
    assert message["Subject"] == "Review needed: ingest report for Riverside Historical Society (demo), 2026-01-15"
    text = message.get_body(("plain",)).get_content()
    assert "ingest-assets review approve demo --date 2026-01-15" in text and "**Held for review**" in text
    html = message.get_body(("html",)).get_content()
    assert "Held for review." in html and "ingest-assets review reject demo --date 2026-01-15" in html
    [attachment] = list(message.iter_attachments())
    assert attachment.get_filename() == "demo-2026-01-15-report.json"
    report = json.loads(attachment.get_content())
    assert report["diff"]["added"] == sum(live(r) for r in samples) and report["review"]["state"] == "pending"

    # a server that cannot be reached: the day is not held back, the failure is kept for status
    storage = LocalStorage(pipeline.settings.storage_url)
    indexing = RecordSource(storage, layout.latest_output(storage, "demo", "indexing", DAY1))
    entry = load_registry(pipeline.registry_path)["demo"]
    dead = Mail(f"smtp://127.0.0.1:{free_port()}", None, "ingest@hub.example.org", "http://ui.example.org")
    with pipeline.settings_engine() as engine:
        outcome = report_day(entry, DAY1, indexing, open_search_index(pipeline.settings.search), ALIAS, engine,
                             datetime.now(timezone.utc), dead, ("record_pipeline", "run-x"))
    failure = last_failure(storage, "demo")
    assert outcome.mailed == "not sent" and "report mail not sent through 127.0.0.1" in outcome.mail_error
    assert (failure.stage, failure.days, failure.run_url) == ("report mail", (DAY1,), "http://ui.example.org/runs/run-x")

    code, out, _ = command(capsys, "report", "demo", "--date", DAY1)
    assert code == 0 and out.startswith("## Riverside Historical Society (demo), 2026-01-15") and "**Held for review**" in out
    code, out, _ = command(capsys, "report", "demo", "--json")
    assert json.loads(out)["diff"] == report["diff"] and json.loads(out)["counts"] == report["counts"]
