"""Dagster wiring: the requests sensor (build_sensor_context), the results asset and the submit CLI."""

from __future__ import annotations

import gzip
import json
from datetime import datetime, timedelta, timezone

import dagster as dg
import pytest

from ingest_assets.cli.datasets import submit
from ingest_assets.defs.datasets.assets import dataset_ingest_results
from ingest_assets.defs.datasets.resources import DatasetIngestResource
from ingest_assets.defs.datasets.sensors import dataset_requests_sensor
from ingest_assets.defs.resources import RegistryResource, SqlResource, StorageResource
from ingest_assets.defs.resourcesync.resources import ResourceSyncResource
from ingest_assets.core.errors import ValidationError
from ingest_assets.core.registry import Registry
from ingest_assets.storage.layout import dataset_key
from ingest_assets_tests.support.resync import Mirror, tree


def write_requests(path, rows) -> None:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))


def test_submit_then_sensor_yields_one_run_per_new_file(tmp_path, tmp_storage):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_requests(first, [{"ingest_type": "dataset", "base_url": "https://zenodo.org/records/1"}, "{broken"])
    write_requests(second, [{"base_url": "https://zenodo.org/records/2"}])
    submitted = submit(first, storage=tmp_storage)
    assert (submitted["valid"], submitted["invalid"]) == (1, 1)
    assert submitted["key"].startswith("_datasets-requests/") and tmp_storage.exists(submitted["key"])

    storage = StorageResource(url=str(tmp_storage.root))
    with dg.build_sensor_context(resources={"storage": storage}) as context:
        runs = dataset_requests_sensor(context)
        assert [r.run_key for r in runs] == [submitted["key"]]
        assert runs[0].run_config["ops"]["dataset_ingest_results"]["config"]["requests_key"] == submitted["key"]
        cursor = context.cursor
    with dg.build_sensor_context(resources={"storage": storage}, cursor=cursor) as context:
        assert isinstance(dataset_requests_sensor(context), dg.SkipReason)  # nothing new
    later = submit(second, storage=tmp_storage)
    # a file stamped a minute earlier that only shows up now (a slow upload) is not skipped
    slow = dataset_key("requests", "slow-upload.jsonl", datetime.now(timezone.utc) - timedelta(minutes=1))
    tmp_storage.write_bytes(slow, b'{"base_url": "https://zenodo.org/records/3"}\n')
    with dg.build_sensor_context(resources={"storage": storage}, cursor=cursor) as context:
        assert sorted(r.run_key for r in dataset_requests_sensor(context)) == sorted([later["key"], slow])
        cursor = context.cursor
    with dg.build_sensor_context(resources={"storage": storage}, cursor=cursor) as context:
        assert isinstance(dataset_requests_sensor(context), dg.SkipReason)


def test_submit_refuses_a_file_without_any_valid_request(tmp_path, tmp_storage):
    bad = tmp_path / "bad.jsonl"
    write_requests(bad, ["{broken", {"ingest_type": "pdf", "base_url": "https://x"}])
    with pytest.raises(ValidationError, match="no valid dataset request") as caught:
        submit(bad, storage=tmp_storage)
    assert "bad.jsonl" in str(caught.value)
    assert list(tmp_storage.list_keys("_datasets-requests")) == []


def test_asset_materializes_results_and_metadata(tmp_path, tmp_storage, platform):
    platform.route("/files/a.csv", b"x,y\n", content_type="text/csv")
    requests_file = tmp_path / "batch.jsonl"
    write_requests(requests_file, [
        {"ingest_type": "dataset", "base_url": f"{platform.base}/files/a.csv"},
        {"ingest_type": "dataset", "base_url": f"{platform.base}/missing.csv"},
        "not json",
    ])  # fmt: skip
    key = submit(requests_file, storage=tmp_storage)["key"]
    sql = SqlResource(url=f"sqlite:///{tmp_path / 'r.sqlite3'}")
    (tmp_path / "registry.yaml").write_text("{}\n")
    resources = {
        "storage": StorageResource(url=str(tmp_storage.root)),
        "sql": sql,
        "registry": RegistryResource(path=str(tmp_path / "registry.yaml")),
        "dataset_ingest": DatasetIngestResource(allow_private=True),
        "resourcesync": ResourceSyncResource(search=str(tmp_path / "search"), sql=sql, base_url="http://127.0.0.1:8080"),
    }
    result = dg.materialize(
        [dataset_ingest_results],
        resources=resources,
        run_config={"ops": {"dataset_ingest_results": {"config": {"requests_key": key}}}},
    )
    assert result.success
    metadata = result.asset_materializations_for_node("dataset_ingest_results")[0].metadata
    assert metadata["requests"].value == 3 and metadata["hits"].value == 1
    assert metadata["status/success-file"].value == 1 and metadata["status/terminal-bad-status"].value == 1
    assert metadata["status/invalid-request"].value == 1 and metadata["platform/direct"].value == 1
    lines = tmp_storage.read_bytes(metadata["results_key"].value).decode().splitlines()
    assert [json.loads(line)["status"] for line in lines] == ["success-file", "terminal-bad-status", "invalid-request"]


