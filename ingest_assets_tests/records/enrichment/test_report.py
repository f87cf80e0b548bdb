"""EnrichmentReport: per field improved vs unchanged, and sample rows in the CSV."""

from __future__ import annotations

import csv
import io
import json

from ingest_assets.records.enrichment import EnrichmentReport, enrich


def test_report_over_zenodo_records(zenodo):
    report = EnrichmentReport(samples_per_field=2)
    for record in zenodo:
        enriched, changes = enrich(record)
        report.add(record["id"], changes, (record, enriched))

    summary = report.summary()
    assert summary["records"] == 7
    assert summary["fields"]["date"] == {"improved": 7, "unchanged": 0}
    assert summary["fields"]["type"] == {"improved": 7, "unchanged": 0}
    title = summary["fields"]["title"]
    assert title["improved"] + title["unchanged"] == 7 and 1 <= title["improved"] < 7
    assert report.metadata() == {"records": 7, "improved": {k: v["improved"] for k, v in summary["fields"].items()}}

    rows = list(csv.DictReader(io.StringIO(report.csv().decode("utf-8"))))
    assert rows[0]["field"] == "(records)" and rows[0]["unchanged"] == "7"
    counts = {r["field"]: (int(r["improved"]), int(r["unchanged"])) for r in rows[1:] if r["improved"]}
    assert counts == {k: (v["improved"], v["unchanged"]) for k, v in summary["fields"].items()}
    type_samples = [r for r in rows if r["field"] == "type" and r["sample_record"]]
    assert len(type_samples) == 2  # capped
    assert type_samples[0]["sample_record"] == zenodo[0]["id"]
    assert json.loads(type_samples[0]["before"]) == ["info:eu-repo/semantics/article"]
    assert json.loads(type_samples[0]["after"]) == ["text"]


def test_report_without_samples_counts_only():
    report = EnrichmentReport()
    report.add("a", {"date"})
    report.add("b", set())
    assert report.summary() == {"records": 2, "fields": {"date": {"improved": 1, "unchanged": 1}}}
    assert report.csv().decode().splitlines()[1:] == ["(records),,2,,,", "date,1,1,,,"]
