"""The reliability suite's local site, whose answers can be made to hang (its workers: :class:`support.Worker`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from wsgiref.simple_server import WSGIRequestHandler, make_server
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIServer

import pytest


class _Threading(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _Quiet(WSGIRequestHandler):
    def log_message(self, *args) -> None:
        pass


class Gate:
    """Wraps a WSGI app: requests matching ``hang_when`` block (until released) after sending the first
    ``send_first`` bytes of the body; ``reached`` is set when such a request arrives."""

    def __init__(self, app):
        self.app, self.hang_when, self.send_first = app, None, 0
        self.reached, self.release = threading.Event(), threading.Event()

    def hang(self, when: Callable[[dict], bool], send_first: int = 0) -> None:
        self.hang_when, self.send_first = when, send_first
        self.reached.clear()
        self.release.clear()

    def open(self) -> None:
        self.hang_when = None
        self.release.set()

    def __call__(self, environ, start_response):
        if self.hang_when is None or not self.hang_when(environ):
            return self.app(environ, start_response)
        body = b"".join(self.app(environ, start_response))

        def trickle():
            yield body[: self.send_first]
            self.reached.set()
            self.release.wait(120)
            yield body[self.send_first:]

        return trickle()


@pytest.fixture
def serve() -> Iterator[Callable[[Callable[[str], object]], tuple[Gate, str]]]:
    """``serve(make_app)``: ``make_app(base_url)`` behind a :class:`Gate` on 127.0.0.1 -> (gate, base URL)."""
    servers = []

    def start(make_app):
        gate = Gate(None)
        server = make_server("127.0.0.1", 0, gate, server_class=_Threading, handler_class=_Quiet)
        base = f"http://127.0.0.1:{server.server_address[1]}"
        gate.app = make_app(base)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers.append((server, gate))
        return gate, base

    yield start
    for server, gate in servers:
        gate.open()
        server.shutdown()
        server.server_close()
