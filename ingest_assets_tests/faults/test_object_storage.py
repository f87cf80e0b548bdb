"""Object storage faults: moto's S3 server behind a fault-injecting proxy answering 503 SlowDown / 500 to a share of
requests, resetting the connection in the middle of an upload, losing the answer to a conditional PUT and stalling a
read mid-body. A record activity write either completes with exact outputs (botocore's jittered back-off, bounded
at 5 retries a request; a broken read resumed by a ranged GET) or fails with a typed StorageError naming the
object and leaves nothing visible; never a _MANIFEST over missing parts."""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from datetime import date, datetime, timezone

import pytest

from ingest_assets.core.errors import StorageError
from ingest_assets.storage import layout
from ingest_assets.storage.activities import PlanRef, RecordSource, RecordStream, write_activity
from ingest_assets.storage.avro import ORIGINAL_RECORD, read_folder, write_parts
from ingest_assets.storage.backends import S3Storage
from ingest_assets.storage.manifest import Manifest
from ingest_assets_tests.support.faults import Fault, every, s3_error

DAY = date(2026, 1, 15)
PART_RECORDS = 2500  # ~7.5 MB a part: three parts, the first two above s3transfer's 8 MB multipart threshold once framed
RECORDS = 6000


def _records(count: int = RECORDS):
    """Incompressible documents (hashes), so parts are as large on the wire as the records are."""
    for n in range(count):
        yield {"id": f"r{n:05d}", "ingestDate": 0, "provider": "demo", "mimetype": "application_xml", "deleted": False,
               "document": "".join(hashlib.sha256(f"{n}/{k}".encode()).hexdigest() for k in range(48))}


def _write(storage: S3Storage, hour: int = 8):
    started = datetime(2026, 1, 15, hour, tzinfo=timezone.utc)
    stream = RecordStream(_records(), started=started,
                          write=lambda folder, schema: write_parts(folder, schema, _records(), part_records=PART_RECORDS))
    return write_activity(storage, stream, provider="demo", activity="harvest", day=DAY, started=started,
                          schema=ORIGINAL_RECORD, partition="2026-01-15|demo", plan=PlanRef(started))


def _assert_whole(storage: S3Storage) -> list[layout.ActivityOutput]:
    """Every folder with a _MANIFEST holds the parts and records the manifest says, with its prov and plan entry."""
    outputs = layout.complete_outputs(storage, "demo", "harvest")
    plans = [storage.read_bytes(k).decode() for k in storage.list_keys("demo/plan")]
    for output in outputs:
        manifest = Manifest.from_bytes(storage.read_bytes(output.manifest))
        assert sum(1 for _ in read_folder(storage, output.folder)) == manifest.record_count
        assert storage.exists(output.prov) and any(output.relative in plan for plan in plans)
    return outputs


def _max_attempts(proxy) -> int:
    """The most times one request (method and path) was sent in a row: botocore's bound is 6 (the request and 5 retries)."""
    longest, run, last = 0, 0, None
    for seen in proxy.log:
        run = run + 1 if (seen.method, seen.path) == last else 1
        last = (seen.method, seen.path)
        longest = max(longest, run)
    return longest


def test_a_share_of_503_slowdown_and_500_is_retried_to_exact_outputs(s3_endpoint, s3_bucket, fault_proxy, figures):
    errors = [s3_error(503, "SlowDown", "Please reduce your request rate."),
              s3_error(500, "InternalError", "We encountered an internal error.")]
    faulty = every(3, errors[0])
    proxy = fault_proxy(s3_endpoint, lambda n, *rest: faulty(n, *rest) and errors[n % 2])
    storage = S3Storage(s3_bucket, "hub", endpoint_url=proxy.url)
    began = time.monotonic()
    result = _write(storage)
    took = time.monotonic() - began
    assert result.records == RECORDS and len(result.parts) == 3
    assert [r["id"] for r in RecordSource(storage, result.output)] == [f"r{n:05d}" for n in range(RECORDS)]  # read through the faults too
    clean = S3Storage(s3_bucket, "hub", endpoint_url=s3_endpoint)
    assert _assert_whole(clean) == [result.output]
    injected = Counter(seen.status for seen in proxy.faults())
    assert injected[503] and injected[500] and _max_attempts(proxy) <= 6
    figures(requests=len(proxy.log), faults_503=injected[503], faults_500=injected[500], max_attempts=_max_attempts(proxy),
            write_seconds=round(took, 1))


