"""The reliability suite's tools: a local site whose answers can be made to hang, and workers started as real
processes (their own session, so SIGKILL reaches the whole group) with an optional memory cap."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import threading
import time
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


class Worker:
    """A Python worker process running ``code``; ``memory_mb`` caps its address space (RLIMIT_AS)."""

    def __init__(self, code: str, env: dict[str, str], memory_mb: int | None = None):
        def cap() -> None:
            if memory_mb:
                limit = memory_mb * 1024 * 1024
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

        self.process = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, **env}, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=cap)

    def kill(self) -> None:
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(30)

    def finish(self, timeout: float = 240) -> tuple[int, str, str]:
        try:
            out, err = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise
        return self.process.returncode, out, err


def wait_for(what: str, condition: Callable[[], bool], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not happen within {timeout:.0f} s")
        time.sleep(0.05)
