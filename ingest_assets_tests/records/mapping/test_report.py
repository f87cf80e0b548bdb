"""MappingReport: counts, per message kind and field, CSV for _LOGS/ and Dagster metadata."""

from __future__ import annotations

import csv
import io

from ingest_assets.records.mapping import MappingReport, mapper_for, report
from ingest_assets.records.mapping.report import Coverage
from ingest_assets.core.registry import ProviderEntry


def run(mapper, records) -> MappingReport:
    report = MappingReport()
    for original in records:
        report.add(mapper.map(original))
    return report


def test_report_of_a_zenodo_page_with_one_deletion_and_a_bad_object(originals):
    records = originals("oai-pmh/zenodo-listrecords-oai_dc.xml", "zenodo")
    records += originals("oai-pmh/erasmus-getrecord-deleted.xml", "zenodo")
    # no dataProvider for the first two records (13841, 14165) only: the override uses a per-record identifier pattern
    mapper = mapper_for(ProviderEntry("zenodo", {"mapping": "oai_dc", "mapping_overrides": {
        "dataProvider": {"xpath": "dc:identifier", "pattern": r"zenodo\.org/record/(1[7-9]\d{3}|[2-9]\d{4})$",
                         "template": "Zenodo", "first": True},
        "object": {"value": "thumbnail.png"},
    }}))
    report = run(mapper, records)

    summary = report.summary()
    assert (summary["attempted"], summary["mapped"], summary["failed"], summary["deleted"]) == (8, 5, 2, 1)
    assert summary["failure_rate"] == round(2 / 7, 6)
    assert summary["messages"] == {
        "deleted": 1, "invalid_value:object": 7, "missing_required:dataProvider": 2,
    }
    assert summary["fields"] == {"dataProvider": 2, "object": 7}

    rows = list(csv.DictReader(io.StringIO(report.csv().decode("utf-8"))))
    totals = {r["field"]: int(r["count"]) for r in rows if r["kind"] == "total"}
    assert totals == {"attempted": 8, "mapped": 5, "failed": 2, "deleted": 1}
    by_key = {(r["kind"], r["field"]): r for r in rows if r["kind"] != "total"}
    missing = by_key[("missing_required", "dataProvider")]
    assert missing["count"] == "2"
    assert missing["example_record"] == "oai:zenodo.org:13841"
    assert missing["reason"] == "required field has no value"
    bad_object = by_key[("invalid_value", "object")]
    assert (bad_object["count"], bad_object["example_value"]) == ("7", "thumbnail.png")
    assert by_key[("deleted", "")]["example_record"] == "hdl:1765/1160"

    metadata = report.metadata()
    assert metadata == {
        "attempted": 8, "mapped": 5, "failed": 2, "deleted": 1, "failure_rate": round(2 / 7, 6),
        "messages": summary["messages"],
    }


def test_empty_report():
    report = MappingReport()
    assert report.summary()["failure_rate"] == 0.0
    assert report.csv().decode().splitlines() == [
        "kind,field,count,example_record,example_value,reason",
        "total,attempted,0,,,", "total,mapped,0,,,", "total,failed,0,,,", "total,deleted,0,,,",
    ]


def test_coverage_counts_each_field_however_many_distinct_sets_the_records_fill(originals, monkeypatch):
    """Records are counted per set of fields they fill; past MAX_SETS distinct sets the sets are added up, so
    memory stays bounded and every field's count is the same."""
    mapper = mapper_for(ProviderEntry("zenodo", {"mapping": "oai_dc", "mapping_overrides": {
        "dataProvider": {"value": "Zenodo"}, "object": {"value": "thumbnail.png"}}}))
    records = originals("oai-pmh/zenodo-listrecords-oai_dc.xml", "zenodo")
    mapped = [result.record for result in map(mapper.map, records) if result.record]
    varied = []
    for number, record in enumerate(mapped * 3):  # drop a different field of each copy: many distinct sets
        record = {**record, "sourceResource": dict(record["sourceResource"])}
        record["sourceResource"].pop(sorted(record["sourceResource"])[number % len(record["sourceResource"])])
        varied.append(record)
    expected = {name: sum(1 for record in varied if (record if name in report._TOP else record["sourceResource"]).get(name))
                for name in Coverage().filled}

    monkeypatch.setattr(report, "MAX_SETS", 2)
    coverage = Coverage()
    for record in varied:
        coverage.add(record)
        assert len(coverage._sets) <= 3
    assert coverage.records == len(varied) and coverage.filled == expected
    assert 0 < coverage.filled["title"] < len(varied)  # some copies dropped their title
