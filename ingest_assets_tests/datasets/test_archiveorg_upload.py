"""The archive.org upload through the ``internetarchive`` library, checked at the HTTP boundary.

A requests transport adapter mounted on the library's session stands in for archive.org: it records each
request and answers like IA does (``{}`` for the metadata of an item that does not exist yet, 200 on PUT).
"""

from __future__ import annotations

import hashlib
import io
import json
import os

import requests
from internetarchive import get_session

from ingest_assets.datasets.deposit import ArchiveOrgUploader
from ingest_assets.datasets.ingest import ingest_request
from ingest_assets.datasets.model import IngestRequest
from ingest_assets.datasets.strategy import Thresholds


class FakeArchiveOrg(requests.adapters.BaseAdapter):
    def __init__(self, put_status: int = 200):
        super().__init__()
        self.requests: list[requests.PreparedRequest] = []
        self.bodies: list[bytes] = []
        self.put_status = put_status

    def send(self, request, **kwargs):
        self.requests.append(request)
        body = request.body
        self.bodies.append(body.read() if hasattr(body, "read") else (body or b""))
        response = requests.Response()
        response.request, response.url = request, request.url
        if request.method == "GET" and "/metadata/" in request.url:
            response.status_code, response._content = 200, b"{}"
        elif request.method == "PUT":
            response.status_code, response._content = self.put_status, b""
        else:
            response.status_code, response._content = 404, b""
        response.raw = io.BytesIO(response._content)
        return response

    def close(self):
        pass


def uploader_with(fake: FakeArchiveOrg) -> ArchiveOrgUploader:
    session = get_session(config={"s3": {"access": "test-access", "secret": "test-secret"}})
    for prefix in ("https://archive.org", "https://s3.us.archive.org"):
        session.mount(prefix, fake)
    return ArchiveOrgUploader("test-access", "test-secret", session=session)


def test_archiveorg_strategy_writes_item_folder_and_uploads(platform, make_ctx, tmp_storage):
    data = os.urandom(5000)
    platform.route("/files/big.bin", data, content_type="application/octet-stream")
    fake = FakeArchiveOrg()
    ctx = make_ctx(thresholds=Thresholds(web_max_file_size=4096), uploader=uploader_with(fake))
    result = ingest_request(IngestRequest(base_url=f"{platform.base}/files/big.bin"), ctx)

    assert (result.status, result.ingest_strategy) == ("success-file", "archiveorg-file"), result.error_message
    puts = [r for r in fake.requests if r.method == "PUT"]
    assert [r.url for r in puts] == [f"https://s3.us.archive.org/{result.item_name}/big.bin"]
    headers = puts[0].headers
    assert headers["authorization"] == "LOW test-access:test-secret"
    assert headers["Content-MD5"] == hashlib.md5(data).hexdigest()
    assert headers["x-archive-meta00-mediatype"] == "data" and headers["x-archive-meta00-collection"] == "datasets"
    assert headers["x-archive-queue-derive"] == "0" and headers["x-archive-auto-make-bucket"] == "1"
    assert fake.bodies[-1] == data
    folder = tmp_storage.list_children("_datasets-items")[0]
    day_keys = list(tmp_storage.list_keys(f"_datasets-items/{folder}"))
    manifest = json.loads(tmp_storage.read_bytes(next(k for k in day_keys if k.endswith("_MANIFEST"))))
    assert manifest["identifier"] == result.item_name and manifest["files"][0]["size"] == 5000


def test_refused_upload_is_retryable_upload_error(platform, make_ctx):
    platform.route("/files/big.bin", os.urandom(5000), content_type="application/octet-stream")
    ctx = make_ctx(thresholds=Thresholds(web_max_file_size=4096), uploader=uploader_with(FakeArchiveOrg(403)))
    result = ingest_request(IngestRequest(base_url=f"{platform.base}/files/big.bin"), ctx)
    assert result.status == "upload-error" and "403" in result.error_message
