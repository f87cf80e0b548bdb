"""``oxigraph serve`` (the locked PyPI package's binary) as a process of its own on 127.0.0.1: the linked-data tests'
SPARQL endpoint, and the faults suite's server that a test kills (SIGKILL) and starts again on the same location."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from ingest_assets_tests.support import free_port, require, stop_group


class OxigraphProcess:
    """``oxigraph serve`` on one on-disk location and port, which a test kills (SIGKILL) and starts again."""

    def __init__(self, location: Path):
        self.location, self.port, self.process = location, free_port(), None
        self.url = f"http://127.0.0.1:{self.port}"

    def start(self) -> float:
        """Start and wait until it answers a query; returns the seconds that took (RocksDB recovery included)."""
        binary = Path(sys.executable).parent / "oxigraph"
        require(binary.exists(), f"{binary} missing: run uv sync --locked (test group)")
        began = time.monotonic()
        log = (self.location.parent / "oxigraph.log").open("ab")
        self.process = subprocess.Popen([str(binary), "serve", "--location", str(self.location), "--bind", f"127.0.0.1:{self.port}"],
                                        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        deadline = began + 60
        while True:
            try:
                if requests.get(f"{self.url}/query", params={"query": "ASK {}"}, timeout=1).ok:
                    return time.monotonic() - began
            except requests.ConnectionError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"oxigraph serve did not start (see {self.location.parent / 'oxigraph.log'})")
            time.sleep(0.05)

    def kill(self) -> None:
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            stop_group(self.process, timeout=10)
