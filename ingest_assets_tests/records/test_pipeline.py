"""The record pipeline end to end on embedded defaults: a real OAI-PMH server, Avro layout, search index."""

import csv
import io
import json
from datetime import date

import dagster as dg
import pytest

from ingest_assets.definitions import build_definitions
from ingest_assets.defs.resources import StorageResource
from ingest_assets.operations.failures import last_failure
from ingest_assets.demo.oai_server import serve_in_thread
from ingest_assets.demo.samples import sample_records
from ingest_assets.records.indexing import open_search_index
from ingest_assets.core.settings import Settings
from ingest_assets.storage import LocalStorage, layout
from ingest_assets.storage.activities import RecordSource
from ingest_assets.storage.manifest import Manifest

DAY = date(2026, 1, 15)
PARTITION = dg.MultiPartitionKey({"date": DAY.isoformat(), "provider": "demo"})
CHECKS = ("harvest_count_drop", "mapping_failure_rate", "harvest_reconciles", "mapping_reconciles", "indexing_reconciles",
          "index_queryable", "index_count", "index_health", "index_fields", "index_canary")


@pytest.fixture
def hub(tmp_path):
    server, url = serve_in_thread(sample_records(day=DAY))
    registry = tmp_path / "registry.yaml"
    registry.write_text(
        "demo:\n  label: Riverside Historical Society (demo)\n"
        f"  harvest: {{type: oai, endpoint: '{url}', metadata_prefix: oai_dc, allow_private: true}}\n"
        "  mapping: oai_dc\n  resourcesync: {}\n"
    )
    settings = Settings.from_env({"INGEST_HOME": str(tmp_path / "home"), "INGEST_REGISTRY": str(registry)})
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("record_providers", ["demo"])
        yield settings, instance, registry
    server.shutdown()


def run_job(settings, instance, run_config=None, selection=None):
    defs = build_definitions(settings)
    job = defs.resolve_job_def("record_pipeline")
    if selection:
        job = job.get_subset(asset_selection={dg.AssetKey(k) for k in selection})
    return job.execute_in_process(partition_key=str(PARTITION), instance=instance, run_config=run_config, raise_on_error=False)


def expected_in_window():
    start, end = DAY.isoformat(), (DAY.replace(day=16)).isoformat()
    return [r for r in sample_records(day=DAY) if start <= r.datestamp.date().isoformat() < end]


