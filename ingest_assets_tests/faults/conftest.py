"""Fixtures of the fault-injection suite: small real filesystems, fault proxies in front of real servers, an
``oxigraph serve`` and a PostgreSQL server of the test's own (to kill or restart), the figures of the run."""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ingest_assets_tests.support import require
from ingest_assets_tests.support.faults import FaultProxy
from ingest_assets_tests.support.oxigraph import OxigraphProcess
from ingest_assets_tests.support.postgres import PostgresServer


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


FIGURES: list[tuple[str, dict]] = []


@pytest.fixture
def figures(request) -> Callable[..., None]:
    """``figures(name=value, ...)``: measured figures of this test (retries, recovery time, p99...), printed in the run's
    summary (the table of docs/reliability.md quotes them), never asserted as timings."""
    return lambda **values: FIGURES.append((request.node.name, values))


def pytest_terminal_summary(terminalreporter) -> None:
    if FIGURES:
        terminalreporter.section("fault figures")
        for test, values in FIGURES:
            terminalreporter.write_line(f"{test}: " + ", ".join(f"{k}={v}" for k, v in values.items()))


@pytest.fixture
def fault_proxy() -> Iterator[Callable[..., FaultProxy]]:
    """``fault_proxy(upstream_url, rule)``: a :class:`FaultProxy` in front of a real server, closed after the test."""
    proxies: list[FaultProxy] = []

    def start(upstream: str, rule=None) -> FaultProxy:
        proxies.append(FaultProxy(upstream, rule))
        return proxies[-1]

    yield start
    for proxy in proxies:
        proxy.close()


@pytest.fixture
def oxigraph(tmp_path) -> Iterator[OxigraphProcess]:
    server = OxigraphProcess(tmp_path / "oxigraph")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL server of this test's own, which it may restart or stop (the session's ``pg_url`` is shared)."""
    server = PostgresServer()
    yield server
    server.remove()
