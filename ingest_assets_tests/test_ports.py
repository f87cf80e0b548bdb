"""The loopback ports the tests hand to servers: outside the kernel's ephemeral range and never the same port to
two processes of the machine's test runs while both live (a live server started seconds later must find its port
free)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ingest_assets_tests.support import PORT_CLAIMS, free_port


def test_ports_are_outside_the_ephemeral_range_and_claimed_once_across_processes():
    low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    child = subprocess.Popen(
        [sys.executable, "-c", "from ingest_assets_tests.support import free_port\n"
                               "print(*[free_port() for _ in range(200)]); input()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        theirs = set(map(int, child.stdout.readline().split()))
        ours = {free_port() for _ in range(200)}
        assert len(theirs) == len(ours) == 200
        assert not theirs & ours
        assert all(not low <= port <= high for port in theirs | ours)
        assert {(PORT_CLAIMS / str(port)).read_text() for port in theirs} == {str(child.pid)}
    finally:
        child.communicate("")