def test_pipeline_end_to_end(hub):
    settings, instance, _ = hub
    result = run_job(settings, instance)
    assert result.success
    storage = LocalStorage(settings.storage_url)
    outputs = {a: layout.latest_output(storage, "demo", a, DAY) for a in layout.ACTIVITIES}
    assert all(outputs.values())

    window = expected_in_window()
    deleted = {r.identifier for r in window if r.deleted}
    no_rights = {r.identifier for r in window if not r.fields["rights"] and not r.deleted}
    originals = list(RecordSource(storage, outputs["harvest"]))
    assert sorted(r["id"] for r in originals) == sorted(r.identifier for r in window)  # the day's records only
    assert {r["id"] for r in originals if r["deleted"]} == deleted and deleted
    harvest_log = storage.read_bytes(f"{outputs['harvest'].folder}/{layout.LOGS}/harvest-log.txt").decode()
    assert "Identify announces granularity" in harvest_log  # the run says how it chose from/until

    mapped = list(RecordSource(storage, outputs["mapping"]))
    assert len(mapped) == len(window) - len(deleted) - len(no_rights)
    report = list(csv.reader(io.StringIO(storage.read_bytes(outputs["mapping"].folder + "/_LOGS/mapping-report.csv").decode())))
    totals = {row[1]: int(row[2]) for row in report if row[0] == "total"}
    assert totals == {"attempted": len(window), "mapped": len(mapped), "failed": len(no_rights), "deleted": len(deleted)}
    manifest = Manifest.from_bytes(storage.read_bytes(outputs["mapping"].manifest))
    assert manifest.extra["Summary failed"] == str(len(no_rights)) and manifest.inputs == [outputs["harvest"].folder]

    enriched = {r["id"]: r for r in RecordSource(storage, outputs["enrichment"])}
    sample = next(r for r in enriched.values() if r["isShownAt"] == "https://demo.example.org/items/00021")
    source = sample["sourceResource"]
    assert source["title"] == ["Mills in Millbrook, view 21."]  # "  Mills in ...21. " cleaned; a title keeps its period
    assert source["description"] == ["Glass-plate negative of mills in Millbrook."]  # HTML removed
    assert source["date"] == [{"providedLabel": ["ca. 1910"], "begin": None, "end": None}]  # DateBuilder: years only
    assert source["language"] == ["English"] and sample["dataProvider"] == "Riverside Historical Society"
    assert sample["dataProviderUri"] == "http://dp.la/api/contributor/riverside-historical-society"
    assert sample["rightsStatement"] == "http://creativecommons.org/licenses/by/4.0"  # http, no slash added (ingestion3)

    indexed = list(RecordSource(storage, outputs["indexing"]))
    assert sum(r["deleted"] for r in indexed) == len(deleted)
    assert {r["id"] for r in indexed if not r["deleted"]} == set(enriched)

    index = open_search_index(settings.search)
    assert index.count("dpla-map4") == len(enriched)
    hits = index.search("dpla-map4", "Millbrook", 100)
    assert hits and all("Millbrook" in json.dumps(h) for h in hits)

    checks = {e.asset_check_key.name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks == dict.fromkeys(CHECKS, True)
    # each result belongs to the provider and day it judged (the UI shows it on that partition)
    assert {e.partition for e in result.get_asset_check_evaluations()} == {str(PARTITION)}

    changes = result.asset_materializations_for_node("resourcesync_changes")[0].metadata
    assert changes["created"].value == len(enriched) and changes["deleted"].value == 0  # deleted items were never published
    assert changes["event_time"].value == outputs["harvest"].started.isoformat()
    assert (settings.home / "storage" / "demo" / "plan").is_dir()
    assert not list(storage.list_keys(layout.ahead_staging_key("demo", DAY)))  # what the mapping staged was committed


def test_mapping_failure_gate_blocks_downstream(hub):
    settings, instance, registry = hub
    registry.write_text(registry.read_text() + "  mapping_overrides:\n    rights: null\n    rightsStatement: null\n")
    result = run_job(settings, instance)
    checks = {e.asset_check_key.name: e for e in result.get_asset_check_evaluations()}
    assert checks["mapping_failure_rate"].passed is False
    assert checks["mapping_failure_rate"].metadata["failure_rate"].value == 1.0
    materialized = {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()}
    assert "mapped_records" in materialized and "enriched_records" not in materialized and "search_index" not in materialized
    storage = LocalStorage(settings.storage_url)
    staged = storage.list_children(layout.ahead_staging_key("demo", DAY))
    assert len(staged) == 1 and not layout.latest_output(storage, "demo", "enrichment", DAY)  # staged, never committed

    registry.write_text(registry.read_text().split("  mapping_overrides:")[0])
    assert run_job(settings, instance).success
    assert layout.latest_output(storage, "demo", "enrichment", DAY)
    assert not storage.list_children(layout.ahead_staging_key("demo", DAY))  # the next mapping cleared the old


def test_rerun_mapping_from_a_plan_file_or_a_generator_folder(hub):
    settings, instance, _ = hub
    assert run_job(settings, instance).success
    storage = LocalStorage(settings.storage_url)
    harvest = layout.latest_output(storage, "demo", "harvest", DAY)
    plan_dir = storage.list_children("demo/plan")[0]
    plan = next(k for k in layout.plan_files(storage, "demo", layout.parse_timestamp(plan_dir)) if k.endswith("OriginalRecord.v1.json"))
    for source in (plan, harvest.folder):
        result = run_job(settings, instance, {"ops": {"mapped_records": {"config": {"source": source}}}}, selection=["mapped_records"])
        assert result.success
        assert not list(storage.list_keys(layout.ahead_staging_key("demo", DAY)))  # no later step in the run: none staged
        latest = layout.latest_output(storage, "demo", "mapping", DAY)
        assert Manifest.from_bytes(storage.read_bytes(latest.manifest)).inputs == [harvest.folder]
        assert json.loads(storage.read_bytes(latest.prov))["generator"] == harvest.relative


def test_rerun_indexing_from_a_plan_file_or_an_enrichment_folder(hub):
    """Indexing reads two inputs: given one enrichment output, it finds the harvest that output came from."""
    settings, instance, _ = hub
    assert run_job(settings, instance).success
    storage = LocalStorage(settings.storage_url)
    first = {a: layout.latest_output(storage, "demo", a, DAY) for a in layout.ACTIVITIES}
    plan_dir = storage.list_children("demo/plan")[0]
    plan = next(k for k in layout.plan_files(storage, "demo", layout.parse_timestamp(plan_dir)) if k.endswith("IndexRecord.v1.json"))
    for source in (plan, first["enrichment"].folder):
        config = {"ops": {"indexed_records": {"config": {"source": source}}}}
        assert run_job(settings, instance, config, selection=["indexed_records"]).success
        latest = layout.latest_output(storage, "demo", "indexing", DAY)
        assert latest != first["indexing"]
        assert Manifest.from_bytes(storage.read_bytes(latest.manifest)).inputs == [first["enrichment"].folder, first["harvest"].folder]
        prov = json.loads(storage.read_bytes(latest.prov))
        assert prov["inputs"] == [first["enrichment"].relative, first["harvest"].relative]
        assert sorted(r["id"] for r in RecordSource(storage, latest)) == sorted(r["id"] for r in RecordSource(storage, first["indexing"]))
    # every activity keeps its report in _LOGS, indexing included
    for output in first.values():
        assert storage.list_children(f"{output.folder}/{layout.LOGS}"), output.activity
    report = storage.read_bytes(f"{first['indexing'].folder}/{layout.LOGS}/indexing-report.csv").decode()
    deleted = sum(r["deleted"] for r in RecordSource(storage, first["indexing"]))
    assert f"total,deletions,{deleted}" in report.splitlines()

    mapping = {"ops": {"indexed_records": {"config": {"source": first["mapping"].folder}}}}
    result = run_job(settings, instance, mapping, selection=["indexed_records"])
    assert not result.success  # a mapping output is not an enrichment output, nor derived from one
    assert "not derived from any enrichment output" in str(result.get_step_failure_events()[0].step_failure_data.error)


def test_harvest_count_drop_gate_compares_full_harvests(hub):
    settings, instance, registry = hub
    results = []
    for count in (60, 57, 45):  # -5% passes, then -21% blocks
        server, url = serve_in_thread(sample_records(count=count, day=DAY))
        registry.write_text(
            f"demo:\n  harvest: {{type: oai, endpoint: '{url}', metadata_prefix: oai_dc, allow_private: true, full: true}}\n"
            "  mapping: oai_dc\n"
        )
        results.append(run_job(settings, instance, selection=["original_records", "mapped_records"]))
        server.shutdown()
    checks = [{e.asset_check_key.name: e for e in r.get_asset_check_evaluations()}["harvest_count_drop"] for r in results]
    assert [c.passed for c in checks] == [True, True, False]
    assert checks[2].metadata["current"].value == 45 and checks[2].metadata["previous"].value == 57
    assert round(checks[2].metadata["drop"].value, 3) == round(1 - 45 / 57, 3)
    materialized = [{e.asset_key.to_user_string() for e in r.get_asset_materialization_events()} for r in results]
    assert "mapped_records" in materialized[1] and "mapped_records" not in materialized[2]


def test_a_backfill_range_runs_each_day_once_in_one_run(hub):
    """The run the backfill daemon launches under the record assets' BACKFILL policy: three days, one run;
    each day harvested for its own window, indexed in day order, and judged by the checks on its own."""
    settings, instance, _ = hub
    days = ["2026-01-14", "2026-01-15", "2026-01-16"]
    job = build_definitions(settings).resolve_job_def("record_pipeline")
    result = job.execute_in_process(instance=instance, raise_on_error=False, tags={
        "dagster/asset_partition_range_start": f"{days[0]}|demo", "dagster/asset_partition_range_end": f"{days[-1]}|demo",
    })
    assert result.success
    storage = LocalStorage(settings.storage_url)
    harvested = []
    for day in days:
        output = layout.latest_output(storage, "demo", "harvest", date.fromisoformat(day))
        ids = sorted(r["id"] for r in RecordSource(storage, output))
        window = [r for r in sample_records(day=DAY) if r.datestamp.date().isoformat() == day]
        assert ids == sorted(r.identifier for r in window) and ids
        harvested += ids
    assert len(harvested) == len(set(harvested)) == len(sample_records(day=DAY))

    for asset in ("original_records", "indexed_records", "search_index", "resourcesync_changes"):
        assert sorted(str(m.partition) for m in result.asset_materializations_for_node(asset)) == [f"{d}|demo" for d in days]
    indexed = {str(m.partition): m.metadata["indexed"].value for m in result.asset_materializations_for_node("search_index")}
    # one candidate holds the range's days, applied in order, gated and promoted once
    assert len({m.metadata["index"].value for m in result.asset_materializations_for_node("search_index")}) == 1
    index = open_search_index(settings.search)
    live = {r.identifier for r in sample_records(day=DAY) if not r.deleted and r.fields["rights"]}
    assert index.count("dpla-map4") == len(live) == sum(indexed.values())

    per_partition = {(e.asset_check_key.name, e.partition): e.passed for e in result.get_asset_check_evaluations() if e.partition}
    assert per_partition == {(name, f"{d}|demo"): True for name in CHECKS for d in days}
    assert len(instance.get_run_records()) == 1


def test_a_job_page_backfill_range_is_refused_then_run_whole_by_the_relaunch_sensor(hub):
    """A backfill launched from the record_pipeline job's page: Dagster 1.13 tags its range run with the range and
    with the first day's partition (job_backfill.submit_backfill_runs copies that day's tags), so the run would
    write that one day and the backfill would report the range done. The run is refused before writing anything,
    nobody is told of it as a failure, and range_relaunch_sensor requests the range as one run that harvests
    each day (the refusal's run used to end there, the days never written)."""
    settings, instance, _ = hub
    days = ["2026-01-14", "2026-01-15", "2026-01-16"]
    defs = build_definitions(settings)
    job = defs.resolve_job_def("record_pipeline")
    tags = {"dagster/asset_partition_range_start": f"{days[0]}|demo", "dagster/asset_partition_range_end": f"{days[-1]}|demo",
            "dagster/partition/date": days[0], "dagster/partition/provider": "demo", "dagster/backfill": "pagefill",
            "dagster/partition_set": "record_pipeline_partition_set", "team": "metadata"}
    refused = job.execute_in_process(instance=instance, tags=tags, raise_on_error=False)
    assert not refused.success
    storage = LocalStorage(settings.storage_url)
    assert not layout.complete_outputs(storage, "demo", "harvest")  # not even the first day

    def evaluate(sensor_name: str, resources=None):
        sensor = defs.get_sensor_def(sensor_name)
        return sensor(dg.build_run_status_sensor_context(
            sensor_name=sensor.name, dagster_event=refused.get_run_failure_event(), dagster_instance=instance,
            dagster_run=refused.dagster_run, resources=resources).for_run_failure())

    request = evaluate("range_relaunch_sensor")
    assert request.tags == {"dagster/asset_partition_range_start": f"{days[0]}|demo",
                            "dagster/asset_partition_range_end": f"{days[-1]}|demo", "team": "metadata",
                            "ingest/relaunch-of": refused.run_id}
    evaluate("failure_sensor", {"storage": StorageResource(url=settings.storage_url)})
    assert last_failure(storage, "demo") is None  # the refusal is nobody's failure

    harvest = job.get_subset(asset_selection={dg.AssetKey("original_records")})
    assert harvest.execute_in_process(instance=instance, tags=request.tags).success
    assert sorted(o.day.isoformat() for o in layout.complete_outputs(storage, "demo", "harvest")) == days


def test_record_counts_table_reads_each_day_from_the_manifests(hub):
    settings, instance, registry = hub
    registry.write_text(registry.read_text() + "lod: {void: 'https://example.org/void.ttl'}\n")  # not a record provider
    assert run_job(settings, instance).success
    defs = build_definitions(settings)
    job = defs.resolve_implicit_global_asset_job_def().get_subset(asset_selection={dg.AssetKey("record_counts")})
    result = job.execute_in_process(instance=instance)  # the day is long past: the table covers days with data
    [materialization] = result.asset_materializations_for_node("record_counts")
    table = materialization.metadata["counts"]
    [row] = [r.data for r in table.records]  # one provider, one day harvested
    window = expected_in_window()
    deleted = sum(r.deleted for r in window)
    no_rights = sum(not r.fields["rights"] and not r.deleted for r in window)
    assert row == {
        "provider": "demo", "day": DAY.isoformat(), "harvested": len(window), "harvest_deleted": deleted, "harvest_failed": 0,
        "mapped": len(window) - deleted - no_rights, "mapping_failed": no_rights,
        "enriched": len(window) - deleted - no_rights, "indexed": len(window) - no_rights, "index_deletions": deleted,
        "absent": 0,
    }
    assert [c.name for c in table.schema.columns][:3] == ["provider", "day", "harvested"]
    assert materialization.metadata["dagster/row_count"].value == 1


def test_record_counts_follow_indexing_by_their_automation_condition(hub):
    settings, instance, _ = hub
    defs = build_definitions(settings)
    key = dg.AssetKey("record_counts")
    first = dg.evaluate_automation_conditions(defs=defs, instance=instance)
    assert run_job(settings, instance).success
    after_run = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=first.cursor)
    assert after_run.get_num_requested(key) == 1
    quiet = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=after_run.cursor)
    assert quiet.get_num_requested(key) == 0  # nothing indexed since: no new table


