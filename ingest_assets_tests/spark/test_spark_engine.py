"""The Spark engine gives what the in-process engine gives: same records, counts, reports, manifests and
layout, on ``local[2]`` and a real standalone cluster, on local storage and S3 (moto server); killed and
failed tasks leave no duplicate, partial or visible output."""

from __future__ import annotations

import json
import os
import sys
import uuid
from datetime import datetime, timedelta, timezone

import boto3
import dagster as dg
import pyarrow.parquet as pq
import pytest
from pyspark import TaskContext, cloudpickle

from ingest_assets.defs.resources import StorageResource
from ingest_assets.core.errors import IngestError
from ingest_assets.records.engines import ahead
from ingest_assets.records.engines.ahead import staged_stream
from ingest_assets.records.engines.spark import spark_stream
from ingest_assets.records.engines.steps import RecordActivity, in_process
from ingest_assets.storage import layout
from ingest_assets.storage.activities import PlanRef, RecordSource, write_activity
from ingest_assets.storage.avro import INDEX_RECORD, MAP_RECORD, part_keys
from ingest_assets.storage.manifest import Manifest

from ingest_assets_tests.support.spark import DAY, ENTRY, PART_RECORDS, PROVIDER, SETTINGS, write_harvest

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # executors cannot import test modules
SCHEMAS = {"mapping": MAP_RECORD, "enrichment": MAP_RECORD, "indexing": INDEX_RECORD}
PARTITION = f"{DAY.isoformat()}|{PROVIDER}"


