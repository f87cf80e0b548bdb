"""The ResourceSync server under load: a Resource List of N resources served to many concurrent clients.

    uv run python benchmarks/resourcesync_serving.py [--resources 1000000] [--clients 200] [--seconds 30]

The Resource List (an index over sitemaps of 50,000 URLs) is written as the publisher writes it, then served by
``ResourceSyncApp`` on ``core.wsgi.WsgiServer`` (what ``ingest-assets serve-resourcesync`` runs) in a process of its
own, to Debian's ``wrk`` (2 threads, ``--clients`` connections; each connection walks the index and every sitemap
in turn). Printed: requests, errors by kind (the run fails on any), throughput, p50/p99/max latency, the server's
peak RSS; afterwards every document is fetched once more and compared byte for byte with what was published.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import requests

from ingest_assets.resourcesync.documents import resource_entries, write_resource_list
from ingest_assets.resourcesync.model import ResourceSet
from ingest_assets.storage import LocalStorage
from ingest_assets.storage.layout import resourcesync_key

SERVER = """
import sys
from ingest_assets.core.wsgi import WsgiServer
from ingest_assets.resourcesync.model import ResourceSet
from ingest_assets.resourcesync.server import ResourceSyncApp
from ingest_assets.storage import LocalStorage
server = WsgiServer("127.0.0.1", 0)
print(server.port, flush=True)
server.run(ResourceSyncApp(LocalStorage(sys.argv[1]), [ResourceSet("set1", f"{server.url}/set1/")]))
"""

# each connection walks the index and the sitemaps in turn; the summary is one JSON line
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


def publish(storage: LocalStorage, prefix: str, count: int) -> list[str]:
    """A Resource List of ``count`` synthetic resources laid out as the publisher lays it out; the documents' names."""
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    docs = ({"location": {"type": "rel_path", "value": f"data/{i // 1000:04d}/item-{i:07d}.xml"}, "length": 1000 + i % 1000,
             "md5": f"{i:032x}", "sha256": None, "mime": "application/xml", "ln": [],
             "lastmod": (start + timedelta(minutes=i // 1000)).strftime("%Y-%m-%dT%H:%M:%S.000Z")} for i in range(count))
    folder = storage.root / resourcesync_key("set1")
    folder.mkdir(parents=True)
    stamp = "2026-11-26T00:00:00Z"
    total, _ = write_resource_list(lambda name: open(folder / name, "wb"), resource_entries(ResourceSet("set1", prefix), docs),
                                   up=f"{prefix}capabilitylist.xml", index_url=f"{prefix}resourcelist.xml",
                                   part_url=lambda k: f"{prefix}resourcelist-{k:05d}.xml", at=stamp, now=lambda: stamp)
    assert total == count
    return sorted(p.name for p in folder.iterdir())


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resources", type=int, default=1_000_000)
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--seconds", type=int, default=30)
    args = parser.parse_args()
    wrk = shutil.which("wrk")
    if wrk is None:
        sys.exit("wrk is not installed (apt-get install wrk)")
    with tempfile.TemporaryDirectory(prefix="rs-serving-") as tmp:
        storage = LocalStorage(Path(tmp) / "storage")
        server = subprocess.Popen([sys.executable, "-c", SERVER, str(storage.root)], stdout=subprocess.PIPE, text=True,
                                  start_new_session=True)
        try:
            base = f"http://127.0.0.1:{int(server.stdout.readline())}"  # bound first: the documents name its URL
            began = time.perf_counter()
            names = publish(storage, f"{base}/set1/", args.resources)
            written = time.perf_counter() - began
            requests.get(f"{base}/set1/resourcelist.xml", timeout=60).raise_for_status()
            script = Path(tmp) / "walk.lua"
            script.write_text(SCRIPT % ", ".join(f'"/set1/{name}"' for name in names))
            run = subprocess.run([wrk, "-t", "2", "-c", str(args.clients), "-d", f"{args.seconds}s", "--timeout", "60s",
                                  "-s", str(script), base], capture_output=True, text=True, timeout=args.seconds + 300, check=True)
            summary = json.loads(re.search(r"^\{.*\}$", run.stdout, re.M).group(0))
            rss = peak_rss_mb(server.pid)
            exact = all(requests.get(f"{base}/set1/{name}", timeout=60).content == storage.read_bytes(resourcesync_key("set1", name))
                        for name in names)
        finally:
            server.terminate()
            server.wait(30)
    errors = {k: summary[k] for k in ("connect", "read", "write", "timeout", "status")}
    print(f"resource list: {args.resources:,} resources in {len(names)} documents, written in {written:.1f} s")
    print(f"wrk: {args.clients} connections, 2 threads, {summary['seconds']:.1f} s: {summary['requests']:,} requests, "
          f"{summary['requests'] / summary['seconds']:,.1f} requests/s, {summary['bytes'] / summary['seconds'] / 1e6:,.1f} MB/s")
    print(f"latency: p50 {summary['p50_ms']:.1f} ms, p99 {summary['p99_ms']:.1f} ms, max {summary['max_ms']:.1f} ms")
    print(f"errors: {errors}; server peak RSS {rss:.0f} MB; documents byte-exact after the load: {exact}")
    return 0 if exact and not any(errors.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
