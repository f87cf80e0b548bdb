"""MappingReport: counts, per message kind and field, CSV for _LOGS/ and Dagster metadata."""

from __future__ import annotations

import csv
import io

from ingest_assets.records.mapping import MappingReport, mapper_for
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
