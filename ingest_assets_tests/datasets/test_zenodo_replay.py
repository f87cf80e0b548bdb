"""Zenodo record 7834392 as recorded (``replays/zenodo``: landing page, the records API answer, 24 files), replayed
whole on 127.0.0.1 (a private address: reaching it is a matter of configuration). Its "download all" archive is
zipped from the recorded files, as Zenodo builds it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ingest_assets.cli.datasets import process
from ingest_assets.core.http import HttpClient
from ingest_assets.core.settings import Settings
from ingest_assets.core.sql import make_engine
from ingest_assets.datasets.ingest import IngestContext, ingest_request
from ingest_assets.datasets.model import IngestRequest
from ingest_assets.datasets.results import ResultStore
from ingest_assets.storage import LocalStorage
from ingest_assets_tests.support import zip_bytes

RECORD = "/api/records/7834392"
CLI = str(Path(sys.executable).parent / "ingest-assets")


@pytest.fixture
def zenodo(replay_source):
    replay = replay_source("zenodo")
    replay.file("/records/7834392", "landing.html", "text/html; charset=utf-8")
    replay.file(RECORD, "record.json", "application/json")
    files = sorted(path.name for path in (replay.folder / "files").iterdir())
    for name in files:
        replay.file(f"{RECORD}/files/{name}/content", f"files/{name}")
    replay.route(f"{RECORD}/files-archive", lambda: zip_bytes([(n, replay.read(f"files/{n}"), 0o100644) for n in files]),
                 "application/zip")
    return replay


def context(replay, tmp_path: Path) -> IngestContext:
    return IngestContext(
        client=HttpClient(allow_private=True, retries=0, timeout=(2, 10)), storage=LocalStorage(tmp_path / "storage"),
        store=ResultStore(make_engine(f"sqlite:///{tmp_path / 'results.sqlite3'}")),
        hosts={"zenodo": (replay.base.split("://", 1)[1],)}, workdir=tmp_path,
    )


def test_each_member_of_a_download_all_zip_has_its_own_media_type(zenodo, tmp_path):
    result = ingest_request(IngestRequest(base_url=f"{zenodo.base}/records/7834392"), context(zenodo, tmp_path))
    assert (result.status, result.ingest_strategy, result.file_count) == ("success", "web-fileset-bundled", 24)
    types = {f["path"]: f["mimetype"] for f in result.manifest}
    assert types["frequent_terms.csv"] == "text/csv"  # by name
    assert types["full_dataset-statistics.tsv"] == "text/tab-separated-values"
    assert types["emojis.zip"] == "application/zip"  # a zip inside the zip is one
    assert types["full_dataset.tsv.gz.part-aa"] == "application/gzip"  # by its first bytes
    assert types["full_dataset.tsv.gz.part-ab"] == "application/octet-stream"  # the middle of a gzip stream
    assert sum(t == "application/zip" for t in types.values()) == 3


def test_a_platform_on_a_private_host_is_reached_once_configured_and_the_refusal_was_not_final(zenodo, tmp_path):
    """The replayed Zenodo runs on 127.0.0.1, a host no default configuration reaches: refused as
    blocked-by-config, then processed again, not answered from the results table, once the registry names it."""
    requests_file = tmp_path / "requests.jsonl"
    requests_file.write_text(json.dumps({"ingest_type": "dataset", "base_url": f"{zenodo.base}/records/7834392"}) + "\n")
    registry = tmp_path / "registry.yaml"
    registry.write_text("{}\n")
    settings = Settings.from_env({"INGEST_HOME": str(tmp_path / "home"), "INGEST_REGISTRY": str(registry)})
    assert process(requests_file, settings=settings)["status"] == {"blocked-by-config": 1}
    netloc = zenodo.base.split("://", 1)[1]
    registry.write_text(f"ourzenodo: {{datasets: {{platform: zenodo, hosts: ['{netloc}'], allow_private: true}}}}\n")
    assert process(requests_file, settings=settings)["status"] == {"success": 1}


def test_the_process_command_takes_private_hosts_and_platform_hosts(zenodo, tmp_path):
    requests_file = tmp_path / "requests.jsonl"
    requests_file.write_text(json.dumps({"ingest_type": "dataset", "base_url": f"{zenodo.base}/records/7834392"}) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("INGEST_")}
    env.update(INGEST_HOME=str(tmp_path / "home"), INGEST_REGISTRY=str(tmp_path / "none.yaml"))
    netloc = zenodo.base.split("://", 1)[1]
    done = subprocess.run([CLI, "datasets", "process", str(requests_file), "--allow-private", "--host", f"zenodo={netloc}"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == {"success": 1}
