"""Publishing end to end, day by day, on the embedded index and Elasticsearch: a demo OAI-PMH endpoint harvested
in full each day through the record pipeline on a Dagster instance, then the commands an operator types.

Day 1 publishes a provider's first index; day 2 changes three titles, drops one record (an absence, deleted)
and adds one, and its report says exactly that; day 3 drops three more records (a harvest within its own gate,
an index 8% short): the gates refuse it and the day-2 index keeps serving; a rollback brings day 1 back. A
second provider's index is never touched by the first's publishes."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date

from ingest_assets.cli.main import main
from ingest_assets.demo.samples import sample_records
from ingest_assets.records.indexing import open_search_index
from ingest_assets.records.mapping import mint_id
from ingest_assets.records.publishing.report import read_report
from ingest_assets.storage import LocalStorage, layout
from ingest_assets.storage.activities import RecordSource
from ingest_assets_tests.support.publishing import checks, materialized

DAY1, DAY2, DAY3 = date(2026, 1, 15), date(2026, 1, 16), date(2026, 1, 17)
ALIAS = "dpla-map4"


def live(record) -> bool:
    """Whether a sample record reaches the index (deleted ones and those without rights do not)."""
    return not record.deleted and bool(record.fields["rights"])


def retitled(record, title):
    return replace(record, fields={**record.fields, "title": [title]})


def dpla(record) -> str:
    return mint_id("demo", record.identifier)


def command(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_gated_publishing_day_by_day(pipeline, capsys):
    samples = sample_records(41, DAY1)
    first, new = samples[:40], samples[40]
    kept = [r for r in first if live(r)]
    pipeline.serve("other", sample_records(20, DAY1))
    pipeline.serve("demo", first)
    assert pipeline.run("other", DAY1).success
    assert pipeline.run("demo", DAY1).success
    index = open_search_index(pipeline.settings.search)
    storage = LocalStorage(pipeline.settings.storage_url)
    other = [n for n in index.aliased(ALIAS) if "-other-" in n]
    other_count = index.count(other[0])
    assert index.count(ALIAS) == len(kept) + other_count
    code, out, _ = command(capsys, "status", "demo")  # a provider without review: published, not "by" anyone
    assert code == 0 and f"review         demo {DAY1}: published (no review required), live in dpla-map4-demo-" in out
    code, out, _ = command(capsys, "report", "demo", "--date", DAY1.isoformat())
    assert code == 0 and "\nReview: approved (no review required)\n\n### Counts\n" in out, out[:300]

    # day 2: three titles changed, one record gone from the full harvest, one new
    changed, gone = kept[:3], kept[3]
    day1_titles = {i: doc["sourceResource"]["title"][0] for i, doc in index.documents(ALIAS, [dpla(r) for r in changed]).items()}
    second = [retitled(r, f"Flooded mill {n}") if r in changed else r for n, r in enumerate(first) if r is not gone]
    pipeline.serve("demo", [*second, new])
    result = pipeline.run("demo", DAY2)
    assert result.success
    assert all(check.passed for check in checks(result).values())
    indexing = layout.latest_output(storage, "demo", "indexing", DAY2)
    manifest = RecordSource(storage, indexing).manifest()
    assert manifest.extra["Summary absent"] == "1"  # counted in _MANIFEST
    assert "absences 1" in checks(result)["indexing_reconciles"].description
    assert index.documents(ALIAS, [dpla(gone)]) == {}  # the absence is deleted from the index
    code, out, _ = command(capsys, "lineage", "demo", dpla(gone), "--date", DAY2.isoformat(), "--json")
    steps = json.loads(out)["steps"]
    assert [step["what"] for step in steps[:3]] == ["index document", "absent from a full harvest", "original record"]
    assert steps[0]["facts"]["deleted"] and "/20260115/" in steps[2]["where"]  # last held by day 1's harvest
    assert index.count(ALIAS) == len(kept) + other_count
    feed = materialized(result, "resourcesync_changes")[0].metadata
    # published as deleted; every re-harvested document is new bytes (its ingestDate), so an update to the feed
    assert (feed["created"].value, feed["updated"].value, feed["deleted"].value) == (1, len(kept) - 1, 1)

    report = read_report(RecordSource(storage, indexing))
    diff = report["diff"]
    assert (diff["added"], diff["changed"], diff["removed"], diff["unchanged"]) == (1, 3, 1, len(kept) - 4)
    assert diff["examples"] == {"added": [dpla(new)], "removed": [dpla(gone)]}
    title = diff["fields"]["sourceResource.title"]
    assert title["changed"] == 3 and list(diff["fields"]) == ["sourceResource.title"]
    assert {(e["id"], e["before"][0], e["after"][0]) for e in title["examples"]} == {
        (dpla(r), day1_titles[dpla(r)], f"Flooded mill {first.index(r)}") for r in changed}
    assert report["counts"]["indexing"]["absent"] == 1 and report["counts"]["harvest"]["records"] == 40
    # the two records without rights, grouped under their message with the first as example; coverage per field
    assert report["problems"] == [{"stage": "mapping", "level": "error", "count": 2, "examples": [first[19].identifier],
                                   "message": "missing_required rights: required field has no value"}]
    coverage = report["coverage"]
    assert coverage["records"] == len(kept) == coverage["fields"]["title"] and coverage["fields"]["object"] == 0
    markdown = materialized(result, "provider_report")[0].metadata["report"].value
    assert "**1** added, **3** changed, **1** removed" in markdown and "sourceResource.title | 3" in markdown
    html = (storage.root / indexing.folder / "_LOGS" / "report.html").read_text()
    assert "Flooded mill" in html and "<strong>3</strong> changed" in html
    assert [n for n in index.aliased(ALIAS) if "-other-" in n] == other  # the other provider was not touched
    assert index.count(other[0]) == other_count

    # day 3: three more records gone: within the harvest gate (-7.5%), an index 8% short: refused
    before = index.aliased(ALIAS)
    third = [r for r in [*second, new] if r not in kept[4:7]]
    pipeline.serve("demo", third)
    refused = pipeline.run("demo", DAY3)
    assert not refused.success
    gates = checks(refused)
    assert gates["harvest_count_drop"].passed and not gates["index_count"].passed
    evidence = gates["index_count"].metadata["evidence"].value["demo"]
    assert (evidence["before"], evidence["after"]) == (len(kept), len(kept) - 3)
    assert "index_count_tolerance" in gates["index_count"].metadata["remediation"].value
    assert "more than the 2% allowed" in gates["index_count"].description  # the run page says what and what to do
    assert "set `quality: {index_count_tolerance: ...}` for demo" in gates["index_count"].description
    assert not materialized(refused, "resourcesync_changes")  # nothing refused reaches the change feed
    assert index.aliased(ALIAS) == before and index.count(ALIAS) == len(kept) + other_count  # day 2 serves

    code, out, _ = command(capsys, "status", "demo")
    assert code == 0 and "last failure" in out and "in search_index: index_count:" in out and "/runs/" in out
    assert f"live index     {[n for n in before if '-demo-' in n][0]}: {len(kept)} documents" in out
    code, out, _ = command(capsys, "status", "--json", "--days", "366")
    statuses = {s["provider"]: s for s in json.loads(out)["providers"]}
    assert set(statuses) == {"demo", "other"} and statuses["other"]["last_failure"] is None
    assert [row["publication"] for row in statuses["demo"]["history"][:3]] == ["approved", "published", "published"]

    code, out, _ = command(capsys, "index", "status")
    demo_lines = out.split("  demo\n")[1].split("  other\n")[0].splitlines()
    assert [line.split()[0] for line in demo_lines] == ["refused", "live", "kept"]

    code, out, _ = command(capsys, "index", "rollback", "--provider", "demo", "--reason", "day 2 looked wrong")
    assert code == 0 and f"{len(kept) + other_count} -> {len(kept) + other_count} documents" in out
    day1 = [n for n in index.aliased(ALIAS) if "-demo-" in n][0]
    assert day1.endswith(layout.timestamp(layout.latest_output(storage, "demo", "indexing", DAY1).started)[:8] + day1[-6:])
    assert index.documents(ALIAS, [dpla(gone)])  # day 1's index holds the record day 2 deleted
    assert {i: d["sourceResource"]["title"][0] for i, d in index.documents(ALIAS, list(day1_titles)).items()} == day1_titles
    code, out, _ = command(capsys, "index", "status")
    assert "rollback" in out and "day 2 looked wrong" in out

    # a hub withdrawn: its index leaves the alias in one action, the other provider's stays
    code, out, _ = command(capsys, "index", "remove", "other", "--reason", "hub withdrew")
    assert code == 0 and f"{len(kept) + other_count} -> {len(kept)} documents" in out
    assert index.aliased(ALIAS) == [day1]
