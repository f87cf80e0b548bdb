"""Dagster wiring: the requests sensor (build_sensor_context), the results asset and the submit CLI."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import dagster as dg
import pytest

from ingest_assets.datasets.cli import submit
from ingest_assets.defs.datasets.assets import dataset_ingest_results
from ingest_assets.defs.datasets.resources import DatasetIngestResource
from ingest_assets.defs.datasets.sensors import dataset_requests_sensor
from ingest_assets.defs.resources import SqlResource, StorageResource
from ingest_assets.errors import ValidationError
from ingest_assets.storage.layout import dataset_key


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
    resources = {
        "storage": StorageResource(url=str(tmp_storage.root)),
        "sql": SqlResource(url=f"sqlite:///{tmp_path / 'r.sqlite3'}"),
        "dataset_ingest": DatasetIngestResource(allow_private=True),
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
    from ingest_assets.datasets.cli import process
    from ingest_assets.settings import Settings

    monkeypatch.setenv("INGEST_HOME", str(tmp_path / "home"))
    requests_file = tmp_path / "r.jsonl"
    write_requests(requests_file, [{"base_url": "file:///etc/passwd"}, {"base_url": "http://127.0.0.1:9/data.zip"}])
    summary = process(requests_file, settings=Settings.from_env())
    assert summary["status"] == {"fetch-refused": 1, "invalid-request": 1}
    assert summary["results"].startswith("_datasets-results/")
