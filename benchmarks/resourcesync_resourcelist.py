"""Build a Resource List (with its index) for N resources: our streaming generator vs the resync library.

    .venv/bin/python benchmarks/resourcesync_resourcelist.py [--resources 1000000] [--resync-resources 100000]

Each side runs in its own process (so each peak RSS is its own) on the same synthetic resources
(relative paths, length, md5, lastmod, mime) and writes sitemaps of 50,000 URLs plus a sitemapindex
into a temporary folder. resync keeps every Resource in memory, so by default it builds a smaller
list and its rate is extrapolated to N (printed as such).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from resync.mapper import Mapper
from resync.resource import Resource
from resync.resource_list import ResourceList

from ingest_assets.resourcesync.documents import resource_entries, write_resource_list
from ingest_assets.resourcesync.model import ResourceSet

PREFIX = "https://data.example.org/set1/"
START = datetime(2026, 1, 1, tzinfo=timezone.utc)


def synthetic(n: int):
    """(relative path, length, md5, lastmod W3C) for n resources (one lastmod per folder of 1,000)."""
    lastmod = ""
    for i in range(n):
        folder, item = divmod(i, 1000)
        if item == 0:
            lastmod = (START + timedelta(minutes=folder)).strftime("%Y-%m-%dT%H:%M:%S")
        yield f"data/{folder:04d}/item-{i:07d}.xml", 1000 + item, f"{i:032x}", lastmod


def run_ours(n: int, folder: Path) -> int:
    rs = ResourceSet("set1", PREFIX)
    docs = (
        {
            "location": {"type": "rel_path", "value": rel},
            "length": length,
            "md5": md5,
            "sha256": None,
            "mime": "application/xml",
            "lastmod": lastmod + ".000Z",
            "ln": [],
        }
        for rel, length, md5, lastmod in synthetic(n)
    )
    stamp = lambda: datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")  # noqa: E731
    count, parts = write_resource_list(
        lambda name: open(folder / name, "wb"),
        resource_entries(rs, docs),
        up=PREFIX + "capabilitylist.xml",
        index_url=PREFIX + "resourcelist.xml",
        part_url=lambda k: f"{PREFIX}resourcelist-{k:05d}.xml",
        at=stamp(),
        now=stamp,
    )
    assert count == n
    return len(parts)


def run_resync(n: int, folder: Path) -> int:
    rl = ResourceList(mapper=Mapper([f"{PREFIX[:-1]}={folder}"]))
    rl.up = PREFIX + "capabilitylist.xml"
    rl.md_at = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    for rel, length, md5, lastmod in synthetic(n):
        rl.add(Resource(uri=PREFIX + rel, lastmod=lastmod + "Z", length=length, md5=md5, mime_type="application/xml"))
    rl.write(basename=str(folder / "resourcelist.xml"))
    return len(list(folder.glob("resourcelist*.xml"))) - 1


def child(side: str, n: int) -> None:
    with tempfile.TemporaryDirectory(prefix=f"rl-{side}-") as tmp:
        folder = Path(tmp)
        started, cpu_started = time.perf_counter(), time.process_time()
        parts = (run_ours if side == "ours" else run_resync)(n, folder)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        size = sum(p.stat().st_size for p in folder.iterdir())
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB
    print(
        json.dumps(
            {
                "side": side,
                "resources": n,
                "seconds": seconds,
                "cpu_seconds": cpu,
                "components": parts,
                "bytes": size,
                "peak_rss_mb": peak_mb,
            }
        )
    )


def measure(side: str, n: int) -> dict:
    done = subprocess.run(
        [sys.executable, __file__, "--child", side, "--resources", str(n)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resources", type=int, default=1_000_000)
    parser.add_argument(
        "--resync-resources",
        type=int,
        default=100_000,
        help="resources resync builds (its rate is extrapolated when below --resources)",
    )
    parser.add_argument("--child", choices=("ours", "resync"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.resources)
        return
    ours = measure("ours", args.resources)
    theirs = measure("resync", args.resync_resources)
    heads = ("resources", 10), ("wall s", 7), ("CPU s", 7), ("resources/s", 11), ("per CPU s", 10), ("components", 10)
    print(f"{'':7} " + " ".join(f"{h:>{w}}" for h, w in heads) + f" {'MB written':>10} {'peak RSS MB':>11}")
    for r in (ours, theirs):
        print(
            f"{r['side']:7} {r['resources']:>10,} {r['seconds']:>7.1f} {r['cpu_seconds']:>7.1f} "
            f"{r['resources'] / r['seconds']:>11,.0f} {r['resources'] / r['cpu_seconds']:>10,.0f} "
            f"{r['components']:>10} {r['bytes'] / 1e6:>10.1f} {r['peak_rss_mb']:>11.1f}"
        )
    if theirs["resources"] < ours["resources"]:
        print(
            f"resync ran at {theirs['resources']:,} resources (it keeps every Resource in memory); its rate is "
            f"extrapolated to {ours['resources']:,}: "
            f"~{theirs['seconds'] * ours['resources'] / theirs['resources']:.0f} s wall"
        )
    for label, key in (("wall-clock", "seconds"), ("CPU-time", "cpu_seconds")):
        ratio = (ours["resources"] / ours[key]) / (theirs["resources"] / theirs[key])
        print(f"speed ratio ours/resync ({label} resources/s): {ratio:.1f}x")


if __name__ == "__main__":
    main()
