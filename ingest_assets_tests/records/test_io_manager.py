"""The record IO manager with the exact partition shape the pipeline uses: date x dynamic provider."""

import json
import uuid
from datetime import date, datetime, timezone

import boto3
import dagster as dg
import fastavro
import pytest

from ingest_assets.defs.records.partitions import record_partitions as partitions_from
from ingest_assets.defs.records.io_managers import BACKFILL, Part, PartitionStreams, RecordIOManager, record_metadata, retried_step
from ingest_assets.defs.resources import StorageResource
from ingest_assets.core.errors import ConfigError, FetchError
from ingest_assets.storage import LocalStorage, S3Storage, layout
from ingest_assets.storage.activities import RecordSource, RecordStream
from ingest_assets.storage.avro import INDEX_RECORD, ORIGINAL_RECORD
from ingest_assets.storage.manifest import Manifest

FAIL_AFTER = {"n": None}
record_partitions = partitions_from(date(2026, 1, 1))


def _originals(provider: str, day: str, n: int = 5):
    for i in range(n):
        if FAIL_AFTER["n"] is not None and i == FAIL_AFTER["n"]:
            raise ConnectionError("provider went away mid-harvest")
        yield {
            "id": f"oai:{provider}:{day}:{i}",
            "ingestDate": 1767225600,
            "provider": provider,
            "document": f"<record n='{i}'/>",
            "mimetype": "application_xml",
            "deleted": i == 4,
        }


@dg.asset(partitions_def=record_partitions, io_manager_key="record_io_manager", metadata=record_metadata("harvest", ORIGINAL_RECORD),
          backfill_policy=BACKFILL)
def toy_original() -> PartitionStreams:
    return PartitionStreams(lambda provider, day: RecordStream(
        _originals(provider, day.isoformat()), started=datetime.now(timezone.utc), summary=lambda: {"mode": "incremental"}
    ))


@dg.asset(partitions_def=record_partitions, io_manager_key="record_io_manager", metadata=record_metadata("indexing", INDEX_RECORD),
          backfill_policy=BACKFILL)
def toy_indexed(toy_original: dict[Part, RecordSource]) -> PartitionStreams:
    def index(provider, day):
        source = toy_original[provider, day]
        docs = ({"id": r["id"], "document": json.dumps({"doc": r["document"]}), "deleted": r["deleted"]} for r in source)
        return RecordStream(docs, started=datetime.now(timezone.utc), inputs=[source],
                            logs=lambda: {"counts.csv": b"kind,count\n"})

    return PartitionStreams(index)


def key(day: str, provider: str = "demo") -> dg.MultiPartitionKey:
    return dg.MultiPartitionKey({"date": day, "provider": provider})


@pytest.fixture
def instance():
    with dg.instance_for_test() as inst:
        inst.add_dynamic_partitions("record_providers", ["demo", "other"])
        yield inst


def run(storage_url: str, instance, day: str, assets=(toy_original, toy_indexed)):
    resources = {"storage": StorageResource(url=storage_url)}
    resources["record_io_manager"] = RecordIOManager(storage=resources["storage"])
    return dg.materialize(list(assets), partition_key=key(day), instance=instance, resources=resources)


def test_multi_partition_key_joins_dimensions_alphabetically():
    assert str(key("2026-01-02")) == "2026-01-02|demo"
    assert record_partitions.partitions_defs[0].name == "date"


