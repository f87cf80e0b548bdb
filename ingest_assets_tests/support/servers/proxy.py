"""A recording HTTP proxy on 127.0.0.1 (a WSGI app on ``core.wsgi.WsgiServer``) in front of a live server, so
that tests assert the exact requests a client sends while a real server answers them.

It forwards each request with the client's ``Host`` header, so the server builds the URLs it hands out
(Fedora's ``Location`` and transaction URLs) for the proxy, and the client's next requests come back through it.
Two test controls, neither of which changes what the server itself does: :meth:`inject` answers matching
requests with a fault instead of forwarding them (each caller says which fault a real server cannot be made to
produce), and :meth:`before` runs an action just before a matching request is forwarded (another client's write
landing at that moment, sent to the server directly).
"""

from __future__ import annotations

import http.client
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from urllib.parse import parse_qs, urlsplit

from requests.structures import CaseInsensitiveDict

from ingest_assets.core.wsgi import WsgiServer

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "proxy-connection", "te", "upgrade"}


@dataclass
class Exchange:
    method: str
    path: str  # as sent: percent-escapes kept, query string removed
    query: str
    headers: CaseInsensitiveDict  # as sent; names in any case
    body: bytes
    status: int | None = None
    reply: dict[str, str] = field(default_factory=dict)  # the answer's headers

    @property
    def params(self) -> dict[str, str]:
        return {k: v[-1] for k, v in parse_qs(self.query).items()}

    def json(self):
        """The body parsed: a list of lines for NDJSON (``_bulk``), else one value; None when empty."""
        if not self.body:
            return None
        if self.path.endswith("/_bulk"):
            return [json.loads(line) for line in self.body.splitlines() if line.strip()]
        return json.loads(self.body)


class RecordingProxy:
    def __init__(self, upstream: str):
        parts = urlsplit(upstream)
        self.upstream_host, self.upstream_port = parts.hostname, parts.port or 80
        self.requests: list[Exchange] = []
        self._injected: list[list] = []  # [method, path, status, body, headers, times left]
        self._hooks: list[tuple[str, str, Callable[[], object]]] = []
        self._lock = threading.Lock()
        self.server = WsgiServer().start(self._app)
        self.url = self.server.url

    def _app(self, environ, start_response):
        """The WSGI face: the request as the client sent it (target with its %-escapes, headers, body) to
        :meth:`handle`, its answer back without hop-by-hop headers."""
        method = environ["REQUEST_METHOD"]
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        headers = CaseInsensitiveDict({k[5:].replace("_", "-").title(): v for k, v in environ.items()
                                       if k.startswith("HTTP_")})
        if environ.get("CONTENT_LENGTH"):  # without a body, wsgiref's CONTENT_TYPE is its own text/plain default
            headers["Content-Length"], headers["Content-Type"] = environ["CONTENT_LENGTH"], environ["CONTENT_TYPE"]
        status, reply, payload = self.handle(method, environ["RAW_URI"], headers, body)
        start_response(f"{status} {HTTPStatus(status).phrase}",
                       [(k, v) for k, v in reply if k.lower() not in HOP_BY_HOP]
                       + [("Content-Length", str(len(payload)))])
        return [] if method == "HEAD" else [payload]

    def inject(self, method: str, path: str, status: int, body: bytes = b"", headers: dict | None = None,
               times: int = 1) -> None:
        """Answer the next ``times`` requests whose method and path fully match these regular expressions with
        ``status`` instead of forwarding them."""
        with self._lock:
            self._injected.append([method, path, status, body, dict(headers or {}), times])

    def before(self, method: str, path: str, action: Callable[[], object]) -> None:
        """Run ``action`` once, when the next matching request arrives, before it is forwarded."""
        with self._lock:
            self._hooks.append((method, path, action))

    def injected_headers(self, given: dict[str, str]) -> list[tuple[str, str]]:
        """The headers of an injected answer."""
        return list(given.items())

    def calls(self, method: str = ".*", path: str = ".*") -> list[Exchange]:
        return [r for r in self.requests if re.fullmatch(method, r.method) and re.fullmatch(path, r.path)]

    def close(self) -> None:
        self.server.shutdown()

    def handle(self, method: str, target: str, headers: dict[str, str], body: bytes):
        path, _, query = target.partition("?")
        exchange = Exchange(method, path, query, headers, body)
        with self._lock:
            self.requests.append(exchange)
            hooks = [h for h in self._hooks if re.fullmatch(h[0], method) and re.fullmatch(h[1], path)]
            self._hooks = [h for h in self._hooks if h not in hooks]
            injected = next((i for i in self._injected if re.fullmatch(i[0], method) and re.fullmatch(i[1], path)),
                            None)
            if injected:
                injected[5] -= 1
                if not injected[5]:
                    self._injected.remove(injected)
        if injected:
            exchange.status = injected[2]
            return injected[2], self.injected_headers(injected[4]), injected[3]
        for _, _, action in hooks:
            action()
        status, reply, payload = self.forward(method, target, headers, body)
        exchange.status, exchange.reply = status, dict(reply)
        return status, reply, payload

    def forward(self, method: str, target: str, headers: dict[str, str], body: bytes):
        """Send one request upstream: ``(status, headers, body)`` of the answer."""
        conn = http.client.HTTPConnection(self.upstream_host, self.upstream_port, timeout=120)
        try:
            sent = {k: v for k, v in headers.items() if k.lower() not in HOP_BY_HOP}
            conn.request(method, target, body=body or None, headers=sent)
            response = conn.getresponse()
            return response.status, response.getheaders(), response.read()
        finally:
            conn.close()
