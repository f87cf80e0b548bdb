from datetime import date, datetime, timedelta, timezone

import pytest

from ingest_assets.storage import layout

STARTED = datetime(2017, 2, 9, 10, 44, 28, 512000, tzinfo=timezone.utc)


def test_schema_name_rule_moves_version_to_the_end():
    assert layout.schema_name("dpla.avro.v1.OriginalRecord") == "OriginalRecord.v1"
    assert layout.schema_name("dpla.avro.v1.MAP4_x.MAPRecord") == "MAP4_x.MAPRecord.v1"
    assert layout.schema_name("dpla.avro.v1.MAP4_0.IndexRecord") == "MAP4_0.IndexRecord.v1"
    with pytest.raises(ValueError):
        layout.schema_name("la.dp.avro.MAP.3_1.IndexRecord")


def test_activity_paths_follow_the_spec_with_utc_timestamps():
    berlin = timezone(timedelta(hours=1))
    out = layout.activity_output("cdl", "harvest", date(2017, 2, 9), STARTED.astimezone(berlin), "OriginalRecord.v1")
    assert out.folder == "cdl/harvest/20170209/20170209_104428-cdl-OriginalRecord.v1.avro"
    assert out.prov == "cdl/harvest/20170209/20170209_104428-cdl-OriginalRecord.v1-prov.json"
    assert out.manifest == out.folder + "/_MANIFEST"
    assert out.relative == "harvest/20170209/20170209_104428-cdl-OriginalRecord.v1.avro"
    assert out.log("mapping-report.csv") == "_LOGS/mapping-report.csv"
    assert layout.parse_output(out.folder) == out
    plan = layout.plan_key("cdl", STARTED, STARTED + timedelta(minutes=3), "MAP4_x.MAPRecord.v1")
    assert plan == "cdl/plan/20170209_104428/20170209_104728-MAP4_x.MAPRecord.v1.json"


def test_partition_day_and_start_time_are_independent_for_backfills():
    out = layout.activity_output("mdl", "enrichment", date(2017, 1, 3), STARTED, "MAP4_x.MAPRecord.v1")
    assert out.folder == "mdl/enrichment/20170103/20170209_104428-mdl-MAP4_x.MAPRecord.v1.avro"


@pytest.mark.parametrize(
    "call",
    [
        lambda: layout.activity_output("Bad-Name", "harvest", date(2017, 1, 1), STARTED, "X.v1"),
        lambda: layout.activity_output("cdl", "publish", date(2017, 1, 1), STARTED, "X.v1"),
        lambda: layout.activity_output("cdl", "harvest", date(2017, 1, 1), datetime(2017, 1, 1), "X.v1"),
        lambda: layout.hub_key("datasets", "..", "x"),
        lambda: layout.provider_state_key("cdl", "a/b"),
    ],
)
def test_invalid_paths_are_refused(call):
    with pytest.raises(ValueError):
        call()


def test_generic_keys():
    assert layout.provider_dated_key("cdl", "reports", STARTED, "x.wiki") == "cdl/reports/20170209/20170209_104428-cdl-x.wiki"
    assert layout.hub_key("linked_data", "export", "all.nq") == "_linked_data/export/all.nq"
    assert layout.hub_dated_key("datasets", STARTED, "results.jsonl") == "_datasets/20170209/20170209_104428-results.jsonl"
    assert layout.provider_state_key("cdl", "status.json") == "cdl/state/status.json"
