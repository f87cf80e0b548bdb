"""EnrichmentReport: records improved, changes per field and per step and field, sample rows in the CSV."""

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
    assert summary["records"] == 7 and summary["improved"] == 7
    assert summary["fields"]["type"] == {"changed": 7, "unchanged": 0}  # Zenodo's eu-repo types are not DPLA's
    assert summary["steps"]["type type"] == 7 and summary["steps"]["data_provider_uri dataProvider"] == 7
    description = summary["fields"]["description"]
    assert description["changed"] == summary["steps"]["strip_html description"]  # HTML in every changed one
    assert report.metadata() == {"records": 7, "improved": 7,
                                 "fields": {k: v["changed"] for k, v in summary["fields"].items()}}

    rows = list(csv.DictReader(io.StringIO(report.csv().decode("utf-8"))))
    assert rows[0] == {"step": "(any)", "field": "(records)", "changed": "7", "unchanged": "0", "sample_record": "",
                       "before": "", "after": ""}
    fields = {r["field"]: (int(r["changed"]), int(r["unchanged"])) for r in rows[1:] if r["step"] == "(any)"}
    assert fields == {k: (v["changed"], v["unchanged"]) for k, v in summary["fields"].items()}
    steps = {f"{r['step']} {r['field']}": int(r["changed"]) for r in rows if r["step"] not in ("(any)", "(sample)")}
    assert steps == summary["steps"]
    type_samples = [r for r in rows if r["step"] == "(sample)" and r["field"] == "type"]
    assert len(type_samples) == 2  # capped
    assert type_samples[0]["sample_record"] == zenodo[0]["id"]
    assert json.loads(type_samples[0]["before"]) == ["info:eu-repo/semantics/article"]
    assert json.loads(type_samples[0]["after"]) is None
    provider = [r for r in rows if r["step"] == "(sample)" and r["field"] == "dataProvider"][0]
    assert json.loads(provider["after"]) == {"dataProvider": "Zenodo", "dataProviderExactMatch": None,
                                             "dataProviderUri": "http://dp.la/api/contributor/zenodo"}


def test_report_merges_and_counts_only():
    report, other = EnrichmentReport(), EnrichmentReport()
    report.add("a", {("dates", "date"), ("strip_html", "date")})
    report.add("b", set())
    other.add("c", {("dates", "date")})
    report.merge(other)
    assert report.summary() == {"records": 3, "improved": 2, "fields": {"date": {"changed": 2, "unchanged": 1}},
                                "steps": {"strip_html date": 1, "dates date": 2}}
    assert report.csv().decode().splitlines()[1:] == [
        "(any),(records),2,1,,,", "(any),date,2,1,,,", "strip_html,date,1,2,,,", "dates,date,2,1,,,"]
