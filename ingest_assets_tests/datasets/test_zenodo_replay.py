"""Zenodo record 7834392 as recorded (``replays/zenodo``: landing page, the records API answer, 24 files), replayed
whole on 127.0.0.1. Its "download all" archive is zipped from the recorded files, as Zenodo builds it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest_assets.core.http import HttpClient
from ingest_assets.core.sql import make_engine
from ingest_assets.datasets.ingest import IngestContext, ingest_request
from ingest_assets.datasets.model import IngestRequest
from ingest_assets.datasets.results import ResultStore
from ingest_assets.storage import LocalStorage
from ingest_assets_tests.support.replay import zip_of

RECORD = "/api/records/7834392"


@pytest.fixture
def zenodo(replay_source):
    replay = replay_source("zenodo")
    replay.file("/records/7834392", "landing.html", "text/html; charset=utf-8")
    replay.file(RECORD, "record.json", "application/json")
    files = sorted(path.name for path in (replay.folder / "files").iterdir())
    for name in files:
        replay.file(f"{RECORD}/files/{name}/content", f"files/{name}")
    replay.route(f"{RECORD}/files-archive", lambda: zip_of({n: replay.read(f"files/{n}") for n in files}),
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