@pytest.fixture(params=["local", "s3"])
def hub(request, tmp_path) -> StorageResource:
    if request.param == "local":
        return StorageResource(url=str(tmp_path / "storage"))
    endpoint = request.getfixturevalue("s3_endpoint")
    bucket = f"spark-{uuid.uuid4().hex[:12]}"
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket=bucket)
    s3 = {"endpoint_url": endpoint, "region_name": "us-east-1", "aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
    return StorageResource(url=f"s3://{bucket}/hub", s3=s3)


def run_chain(hub: StorageResource, harvest: RecordSource, stream, started: datetime) -> dict:
    """mapping -> enrichment -> indexing of the harvest with ``stream(activity, inputs)``, in one plan."""
    storage, plan, results, source = hub.get_client(), PlanRef(started), {}, {}
    source["harvest"] = harvest
    steps = (("mapping", ["harvest"]), ("enrichment", ["mapping"]), ("indexing", ["enrichment", "harvest"]))
    for n, (activity, inputs) in enumerate(steps):
        result = write_activity(
            storage, stream(RecordActivity(activity, ENTRY), [source[i] for i in inputs]), provider=PROVIDER,
            activity=activity, day=DAY, started=started + timedelta(seconds=n), schema=SCHEMAS[activity],
            partition=PARTITION, plan=plan,
        )
        results[activity] = result
        source[activity] = RecordSource(storage, result.output)
    return results


def canonical(storage, result) -> list[str]:
    return [json.dumps(r, sort_keys=True) for r in RecordSource(storage, result.output)]


def manifest(storage, result) -> Manifest:
    return Manifest.from_bytes(storage.read_bytes(result.output.manifest))


def test_spark_gives_the_in_process_records_counts_reports_and_layout(spark, hub, shared_fixtures):
    storage = hub.get_client()
    harvest = write_harvest(storage, shared_fixtures)
    assert len(part_keys(storage, harvest.key)) == 4
    t0 = datetime(2026, 1, 15, 7, 0, tzinfo=timezone.utc)
    local = run_chain(hub, harvest, in_process, t0)
    on_spark = run_chain(hub, harvest, lambda a, i: spark_stream(spark, storage, a, i, hub.opener()), t0 + timedelta(hours=1))

    for activity in SCHEMAS:
        a, b = local[activity], on_spark[activity]
        records_a, records_b = canonical(storage, a), canonical(storage, b)
        assert len(records_b) == len(set(records_b)) == b.records  # no duplicates
        assert set(records_a) == set(records_b) and a.records == b.records
        assert a.summary == b.summary
        ma, mb = manifest(storage, a), manifest(storage, b)
        for field in ("activity", "provider", "schema", "partition", "record_count", "software_version", "extra"):
            assert getattr(ma, field) == getattr(mb, field), field
        assert mb.inputs == [harvest.key if i == "harvest" else on_spark[i].output.folder for i in
                             {"mapping": ["harvest"], "enrichment": ["mapping"], "indexing": ["enrichment", "harvest"]}[activity]]
        logs_a = sorted(k.rsplit("/", 1)[1] for k in storage.list_keys(f"{a.output.folder}/_LOGS"))
        assert logs_a == sorted(k.rsplit("/", 1)[1] for k in storage.list_keys(f"{b.output.folder}/_LOGS"))
        for name in logs_a:  # same counts and the same first examples: reports merge in input order
            assert storage.read_bytes(f"{a.output.folder}/_LOGS/{name}") == storage.read_bytes(f"{b.output.folder}/_LOGS/{name}")
        assert json.loads(storage.read_bytes(b.output.prov))["generator"] == (
            harvest.output.relative if activity == "mapping"
            else on_spark["mapping" if activity == "enrichment" else "enrichment"].output.relative
        )
        assert b.parts == [f"part-{n:05d}.avro" for n in range(len(b.parts))] and len(b.parts) > 1
    summary = local["mapping"].summary
    assert summary["failed"] > 0 and summary["deleted"] > 0 and summary["mapped"] > 3 * PART_RECORDS // 2
    assert local["indexing"].summary["deletions"] == summary["deleted"]
    plan = json.loads(storage.read_bytes(on_spark["indexing"].plan))
    assert {k: plan[k] for k in SCHEMAS} == {k: on_spark[k].output.relative for k in SCHEMAS}
    assert not [k for k in storage.list_keys() if k.startswith("_spark-staging/")]


@pytest.mark.parametrize("deletions", [False, True], ids=["no-deletions", "deletions"])
def test_a_spark_mapping_stages_what_enrichment_and_indexing_commit(spark, hub, shared_fixtures, deletions):
    """A mapping whose run enriches and indexes too: its tasks stage both stages (only enrichment when the harvest
    holds deletions: indexing's own job reads them in parallel), and the steps commit the in-process outputs."""
    storage = hub.get_client()
    harvest = write_harvest(storage, shared_fixtures, deletions=deletions)
    t0 = datetime(2026, 1, 15, 7, 0, tzinfo=timezone.utc)
    expected = run_chain(hub, harvest, in_process, t0)
    committed = []

    def stream(activity, inputs):
        staged = staged_stream(activity, inputs, storage)
        committed.append(activity.activity) if staged else None
        return staged or spark_stream(spark, storage, activity, inputs, hub.opener(), ahead.STAGES)

    on_spark = run_chain(hub, harvest, stream, t0 + timedelta(hours=1))
    assert committed == (["enrichment"] if deletions else ["enrichment", "indexing"])
    for activity in SCHEMAS:
        a, b = expected[activity], on_spark[activity]
        assert canonical(storage, b) == canonical(storage, a) and b.summary == a.summary
        for name in (k.rsplit("/", 1)[1] for k in storage.list_keys(f"{a.output.folder}/_LOGS")):
            assert storage.read_bytes(f"{b.output.folder}/_LOGS/{name}") == storage.read_bytes(f"{a.output.folder}/_LOGS/{name}")
    assert not [k for k in storage.list_keys() if k.startswith(("_spark-staging/", "_ahead-staging/"))]


class KilledOnce(RecordActivity):
    """Mapping whose second task's worker dies mid-write on its first attempt (a killed executor)."""

    def steps(self, report):
        (step,) = super().steps(report)
        seen = [0]

        def dying(record):
            seen[0] += 1
            context = TaskContext.get()
            if context.partitionId() == 1 and context.attemptNumber() == 0 and seen[0] == PART_RECORDS // 2:
                os._exit(1)
            return step(record)

        return [dying]


class AlwaysFailing(RecordActivity):
    """Mapping whose second task fails on every attempt (after the first task has staged its part)."""

    def steps(self, report):
        (step,) = super().steps(report)

        def failing(record):
            if TaskContext.get().partitionId() == 1:
                raise ValueError("provider feed broken")
            return step(record)

        return [failing]


def _mapping(hub, spark, activity, harvest):
    return write_activity(
        hub.get_client(), spark_stream(spark, hub.get_client(), activity, [harvest], hub.opener()), provider=PROVIDER,
        activity="mapping", day=DAY, started=datetime(2026, 1, 15, 9, tzinfo=timezone.utc), schema=MAP_RECORD, partition=PARTITION,
    )


def _nothing_visible(storage) -> None:
    assert layout.complete_outputs(storage, PROVIDER, "mapping") == []
    assert storage.list_children(f"{PROVIDER}/mapping/{DAY:%Y%m%d}") == []  # no folder, no -prov.json
    assert not [k for k in storage.list_keys() if k.startswith(("_spark-staging/", ".staging/"))]


@pytest.mark.parametrize("hub", ["local"], indirect=True)
def test_a_task_killed_mid_write_leaves_no_duplicate_or_partial_output(spark, hub, shared_fixtures):
    storage = hub.get_client()
    harvest = write_harvest(storage, shared_fixtures)
    expected = {r["id"] for r in in_process(RecordActivity("mapping", ENTRY), [harvest]).records}
    if spark.sparkContext.master.startswith("local"):  # local mode does not retry: the job aborts cleanly
        with pytest.raises(IngestError):
            _mapping(hub, spark, KilledOnce("mapping", ENTRY), harvest)
        _nothing_visible(storage)
        return
    result = _mapping(hub, spark, KilledOnce("mapping", ENTRY), harvest)  # the cluster retries the task
    ids = [r["id"] for r in RecordSource(storage, result.output)]
    assert len(ids) == len(set(ids)) == result.records and set(ids) == expected
    assert manifest(storage, result).extra["Summary mapped"] == str(len(expected))
    assert not [k for k in storage.list_keys() if k.startswith("_spark-staging/")]


def test_a_failed_job_leaves_no_visible_output(spark, hub, shared_fixtures):
    storage = hub.get_client()
    harvest = write_harvest(storage, shared_fixtures)
    with pytest.raises(IngestError, match="provider feed broken") as raised:
        _mapping(hub, spark, AlwaysFailing("mapping", ENTRY), harvest)
    assert raised.value.provider == PROVIDER and raised.value.retryable  # not one of our typed (bad input) errors
    _nothing_visible(storage)


def test_record_pipeline_runs_on_the_spark_engine_by_registry_setting(spark, tmp_path, shared_fixtures):
    """The Dagster assets: ``engine: auto`` picks Spark for a harvest above the threshold."""
    from ingest_assets.definitions import build_definitions
    from ingest_assets.core.settings import Settings

    registry = tmp_path / "registry.yaml"
    registry.write_text(json.dumps({PROVIDER: {**SETTINGS, "engine": "auto"}}))
    config = Settings.from_env({"INGEST_HOME": str(tmp_path / "home"), "INGEST_REGISTRY": str(registry),
                                "INGEST_SPARK_THRESHOLD": "100"})
    hub = StorageResource(url=config.storage_url)
    harvest = write_harvest(hub.get_client(), shared_fixtures)
    defs = build_definitions(config)
    job = defs.resolve_job_def("record_pipeline").get_subset(
        asset_selection={dg.AssetKey(k) for k in ("mapped_records", "enriched_records", "indexed_records")}
    )
    export = defs.resolve_implicit_global_asset_job_def().get_subset(asset_selection={dg.AssetKey("enriched_parquet")})
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("record_providers", [PROVIDER])
        assert job.execute_in_process(partition_key=PARTITION, instance=instance).success
        exported = export.execute_in_process(partition_key=PARTITION, instance=instance)
        assert exported.success
        materialization = exported.asset_materializations_for_node("enriched_parquet")[0]
    expected = run_chain(hub, harvest, in_process, datetime(2026, 1, 15, 12, tzinfo=timezone.utc))
    for activity in SCHEMAS:
        outputs = layout.complete_outputs(hub.get_client(), PROVIDER, activity, DAY)
        assert len(outputs) == 2
        dagster_run = next(o for o in outputs if o != expected[activity].output)
        run_records = [json.dumps(r, sort_keys=True) for r in RecordSource(hub.get_client(), dagster_run)]
        assert set(run_records) == set(canonical(hub.get_client(), expected[activity])) and len(run_records) == len(set(run_records))
        if activity == "enrichment":  # the Parquet export holds the enriched records
            parquet = pq.read_table(materialization.metadata["dagster/uri"].value).to_pylist()
            assert {json.dumps(r, sort_keys=True) for r in parquet} == set(run_records) and len(parquet) == len(run_records)
        # one part per Spark task, two tasks per core of local[2] and input, 4 input parts each: indexing's inputs
        # (enrichment, harvest for its deletions) in tasks of their own, every harvest part holding some deletions
        assert len(part_keys(hub.get_client(), dagster_run.folder)) == (8 if activity == "indexing" else 4)
