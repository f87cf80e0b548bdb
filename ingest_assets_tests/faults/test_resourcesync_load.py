"""The ResourceSync server under load: a Resource List of many resources (an index over sitemaps of 50,000) served
by ``ResourceSyncApp`` in its own process to many concurrent ``wrk`` clients (Debian's wrk, on 127.0.0.1): no error,
every document byte-exact afterwards; throughput and p50/p99 latency are figures, not assertions.

CI size: 100,000 resources, 50 clients for 10 s. The issue's full size (1,000,000 resources, 200 clients, 30 s):
``INGEST_FAULTS_FULL=1 uv run pytest ingest_assets_tests/faults/test_resourcesync_load.py``."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import requests

from ingest_assets.resourcesync.documents import resource_entries, write_resource_list
from ingest_assets.resourcesync.model import ResourceSet
from ingest_assets.storage import LocalStorage
from ingest_assets.storage.layout import resourcesync_key
from ingest_assets_tests.support import free_port, require, stop_group, wait_for

SERVER = """
import sys
from ingest_assets.resourcesync.model import ResourceSet
from ingest_assets.resourcesync.server import ResourceSyncApp, make_app_server
from ingest_assets.storage import LocalStorage
server = make_app_server(ResourceSyncApp(LocalStorage(sys.argv[1]), [ResourceSet("set1", sys.argv[2])]), "127.0.0.1",
                         int(sys.argv[3]), quiet=True)
server.serve_forever()
"""

# wrk: each connection walks the index and the sitemaps in turn; the summary is one JSON line
SCRIPT = """
paths = {%s}
counter = 0
request = function()
  counter = counter + 1
  return wrk.format("GET", paths[(counter %% #paths) + 1])
end
done = function(summary, latency, requests)
  io.write(string.format('{"requests": %%d, "bytes": %%d, "seconds": %%.3f, "connect": %%d, "read": %%d, "write": %%d, '
    .. '"timeout": %%d, "status": %%d, "p50_ms": %%.1f, "p99_ms": %%.1f, "max_ms": %%.1f}\\n',
    summary.requests, summary.bytes, summary.duration / 1e6, summary.errors.connect, summary.errors.read,
    summary.errors.write, summary.errors.timeout, summary.errors.status, latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000))
end
"""


def _publish(storage: LocalStorage, prefix: str, count: int) -> list[str]:
    """A Resource List of ``count`` synthetic resources as the publisher lays it out; returns the documents' names."""
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    docs = ({"location": {"type": "rel_path", "value": f"data/{i // 1000:04d}/item-{i:07d}.xml"}, "length": 1000 + i % 1000,
             "md5": f"{i:032x}", "sha256": None, "mime": "application/xml", "ln": [],
             "lastmod": (start + timedelta(minutes=i // 1000)).strftime("%Y-%m-%dT%H:%M:%S.000Z")} for i in range(count))
    folder = storage.root / resourcesync_key("set1")
    folder.mkdir(parents=True)
    stamp = "2026-11-26T00:00:00Z"
    total, parts = write_resource_list(lambda name: open(folder / name, "wb"), resource_entries(ResourceSet("set1", prefix), docs),
                                       up=f"{prefix}capabilitylist.xml", index_url=f"{prefix}resourcelist.xml",
                                       part_url=lambda k: f"{prefix}resourcelist-{k:05d}.xml", at=stamp, now=lambda: stamp)
    assert total == count
    return sorted(p.name for p in folder.iterdir())


def test_a_large_resource_list_is_served_to_many_concurrent_clients_without_an_error(tmp_path, full_size, figures):
    wrk = shutil.which("wrk")
    require(wrk is not None, "wrk not installed (.ci/run installs Debian's wrk)")
    resources, clients, seconds = (1_000_000, 200, 30) if full_size else (100_000, 50, 10)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    storage = LocalStorage(tmp_path / "storage")
    names = _publish(storage, f"{base}/set1/", resources)
    assert len(names) == 1 + -(-resources // 50_000)  # the index and its sitemaps
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(storage.root), f"{base}/set1/", str(port)], start_new_session=True)
    try:
        wait_for("the ResourceSync server to answer", lambda: _answers(f"{base}/set1/resourcelist.xml"), 60)
        script = tmp_path / "walk.lua"
        script.write_text(SCRIPT % ", ".join(f'"/set1/{name}"' for name in names))
        run = subprocess.run([wrk, "-t", "2", "-c", str(clients), "-d", f"{seconds}s", "--timeout", "60s", "-s", str(script), base],
                             capture_output=True, text=True, timeout=seconds + 120)
        assert run.returncode == 0, run.stderr
        found = re.search(r"^\{.*\}$", run.stdout, re.M)
        assert found, run.stdout
        summary = json.loads(found.group(0))
        errors = {k: summary[k] for k in ("connect", "read", "write", "timeout", "status")}
        assert summary["requests"] > 0 and errors == dict.fromkeys(errors, 0), (errors, run.stdout)
        for name in names:  # still byte-exact after the load
            assert requests.get(f"{base}/set1/{name}", timeout=60).content == storage.read_bytes(resourcesync_key("set1", name))
    finally:
        stop_group(server, timeout=10)
    figures(resources=resources, clients=clients, seconds=seconds, requests=summary["requests"],
            requests_per_s=round(summary["requests"] / summary["seconds"], 1),
            mb_per_s=round(summary["bytes"] / summary["seconds"] / 1e6, 1), p50_ms=summary["p50_ms"], p99_ms=summary["p99_ms"],
            errors=sum(errors.values()))


def _answers(url: str) -> bool:
    try:
        return requests.get(url, timeout=5).ok
    except requests.ConnectionError:
        return False
