"""A dataset bundle of many small entries: what dataset ingest spends listing and hashing a ``.tar.gz`` of
``--entries`` files (default 100,000: past ``Limits.max_members``, so it hashes the first 10,000 and refuses the
bundle, as ``datasets/bundle.list_bundle`` does for a bundle that large).

    uv run --locked python benchmarks/datasets_bundle.py [--entries 100000] [--repeat 3] [--before DIR]

Contenders, each in a child process of its own (the same imports; CPU seconds of the work alone, the best of
``--repeat``), on the same bundle in the same run:
  floor   the members as ``core.archives`` streams them, each hashed by hashlib (md5, sha1, sha256) over its bytes
  ours    ``datasets.bundle.list_bundle`` of this checkout (``core.digests.hash_stream`` per entry, media types)
  before  the same of another checkout's ``ingest_assets`` (``--before DIR``, e.g. ``git archive REV | tar -x -C DIR``)
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = """
import hashlib, json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])  # this side's ingest_assets first
from ingest_assets.core.archives import Limits, members
from ingest_assets.core.errors import ArchiveError
from ingest_assets.datasets.bundle import list_bundle
from ingest_assets.datasets.status import DatasetIngestFailure

def floor(path):
    count = 0
    try:
        for member in members(path, Limits(), links=True):
            if member.stream is not None:
                data = member.stream.read()
                for name in ("md5", "sha1", "sha256"):
                    hashlib.new(name, data).hexdigest()
            count += 1
    except ArchiveError as exc:
        return f"refused after {count} entries: {exc.message}"
    return f"listed {count} entries"

def listed(path):
    try:
        return f"listed {len(list_bundle(path, Limits()))} entries"
    except DatasetIngestFailure as exc:
        return f"refused: {exc}"

work = floor if sys.argv[3] == "floor" else listed
start = time.process_time()
outcome = work(Path(sys.argv[2]))
print(json.dumps([time.process_time() - start, outcome]))
"""


def make_bundle(path: Path, entries: int) -> None:
    """A .tar.gz of ``entries`` text files of a dozen bytes each (as a dataset of many tiny records can be; the
    allocator's cost of a 4 MiB buffer per entry showed fully with entries this small)."""
    with tarfile.open(path, "w:gz") as tar:
        for n in range(entries):
            data = f"entry {n}\n".encode()
            info = tarfile.TarInfo(f"data/{n:06d}.txt")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def cpu_seconds(root: Path, bundle: Path, kind: str, repeat: int) -> tuple[float, str]:
    """The best CPU seconds of ``repeat`` children listing ``bundle`` with ``root``'s code, and what they said."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}  # nothing written into the other checkout
    runs = []
    for _ in range(repeat):
        answer = subprocess.run([sys.executable, "-c", CHILD, str(root), str(bundle), kind], env=env, check=True,
                                capture_output=True, text=True).stdout
        runs.append(tuple(json.loads(answer)))
    return min(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--before", type=Path, help="another checkout's root: its list_bundle is timed too")
    args = parser.parse_args()
    if args.before is not None and not (args.before / "ingest_assets").is_dir():
        raise SystemExit(f"{args.before}: no ingest_assets package there")
    sides = {"floor": ROOT, "ours": ROOT, **({"before": args.before.resolve()} if args.before else {})}
    with tempfile.TemporaryDirectory(prefix="datasets-bundle-") as tmp:
        bundle = Path(tmp) / "bundle.tar.gz"
        make_bundle(bundle, args.entries)
        print(f"bundle of {args.entries:,} entries, {bundle.stat().st_size / 2**20:.1f} MiB; "
              f"load average {os.getloadavg()[0]:.2f}")
        seconds = {}
        for name, root in sides.items():
            seconds[name], outcome = cpu_seconds(root, bundle, "floor" if name == "floor" else "list", args.repeat)
            print(f"  {name:<6} {seconds[name]:7.2f} CPU-s  {outcome}")
    print(f"ours: {seconds['ours'] / seconds['floor']:.2f}x the floor's CPU seconds")
    if "before" in seconds:
        print(f"before: {seconds['before'] / seconds['floor']:.2f}x the floor's; ours takes "
              f"{seconds['ours'] / seconds['before']:.2f}x the CPU seconds of before")


if __name__ == "__main__":
    main()