def test_materialize_writes_the_layout_exactly(tmp_path, instance):
    storage = LocalStorage(tmp_path / "s")
    result = run(str(tmp_path / "s"), instance, "2026-01-02")
    assert result.success
    harvest = layout.complete_outputs(storage, "demo", "harvest")
    indexing = layout.complete_outputs(storage, "demo", "indexing")
    assert len(harvest) == len(indexing) == 1
    h, i = harvest[0], indexing[0]
    assert h.folder.startswith("demo/harvest/20260102/") and h.folder.endswith("-demo-OriginalRecord.v1.avro")
    assert i.folder.startswith("demo/indexing/20260102/") and i.folder.endswith("-demo-MAP4_0.IndexRecord.v1.avro")
    assert sorted(storage.list_children(h.folder)) == ["_MANIFEST", "part-00000.avro"]
    assert sorted(storage.list_children(i.folder)) == ["_LOGS", "_MANIFEST", "part-00000.avro"]

    manifest = Manifest.from_bytes(storage.read_bytes(i.manifest))
    assert (manifest.activity, manifest.provider, manifest.record_count) == ("indexing", "demo", 5)
    assert manifest.partition == "2026-01-02|demo" and manifest.inputs == [h.folder]
    assert manifest.start_time == i.started and manifest.start_time.tzinfo is not None
    assert Manifest.from_bytes(storage.read_bytes(h.manifest)).extra == {"Summary mode": "incremental"}

    prov = json.loads(storage.read_bytes(i.prov))
    assert prov["generator"] == h.relative and prov["version"] == manifest.software_version
    assert json.loads(storage.read_bytes(h.prov))["generator"] is None

    plans = storage.list_children("demo/plan")
    assert len(plans) == 1  # one plan per run
    files = layout.plan_files(storage, "demo", layout.parse_timestamp(plans[0]))
    by_schema = {f.split("-", 2)[-1]: json.loads(storage.read_bytes(f)) for f in files}
    assert sorted(by_schema) == ["MAP4_0.IndexRecord.v1.json", "OriginalRecord.v1.json"]
    assert by_schema["OriginalRecord.v1.json"] == {"harvest": h.relative, "version": manifest.software_version}
    assert by_schema["MAP4_0.IndexRecord.v1.json"] == {
        "harvest": h.relative,
        "indexing": i.relative,
        "version": manifest.software_version,
    }

    with storage.open_read(f"{i.folder}/part-00000.avro") as handle:
        reader = fastavro.reader(handle)
        assert reader.codec == "snappy"  # Spark's Avro default
        assert "indexing of demo for 2026-01-02" in reader.writer_schema["doc"]
        assert manifest.software_version in reader.writer_schema["doc"]
        records = list(reader)
    assert [r["id"] for r in records] == [f"oai:demo:2026-01-02:{n}" for n in range(5)]
    assert [r["deleted"] for r in records] == [False] * 4 + [True]

    mat = result.asset_materializations_for_node("toy_indexed")[0].metadata
    assert mat["dagster/row_count"].value == 5
    assert mat["dagster/uri"].value == storage.uri(i.folder)
    assert mat["schema"].value == "MAP4_0.IndexRecord.v1" and mat["bytes"].value > 0


def test_backfill_three_dates_then_load_upstream_partition(tmp_path, instance):
    url = str(tmp_path / "s")
    for day in ("2026-01-01", "2026-01-02", "2026-01-03"):
        assert run(url, instance, day, assets=(toy_original,)).success
    # downstream alone loads the upstream partition of the same date from storage
    resources = {"storage": StorageResource(url=url)}
    resources["record_io_manager"] = RecordIOManager(storage=resources["storage"])
    result = dg.materialize([toy_indexed, toy_original.to_source_asset()], selection=[toy_indexed], partition_key=key("2026-01-02"),
                            instance=instance, resources=resources)
    assert result.success
    storage = LocalStorage(url)
    days = [o.day.isoformat() for o in layout.complete_outputs(storage, "demo", "harvest")]
    assert days == ["2026-01-01", "2026-01-02", "2026-01-03"]
    (indexed,) = layout.complete_outputs(storage, "demo", "indexing")
    records = list(RecordSource(storage, indexed))
    assert {r["id"].split(":")[2] for r in records} == {"2026-01-02"}
    materialized = instance.get_materialized_partitions(dg.AssetKey("toy_original"))
    assert {"2026-01-01|demo", "2026-01-02|demo", "2026-01-03|demo"} <= set(materialized)
    assert len(storage.list_children("demo/plan")) == 4  # three backfill runs and the downstream run: own plans