def test_a_file_harvest_fetches_the_whole_source_so_it_is_full_for_the_count_drop_gate(hub, shared_fixtures):
    """Harvard's page (10 records), then DataCite's (6) as the provider's whole file: each harvest is labelled
    full in its _MANIFEST, so the second is compared with the first and blocked (-40%)."""
    settings, instance, registry = hub
    results = []
    for page in ("harvard-librarycloud-listrecords-mods-resumption.xml", "datacite-oai-listrecords-resumption-final.xml"):
        registry.write_text(
            "demo:\n  harvest: {type: file, format: xml, path: '%s', record_xpath: '//oai:record',\n"
            "    id_xpath: 'oai:header/oai:identifier', namespaces: {oai: 'http://www.openarchives.org/OAI/2.0/'}}\n"
            "  mapping: oai_dc\n" % (shared_fixtures / "oai-pmh" / page)
        )
        results.append(run_job(settings, instance, selection=["original_records"]))
    storage = LocalStorage(settings.storage_url)
    manifests = [Manifest.from_bytes(storage.read_bytes(o.manifest))
                 for o in layout.complete_outputs(storage, "demo", "harvest")]
    assert [(m.record_count, m.extra["Summary mode"]) for m in manifests] == [(10, "full"), (6, "full")]
    checks = [{e.asset_check_key.name: e for e in r.get_asset_check_evaluations()}["harvest_count_drop"] for r in results]
    assert [c.passed for c in checks] == [True, False]
    assert checks[1].metadata["previous"].value == 10 and checks[1].metadata["current"].value == 6
