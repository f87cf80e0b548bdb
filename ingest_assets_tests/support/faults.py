"""A fault-injecting HTTP proxy in front of a real server (moto's S3, a search backend): it forwards each request,
unless the test's ``rule`` picks a fault for it, and logs every request with what it did.

The faults are those a real server or network produces but a healthy local server will not on cue: an error
status instead of an answer (503 SlowDown, 500), a connection reset in the middle of a request body, a response
lost after the server acted on the request (reset before the answer), and an answer that stalls mid-body. It is
built on ``http.server``, not ``core.wsgi.WsgiServer``: these faults need the connection's socket, which WSGI hides.
"""

from __future__ import annotations

import http.client
import socket
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Fault:
    """``kind``: ``status`` (answer ``status`` with ``body``, not forwarded), ``reset_request`` (read half the
    request body, then reset), ``lose_response`` (forward, then reset instead of answering), ``stall`` (forward,
    send the headers and half the body, then hold the connection ``seconds``)."""

    kind: str
    status: int = 503
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0


@dataclass
class Seen:
    number: int
    method: str
    path: str
    fault: str | None
    status: int | None = None


def s3_error(status: int, code: str, message: str) -> Fault:
    body = (f"<?xml version='1.0' encoding='UTF-8'?><Error><Code>{code}</Code><Message>{message}</Message>"
            "<RequestId>fault-proxy</RequestId></Error>").encode()
    return Fault("status", status=status, body=body, headers={"Content-Type": "application/xml"})


def _reset(sock: socket.socket) -> None:
    """Close with RST (SO_LINGER 0), as a dropped connection looks to the peer."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
    except OSError:
        pass


class FaultProxy:
    """``FaultProxy(upstream_url, rule)`` on 127.0.0.1: ``rule(number, method, path, headers)`` returns a
    :class:`Fault` or None (forward). ``url`` is the proxy's base URL, ``log`` every request seen."""

    def __init__(self, upstream: str, rule: Callable[[int, str, str, dict], Fault | None] | None = None):
        self.upstream = urlsplit(upstream)
        self.rule = rule or (lambda *args: None)
        self.log: list[Seen] = []
        self._lock = threading.Lock()
        self._release = threading.Event()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def _any(self) -> None:
                proxy._handle(self)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def faults(self, kind: str | None = None) -> list[Seen]:
        return [s for s in self.log if s.fault and (kind is None or s.fault == kind)]

    def close(self) -> None:
        self._release.set()
        self.server.shutdown()
        self.server.server_close()

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        with self._lock:
            number = len(self.log)
            headers = {k: v for k, v in handler.headers.items()}
            fault = self.rule(number, handler.command, handler.path, headers)
            seen = Seen(number, handler.command, handler.path, fault.kind if fault else None)
            self.log.append(seen)
        length = int(handler.headers.get("Content-Length") or 0)
        if fault is not None and fault.kind == "reset_request":
            handler.rfile.read(length // 2)
            handler.close_connection = True
            _reset(handler.connection)
            return
        body = self._read_body(handler, length)
        if fault is not None and fault.kind == "status":
            seen.status = fault.status
            handler.send_response(fault.status)
            for key, value in {**fault.headers, "Content-Length": str(len(fault.body))}.items():
                handler.send_header(key, value)
            handler.end_headers()
            if handler.command != "HEAD":
                handler.wfile.write(fault.body)
            return
        status, reason, answer_headers, answer = self._forward(handler, body)
        seen.status = status
        if fault is not None and fault.kind == "lose_response":
            handler.close_connection = True
            _reset(handler.connection)
            return
        handler.send_response(status, reason)
        for key, value in answer_headers:
            if key.lower() not in ("transfer-encoding", "connection", "content-length", "date", "server"):
                handler.send_header(key, value)
        handler.send_header("Content-Length", str(len(answer)))
        handler.end_headers()
        if handler.command == "HEAD":
            return
        if fault is not None and fault.kind == "stall":
            handler.wfile.write(answer[: len(answer) // 2])
            handler.wfile.flush()
            self._release.wait(fault.seconds)
            handler.close_connection = True
            _reset(handler.connection)
            return
        handler.wfile.write(answer)

    @staticmethod
    def _read_body(handler: BaseHTTPRequestHandler, length: int) -> bytes:
        if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(handler.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while handler.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(handler.rfile.read(size))
                handler.rfile.readline()
        return handler.rfile.read(length) if length else b""

    def _forward(self, handler: BaseHTTPRequestHandler, body: bytes) -> tuple[int, str, list, bytes]:
        connection = http.client.HTTPConnection(self.upstream.hostname, self.upstream.port, timeout=120)
        try:
            headers = {k: v for k, v in handler.headers.items() if k.lower() not in ("transfer-encoding", "expect")}
            if body or handler.command in ("PUT", "POST"):
                headers["Content-Length"] = str(len(body))
            connection.request(handler.command, handler.path, body=body or None, headers=headers)
            response = connection.getresponse()
            return response.status, response.reason, response.getheaders(), response.read()
        finally:
            connection.close()


def every(n: int, fault: Fault, *, methods: tuple[str, ...] = (), start: int = 0,
          when: Callable[[str, str], bool] | None = None) -> Callable[[int, str, str, dict], Fault | None]:
    """A rule: every ``n``-th request (of ``methods``, matching ``when(method, path)``) from ``start`` gets ``fault``."""
    counter = {"matched": 0}

    def rule(number: int, method: str, path: str, headers: dict) -> Fault | None:
        if (methods and method not in methods) or (when and not when(method, path)):
            return None
        counter["matched"] += 1
        return fault if counter["matched"] > start and (counter["matched"] - start) % n == 1 % n else None

    return rule

