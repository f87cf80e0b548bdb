"""Helpers the tests share (imported by tests and conftests; fixtures stay in conftest.py)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from pathlib import Path

import pytest

SHARED_FIXTURES = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def require(condition: bool, reason: str) -> None:
    """Skip on a developer machine that lacks something; in CI a missing prerequisite is a failure."""
    if not condition:
        if IN_CI:
            pytest.fail(f"CI prerequisite missing: {reason}")
        pytest.skip(reason)


def stop_group(process: subprocess.Popen, timeout: float = 30) -> None:
    """Stop a server started with ``start_new_session=True``: SIGTERM to its process group, SIGKILL if it lingers."""
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
