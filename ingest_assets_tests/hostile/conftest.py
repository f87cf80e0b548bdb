"""The reliability suite's local site, whose answers can be made to hang (:class:`support.hostile.Gate`); its
workers are :class:`support.Worker`. Every test here carries the ``hostile`` marker (the root conftest)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from ingest_assets.core.wsgi import WsgiServer
from ingest_assets_tests.support.hostile import Gate


@pytest.fixture
def serve() -> Iterator[Callable[[Callable[[str], object]], tuple[Gate, str]]]:
    """``serve(make_app)``: ``make_app(base_url)`` behind a :class:`Gate` on 127.0.0.1 -> (gate, base URL)."""
    servers = []

    def start(make_app):
        gate = Gate(None)
        server = WsgiServer()
        gate.app = make_app(server.url)
        servers.append((server.start(gate), gate))
        return gate, server.url

    yield start
    for server, gate in servers:
        gate.open()
        server.shutdown()