def test_a_backfill_range_is_one_run_with_an_output_plan_and_materialization_per_day(tmp_path, instance):
    """The shape the backfill daemon launches under BACKFILL: one run tagged with a partition range."""
    url = str(tmp_path / "s")
    resources = {"storage": StorageResource(url=url)}
    resources["record_io_manager"] = RecordIOManager(storage=resources["storage"])
    result = dg.materialize([toy_original, toy_indexed], instance=instance, resources=resources, tags={
        "dagster/asset_partition_range_start": "2026-01-01|demo", "dagster/asset_partition_range_end": "2026-01-03|demo",
    })
    assert result.success
    storage = LocalStorage(url)
    harvests = layout.complete_outputs(storage, "demo", "harvest")
    indexings = layout.complete_outputs(storage, "demo", "indexing")
    assert [o.day.isoformat() for o in harvests] == [o.day.isoformat() for o in indexings] == ["2026-01-01", "2026-01-02", "2026-01-03"]
    for indexing, harvest in zip(indexings, harvests):  # each day indexed from its own harvest
        assert Manifest.from_bytes(storage.read_bytes(indexing.manifest)).inputs == [harvest.folder]
        assert {r["id"].split(":")[2] for r in RecordSource(storage, indexing)} == {indexing.day.isoformat()}
    plans = storage.list_children("demo/plan")
    assert len(plans) == 3  # one plan per day, as three single-day runs would write
    for plan, harvest, indexing in zip(sorted(plans), harvests, indexings):
        entries = [json.loads(storage.read_bytes(f)) for f in layout.plan_files(storage, "demo", layout.parse_timestamp(plan))]
        assert {"harvest": harvest.relative, "indexing": indexing.relative, "version": entries[0]["version"]} in entries
    by_partition = {str(m.partition): m.metadata for m in result.asset_materializations_for_node("toy_indexed")}
    assert sorted(by_partition) == ["2026-01-01|demo", "2026-01-02|demo", "2026-01-03|demo"]
    for indexing in indexings:
        assert by_partition[f"{indexing.day.isoformat()}|demo"]["dagster/uri"].value == storage.uri(indexing.folder)
    assert len(instance.get_run_records()) == 1


def test_the_run_tag_names_are_the_pinned_dagsters():
    """The package spells Dagster's range and partition run tags itself (no public constant): held against the
    pinned release's own, so an upgrade that renames them fails here."""
    from dagster._core.storage import tags  # a test may read the private constants the package must not import

    from ingest_assets.defs.records.partitions import PARTITION_TAG_PREFIX, RANGE_END_TAG, RANGE_START_TAG

    assert (RANGE_START_TAG, RANGE_END_TAG, PARTITION_TAG_PREFIX) == (
        tags.ASSET_PARTITION_RANGE_START_TAG, tags.ASSET_PARTITION_RANGE_END_TAG, tags.MULTIDIMENSIONAL_PARTITION_PREFIX)


def test_a_range_run_tagged_as_its_first_day_is_refused(tmp_path, instance):
    """The tags Dagster 1.13's job backfill gives a range run (seen from a job page's "Launch backfill"):
    it would write the first day only and the backfill would report the range done."""
    resources = {"record_io_manager": RecordIOManager(storage=StorageResource(url=str(tmp_path / "s")))}
    result = dg.materialize([toy_original], instance=instance, resources=resources, raise_on_error=False, tags={
        "dagster/asset_partition_range_start": "2026-01-01|demo", "dagster/asset_partition_range_end": "2026-01-03|demo",
        "dagster/partition/date": "2026-01-01", "dagster/partition/provider": "demo",
    })
    assert not result.success
    message = str(result.failure_data_for_node("toy_original").error)
    assert "2026-01-01|demo...2026-01-03|demo" in message and "range_relaunch_sensor runs the whole range" in message
    assert layout.complete_outputs(LocalStorage(tmp_path / "s"), "demo", "harvest") == []


def test_failure_mid_write_leaves_no_output_and_rerun_succeeds(tmp_path, instance):
    FAIL_AFTER["n"] = 3
    try:
        result = dg.materialize(
            [toy_original],
            partition_key=key("2026-01-05"),
            instance=instance,
            resources={"record_io_manager": RecordIOManager(storage=StorageResource(url=str(tmp_path / "s")))},
            raise_on_error=False,
        )
    finally:
        FAIL_AFTER["n"] = None
    assert not result.success
    storage = LocalStorage(tmp_path / "s")
    assert layout.complete_outputs(storage, "demo", "harvest") == []
    assert [k for k in storage.list_keys("") if "/harvest/" in k] == []
    assert run(str(tmp_path / "s"), instance, "2026-01-05", assets=(toy_original,)).success
    assert len(layout.complete_outputs(storage, "demo", "harvest")) == 1


def test_missing_upstream_names_provider_and_asset(tmp_path, instance):
    resources = {"record_io_manager": RecordIOManager(storage=StorageResource(url=str(tmp_path / "s")))}
    result = dg.materialize([toy_indexed, toy_original.to_source_asset()], selection=[toy_indexed], partition_key=key("2026-01-07"),
                            instance=instance, resources=resources, raise_on_error=False)
    assert not result.success
    message = str(result.failure_data_for_node("toy_indexed").error.cause)
    assert "no complete harvest output for 2026-01-07" in message and "provider 'demo'" in message