def test_process_refuses_non_http_and_private_urls(tmp_path, monkeypatch):
    """The CLI's immediate mode uses the production HttpClient: no file:// and no private addresses."""
    from ingest_assets.cli.datasets import process
    from ingest_assets.core.settings import Settings

    monkeypatch.setenv("INGEST_HOME", str(tmp_path / "home"))
    requests_file = tmp_path / "r.jsonl"
    write_requests(requests_file, [{"base_url": "file:///etc/passwd"}, {"base_url": "http://127.0.0.1:9/data.zip"}])
    summary = process(requests_file, settings=Settings.from_env())
    assert summary["status"] == {"blocked-by-config": 1, "invalid-request": 1}  # the private one: not final
    assert summary["results"].startswith("_datasets-results/")


def test_stored_dataset_files_reach_a_resync_destination(tmp_path, tmp_storage, platform, http_server):
    """A WARC (web-file) and an item folder's file (archiveorg-file) are published through the change feed;
    re-storing them (force_recrawl) arrives as updates, an item file re-stored with the same bytes as nothing."""
    platform.route("/files/small.csv", b"x,y\n1,2\n", content_type="text/csv")
    platform.route("/files/large.csv", b"a,b\n" + b"3,4\n" * 64, content_type="text/csv")
    mirror = Mirror(http_server, tmp_path / "client", "dataset-files")
    sql = SqlResource(url=f"sqlite:///{tmp_path / 'r.sqlite3'}")
    resourcesync = ResourceSyncResource(search=str(tmp_path / "search"), sql=sql, base_url=mirror.base)
    (tmp_path / "registry.yaml").write_text("{}\n")
    resources = {
        "storage": StorageResource(url=str(tmp_storage.root)),
        "sql": sql,
        "registry": RegistryResource(path=str(tmp_path / "registry.yaml")),
        "dataset_ingest": DatasetIngestResource(allow_private=True, web_max_file_size=100),  # large.csv -> item
        "resourcesync": resourcesync,
    }
    sets = resourcesync.sets(Registry({}))
    area = tmp_storage.root / "_resourcesync" / "dataset-files" / "resources"

    def ingest(name: str, **request) -> dict:
        requests_file = tmp_path / name
        write_requests(requests_file, [
            {"ingest_type": "dataset", "base_url": f"{platform.base}/files/small.csv", **request},
            {"ingest_type": "dataset", "base_url": f"{platform.base}/files/large.csv", **request},
        ])  # fmt: skip
        key = submit(requests_file, storage=tmp_storage)["key"]
        config = {"ops": {"dataset_ingest_results": {"config": {"requests_key": key}}}}
        result = dg.materialize([dataset_ingest_results], resources=resources, run_config=config)
        metadata = result.asset_materializations_for_node("dataset_ingest_results")[0].metadata
        assert metadata["status/success-file"].value == 2
        return metadata["change_feed"].value

    assert ingest("first.jsonl") == {"created": 2, "updated": 0, "deleted": 0, "unchanged": 0}
    [warc] = (area / "web").iterdir()
    [item] = (area / "items").iterdir()
    assert warc.name.endswith(".warc.gz") and b"x,y\n1,2\n" in gzip.decompress(warc.read_bytes())
    assert (item / "large.csv").read_bytes() == b"a,b\n" + b"3,4\n" * 64
    [stored_warc] = tmp_storage.root.glob("_datasets-web/*/*.warc.gz")
    assert stored_warc.read_bytes() == warc.read_bytes()  # the WARC stored, as published
    [baseline] = mirror.sync(resourcesync.get_client(), tmp_storage, sets)
    assert "created=2" in baseline and tree(mirror.folder) == tree(area)

    platform.route("/files/small.csv", b"x,y\n1,2\n5,6\n", content_type="text/csv")
    assert ingest("again.jsonl", force_recrawl=True) == {"created": 0, "updated": 1, "deleted": 0, "unchanged": 1}
    platform.route("/files/large.csv", b"a,b\n" + b"7,8\n" * 64, content_type="text/csv")
    assert ingest("third.jsonl", force_recrawl=True) == {"created": 0, "updated": 2, "deleted": 0, "unchanged": 0}
    outputs = mirror.sync(resourcesync.get_client(), tmp_storage, sets)
    assert any("updated=2" in output for output in outputs), outputs
    assert tree(mirror.folder) == tree(area)
    assert (mirror.folder / "items" / item.name / "large.csv").read_bytes() == b"a,b\n" + b"7,8\n" * 64
    assert b"5,6" in gzip.decompress((mirror.folder / "web" / warc.name).read_bytes())
