"""Manifest hashing: our one-pass md5+sha1+sha256 vs coreutils in sequence vs hashlib over bytes in memory.

    uv run --locked python benchmarks/datasets_hashing.py [--size-mb 2048] [--files 8]

Generates the files in a temp dir (page cache warmed first, so every contender reads from memory), then
times, on the same files and in the same run:
  coreutils   md5sum, sha1sum, sha256sum run one after another
  limit       hashlib md5/sha1/sha256 .update() over each file's bytes already in memory (load not timed)
  ours-disk   ingest_assets.datasets.hashing.hash_file (one read pass, reused buffer)
  ours-http   ingest_assets.datasets.download.download from a local HTTP server (separate process) through
              HttpClient: the real download path (stream, hash, write to disk); each download deleted after
"""

from __future__ import annotations

import argparse
import hashlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ingest_assets.datasets.download import download
from ingest_assets.datasets.hashing import hash_file
from ingest_assets.core.http import HttpClient

BLOCK = 16 * 1024 * 1024


def generate(folder: Path, total: int, count: int) -> list[Path]:
    """``count`` files of pseudo-random bytes (distinct per block) totalling ``total`` bytes."""
    seed = hashlib.sha256(b"datasets-hashing").digest()
    block = bytearray((seed * (BLOCK // len(seed) + 1))[:BLOCK])
    for i in range(0, BLOCK, 4096):
        block[i : i + 32] = hashlib.sha256(block[i : i + 32] + i.to_bytes(8, "big")).digest()
    paths, per_file = [], total // count
    for n in range(count):
        path = folder / f"part-{n:03d}.bin"
        with open(path, "wb") as out:
            written = 0
            while written < per_file:
                block[:8] = (n * 1_000_003 + written).to_bytes(8, "big")
                chunk = memoryview(block)[: min(BLOCK, per_file - written)]
                out.write(chunk)
                written += len(chunk)
        paths.append(path)
    return paths


def coreutils(path: Path) -> list[str]:
    """md5sum, sha1sum, sha256sum one after another (three reads of the file)."""
    return [
        subprocess.run([tool, str(path)], check=True, capture_output=True, text=True).stdout.split()[0]
        for tool in ("md5sum", "sha1sum", "sha256sum")
    ]


def in_memory(path: Path) -> tuple[float, list[str]]:
    """Time only the three .update() calls over bytes already in memory; loading is outside the clock."""
    data = path.read_bytes()
    start = time.perf_counter()
    hashes = [hashlib.md5(), hashlib.sha1(), hashlib.sha256()]
    for h in hashes:
        h.update(data)
    return time.perf_counter() - start, [h.hexdigest() for h in hashes]


def ours_disk(path: Path) -> list[str]:
    with open(path, "rb") as handle:
        d = hash_file(handle)
    return [d.md5, d.sha1, d.sha256]


def ours_http(client: HttpClient, base: str, path: Path, dest: Path) -> list[str]:
    target = dest / path.name
    capture = download(client, f"{base}/{path.name}", target, max_bytes=path.stat().st_size, what=path.name)
    target.unlink()
    return [capture.digests.md5, capture.digests.sha1, capture.digests.sha256]


def clocked(func, *args) -> tuple[float, list[str]]:
    start = time.perf_counter()
    value = func(*args)
    return time.perf_counter() - start, value


def serve(folder: Path) -> tuple[subprocess.Popen, str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(folder)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    return process, f"http://127.0.0.1:{port}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mb", type=int, default=2048)
    parser.add_argument("--files", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="datasets-hashing-") as tmp:
        source, dest = Path(tmp) / "files", Path(tmp) / "downloads"
        source.mkdir()
        dest.mkdir()
        paths = generate(source, args.size_mb * 1024 * 1024, args.files)
        total = sum(p.stat().st_size for p in paths)
        subprocess.run(["cat", *map(str, paths)], check=True, stdout=subprocess.DEVNULL)  # warm the page cache
        print(f"{len(paths)} files, {total / 2**20:.0f} MiB; load average {os.getloadavg()[0]:.2f}")
        # contenders take turns file by file, so load from other processes hits them alike
        seconds = dict.fromkeys(("coreutils", "limit", "ours-disk", "ours-http"), 0.0)
        server, base = serve(source)
        client = HttpClient(allow_private=True, timeout=(5, 120))
        try:
            for path in paths:
                runs = {
                    "coreutils": clocked(coreutils, path),
                    "limit": in_memory(path),
                    "ours-disk": clocked(ours_disk, path),
                    "ours-http": clocked(ours_http, client, base, path, dest),
                }
                if len({tuple(v) for _t, v in runs.values()}) != 1:
                    raise AssertionError(f"digests disagree for {path.name}: {runs}")
                for name, (elapsed, _value) in runs.items():
                    seconds[name] += elapsed
        finally:
            server.terminate()
            server.wait()
        for name, elapsed in seconds.items():
            print(f"  {name:<10} {elapsed:8.2f} s")
        t_core, t_limit = seconds["coreutils"], seconds["limit"]
        t_disk, t_http = seconds["ours-disk"], seconds["ours-http"]
        mib = total / 2**20
        print(f"throughput MiB/s: coreutils {mib / t_core:.0f}, limit {mib / t_limit:.0f}, "
              f"ours-disk {mib / t_disk:.0f}, ours-http {mib / t_http:.0f}")  # fmt: skip
        for label, elapsed in (("ours-disk", t_disk), ("ours-http", t_http)):
            print(f"{label}: {t_core / elapsed:.2f}x faster than coreutils in sequence (goal >= 3x); "
                  f"{t_limit / elapsed:.2f}x of the in-memory limit (goal >= 0.9x)")  # fmt: skip


if __name__ == "__main__":
    main()