def test_s3_backend_through_the_io_manager(s3_endpoint, instance):
    bucket = f"ingest-{uuid.uuid4().hex[:12]}"
    client = boto3.client("s3", endpoint_url=s3_endpoint)
    client.create_bucket(Bucket=bucket)
    import os

    os.environ["AWS_ENDPOINT_URL"] = s3_endpoint
    try:
        assert run(f"s3://{bucket}/hub", instance, "2026-01-02").success
    finally:
        del os.environ["AWS_ENDPOINT_URL"]
    storage = S3Storage(bucket, "hub", endpoint_url=s3_endpoint)
    (indexed,) = layout.complete_outputs(storage, "demo", "indexing")
    assert len(list(RecordSource(storage, indexed))) == 5
    keys = [o["Key"] for o in client.list_objects_v2(Bucket=bucket)["Contents"]]
    assert f"hub/{indexed.manifest}" in keys and f"hub/{indexed.prov}" in keys
    assert all(k.startswith("hub/demo/") for k in keys)


def test_a_rerun_within_one_plan_is_what_later_entries_cite(tmp_path):
    from datetime import date, datetime, timedelta, timezone

    from ingest_assets.storage.activities import PlanRef, write_activity

    storage = LocalStorage(tmp_path / "s")
    plan = PlanRef(datetime(2026, 1, 2, 8, tzinfo=timezone.utc))
    rows = list(_originals("demo", "2026-01-02", 2))
    written = []
    steps = ((0, "harvest"), (1, "mapping"), (2, "mapping"), (3, "enrichment"))  # mapping re-run in the plan
    for minutes, activity in steps:
        started = plan.started + timedelta(minutes=minutes)
        written.append(write_activity(storage, RecordStream(rows, started=started), provider="demo", activity=activity,
                                      day=date(2026, 1, 2), started=started, schema=ORIGINAL_RECORD, partition="x", plan=plan))
    last = json.loads(storage.read_bytes(written[-1].plan))
    assert last["mapping"] == written[2].output.relative and last["harvest"] == written[0].output.relative
    assert last["enrichment"] == written[3].output.relative


ATTEMPTS = {"n": 0}


def _failing(error):
    ATTEMPTS["n"] += 1
    raise error
    yield  # a generator, so the error surfaces while the IO manager writes


@pytest.mark.parametrize("error, attempts", [
    (FetchError("503 from the OAI server", status=503, provider="demo"), 3),
    (ConfigError("endpoint is not a URL", provider="demo"), 1),
    (ConnectionResetError("demo: connection reset by peer"), 3),  # another library's error: may be transient
    (TypeError("demo: unsupported format string passed to NoneType.__format__"), 1),  # a defect: never retried
])
def test_only_errors_a_retry_can_help_are_retried(tmp_path, instance, error, attempts):
    ATTEMPTS["n"] = 0

    @dg.asset(partitions_def=record_partitions, io_manager_key="record_io_manager",
              metadata=record_metadata("harvest", ORIGINAL_RECORD), retry_policy=dg.RetryPolicy(max_retries=2))
    def flaky_original() -> PartitionStreams:
        return PartitionStreams(lambda provider, day: RecordStream(_failing(error)))

    resources = {"record_io_manager": RecordIOManager(storage=StorageResource(url=str(tmp_path / "s")))}
    result = dg.materialize([flaky_original], partition_key=key("2026-01-08"), instance=instance,
                            resources=resources, raise_on_error=False)
    assert not result.success and ATTEMPTS["n"] == attempts
    assert "demo" in str(result.failure_data_for_node("flaky_original").error)


DIES_ON = {"day": None}


def _harvest_once(provider: str, day) -> RecordStream:
    """A harvest whose first attempt at DIES_ON's day fails (the provider went away), and gets through after."""
    if DIES_ON["day"] == day.isoformat():
        DIES_ON["day"] = None
        raise FetchError("503 from the OAI server", status=503, provider=provider)
    return RecordStream(_originals(provider, day.isoformat()), started=datetime.now(timezone.utc),
                        summary=lambda: {"mode": "incremental", "pages": 1})