def test_a_connection_reset_in_the_middle_of_an_upload_is_retried_to_an_exact_output(s3_endpoint, s3_bucket, fault_proxy, figures):
    big = lambda method, path: method == "PUT" and "part-" in path  # noqa: E731 - the multipart parts' uploads
    proxy = fault_proxy(s3_endpoint, every(2, Fault("reset_request"), methods=("PUT",), when=big))
    storage = S3Storage(s3_bucket, "hub", endpoint_url=proxy.url)
    result = _write(storage)
    clean = S3Storage(s3_bucket, "hub", endpoint_url=s3_endpoint)
    assert _assert_whole(clean) == [result.output] and result.records == RECORDS
    resets = proxy.faults("reset_request")
    assert len(resets) >= 2 and _max_attempts(proxy) <= 6
    figures(uploads=sum(1 for s in proxy.log if big(s.method, s.path)), resets_mid_body=len(resets))


def test_a_lost_answer_to_a_write_once_put_is_that_writes_success(s3_endpoint, s3_bucket, fault_proxy):
    """S3 acts on the prov and plan PUTs (If-None-Match: *) and the answers are lost: botocore's retry meets its own
    object (412) and the write is taken for what it is, a success, not another writer's file."""
    once = {}

    def rule(number, method, path, headers):
        if method == "PUT" and path.endswith(".json") and path not in once:
            once[path] = number
            return Fault("lose_response")
        return None

    proxy = fault_proxy(s3_endpoint, rule)
    result = _write(S3Storage(s3_bucket, "hub", endpoint_url=proxy.url))
    assert len(once) == 2  # the prov file and the plan entry
    assert [s.status for s in proxy.log if s.method == "PUT" and s.path.endswith(".json")] == [200, 412, 200, 412]
    assert _assert_whole(S3Storage(s3_bucket, "hub", endpoint_url=s3_endpoint)) == [result.output]


def test_a_read_that_stalls_resumes_from_where_it_stopped(s3_endpoint, s3_bucket, fault_proxy, figures):
    written = _write(S3Storage(s3_bucket, "hub", endpoint_url=s3_endpoint))
    stall = every(1000, Fault("stall", seconds=60), methods=("GET",), when=lambda method, path: "part-00001" in path)
    proxy = fault_proxy(s3_endpoint, stall)
    slow = S3Storage(s3_bucket, "hub", endpoint_url=proxy.url, read_timeout=2)
    began = time.monotonic()
    ids = [r["id"] for r in RecordSource(slow, written.output)]
    took = time.monotonic() - began
    assert ids == [f"r{n:05d}" for n in range(RECORDS)]
    gets = [s for s in proxy.log if s.method == "GET" and "part-00001" in s.path]
    assert [s.fault for s in gets] == ["stall", None] and [s.status for s in gets] == [200, 206]  # resumed by a ranged GET
    figures(read_seconds=round(took, 1), read_timeout_seconds=2, resumed_gets=1)


def test_an_outage_before_the_marker_is_a_typed_error_and_leaves_nothing_visible(s3_endpoint, s3_bucket, fault_proxy, figures):
    """S3 goes down after the parts are uploaded (every _MANIFEST PUT answered 503): the write fails with a StorageError
    naming the object, after botocore's bound, and the parts are taken back."""
    down = s3_error(503, "SlowDown", "Please reduce your request rate.")
    proxy = fault_proxy(s3_endpoint, every(1, down, when=lambda method, path: method == "PUT" and path.endswith("/_MANIFEST")))
    began = time.monotonic()
    with pytest.raises(StorageError) as caught:
        _write(S3Storage(s3_bucket, "hub", endpoint_url=proxy.url))
    took = time.monotonic() - began
    error = caught.value
    assert error.retryable and error.file.startswith(f"s3://{s3_bucket}/hub/demo/harvest/20260115/20260115_080000-demo-")
    assert "503" in str(error) or "SlowDown" in str(error)
    assert _max_attempts(proxy) == 6  # botocore gave up after its bound (the request and 5 retries), not before, not never
    clean = S3Storage(s3_bucket, "hub", endpoint_url=s3_endpoint)
    assert list(clean.list_keys("")) == []  # the uploaded parts taken back: no folder, prov or plan
    figures(requests=len(proxy.log), manifest_attempts=len(proxy.faults()), seconds_to_give_up=round(took, 1))

