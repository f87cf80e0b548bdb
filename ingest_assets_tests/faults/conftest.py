"""Fixtures of the fault-injection suite: small real filesystems, and (in other modules) fault proxies in front of
real servers, network namespaces behind netem."""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ingest_assets_tests.support import require


@pytest.fixture
def tmpfs() -> Iterator[Callable[[int], Path]]:
    """``tmpfs(size_bytes)``: a fresh tmpfs of that size (a real filesystem that fills up: ENOSPC), unmounted after."""
    mounts: list[Path] = []

    def mount(size: int) -> Path:
        require(os.geteuid() == 0, "mounting a tmpfs needs root (CI runs .ci/run as root)")
        point = Path(tempfile.mkdtemp(prefix="ingest-tmpfs-"))
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(point)], capture_output=True, text=True)
        require(done.returncode == 0, f"mount -t tmpfs refused here: {done.stderr.strip()}")
        mounts.append(point)
        return point

    yield mount
    for point in mounts:
        subprocess.run(["umount", "-l", str(point)], check=False)
        point.rmdir()