@dg.asset(partitions_def=record_partitions, io_manager_key="record_io_manager", metadata=record_metadata("harvest", ORIGINAL_RECORD),
          backfill_policy=BACKFILL, retry_policy=dg.RetryPolicy(max_retries=1))
def retried_original(context: dg.AssetExecutionContext) -> PartitionStreams:
    return PartitionStreams(_harvest_once, retry=retried_step(context))


def test_a_retried_step_commits_what_its_failed_attempt_committed_and_makes_only_the_rest(tmp_path, instance):
    """A range run whose step commits its first day, then fails on the second and is retried: the retry commits the
    first day's output its failed attempt wrote (the same plan names it) and makes only the days not yet made, so each
    day has one output, as a run that never failed would leave."""
    url = str(tmp_path / "s")
    resources = {"record_io_manager": RecordIOManager(storage=StorageResource(url=url))}
    DIES_ON["day"] = "2026-01-02"
    result = dg.materialize([retried_original], instance=instance, resources=resources, tags={
        "dagster/asset_partition_range_start": "2026-01-01|demo", "dagster/asset_partition_range_end": "2026-01-03|demo",
    })
    assert result.success and DIES_ON["day"] is None  # the second day did fail once
    assert [e.step_key for e in result.all_events if e.event_type == dg.DagsterEventType.STEP_RESTARTED] == ["retried_original"]
    storage = LocalStorage(url)
    harvests = layout.complete_outputs(storage, "demo", "harvest")
    assert [o.day.isoformat() for o in harvests] == ["2026-01-01", "2026-01-02", "2026-01-03"]  # one each, not two of the first
    assert len(storage.list_children("demo/plan")) == 3
    by_partition = {str(m.partition): m.metadata for m in result.asset_materializations_for_node("retried_original")}
    first = by_partition["2026-01-01|demo"]
    assert first["dagster/uri"].value == storage.uri(harvests[0].folder) and first["dagster/row_count"].value == 5
    assert first["mode"].value == "incremental" and first["pages"].value == 1 and "bytes" not in first  # from its _MANIFEST
    assert by_partition["2026-01-02|demo"]["bytes"].value > 0  # made by the retry
    said = [e.message for e in instance.all_logs(result.run_id) if "not made again" in (e.message or "")]
    assert len(said) == 1 and "demo 2026-01-01" in said[0] and storage.uri(harvests[0].folder) in said[0]


def test_a_planned_output_is_committed_again_only_if_made_from_the_same_inputs_by_the_same_software(tmp_path):
    from datetime import timedelta

    from ingest_assets.storage.activities import PlanRef, planned_output, write_activity

    storage = LocalStorage(tmp_path / "s")
    day, plan = date(2026, 1, 2), PlanRef(datetime(2026, 1, 2, 8, tzinfo=timezone.utc))
    rows = list(_originals("demo", "2026-01-02", 2))

    def write(activity, minutes, inputs=(), version=None, summary=None):
        started = plan.started + timedelta(minutes=minutes)
        stream = RecordStream(rows, started=started, inputs=list(inputs), summary=summary and (lambda: summary))
        result = write_activity(storage, stream, provider="demo",
                                activity=activity, day=day, started=started, schema=ORIGINAL_RECORD, partition="x",
                                plan=plan, version=version)
        return RecordSource(storage, result.output)

    harvest = write("harvest", 0)
    assert planned_output(storage, "demo", "mapping", plan, [harvest]) is None  # the plan has no mapping yet
    summary = {"failed": 0, "rate": 0.25, "batch": "007", "note": "1_000"}  # text that only looks like a number stays text
    mapping = write("mapping", 1, [harvest], summary=summary)
    found = planned_output(storage, "demo", "mapping", plan, [harvest])
    assert found.output == mapping.output and found.records == 2 and found.parts == ["part-00000.avro"]
    assert found.summary == summary and found.bytes is None
    assert planned_output(storage, "demo", "mapping", PlanRef(plan.started, new=True), [harvest]) is None  # a new plan
    other = write("harvest", 2)  # a newer harvest: the plan's mapping was not made from it
    assert planned_output(storage, "demo", "mapping", plan, [other]) is None
    write("enrichment", 3, [mapping], version="0.0.1-older")
    assert planned_output(storage, "demo", "enrichment", plan, [mapping]) is None  # another software version made it
