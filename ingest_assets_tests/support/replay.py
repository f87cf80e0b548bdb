"""Recorded sources replayed whole on 127.0.0.1: ``../shared/fixtures/replays/<source>/`` read in place.

:class:`Replay` serves the source's files at request time with ``@BASE@`` (the placeholder the recordings use
for the original host) replaced by this server's base URL. An OAI-PMH source answers by its ``routes.json``
(``[{"match": {param: value or "*"}, "file": name}]``, first match wins). Other paths are mapped by the test
(:meth:`Replay.file`, :meth:`Replay.route`) because a recording keeps bodies, not the server's URL scheme:
VoID dumps published as ``.tar.gz`` are packed from the recorded members, a Zenodo "download all" archive is
zipped from the recorded files (``support.tar_bytes``, ``support.zip_bytes``), as the real servers build them.

Faults a real server cannot be made to show on demand are injected explicitly and named as such:
``fault(path, status)`` answers an HTTP error, ``cut(path, n)`` sends only the first ``n`` bytes of the body
(a connection that drops mid-transfer, the way a truncated dump reaches a harvester), ``stall(path, seconds)``
answers only after ``seconds`` (an overloaded host).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import formatdate
from pathlib import Path
from urllib.parse import parse_qs

PLACEHOLDER = b"@BASE@"
REASONS = {200: "OK", 304: "Not Modified", 404: "Not Found", 410: "Gone", 500: "Server Error", 503: "Unavailable"}


@dataclass
class Answer:
    body: Callable[[], bytes]
    content_type: str = "application/octet-stream"
    headers: list[tuple[str, str]] = field(default_factory=list)


class Replay:
    """WSGI app replaying one recorded source; ``requests`` lists ``(path, query)`` of every request."""

    def __init__(self, folder: Path):
        self.folder, self.base = folder, ""
        routes = folder / "routes.json"
        self.oai_routes = json.loads(routes.read_text(encoding="utf-8")) if routes.is_file() else []
        self.answers: dict[str, Answer] = {}
        self.faults: dict[str, int] = {}
        self.cuts: dict[str, int] = {}
        self.stalls: dict[str, float] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.request_headers: list[dict[str, str]] = []

    def read(self, relative: str) -> bytes:
        """A recorded file with ``@BASE@`` pointed at this server."""
        return (self.folder / relative).read_bytes().replace(PLACEHOLDER, self.base.encode())

    def file(self, path: str, relative: str, content_type: str = "application/octet-stream", **options) -> str:
        """Serve the recorded ``relative`` at ``path`` (read at request time, so a test may swap it)."""
        return self.route(path, lambda: self.read(relative), content_type, **options)

    def route(self, path: str, body: Callable[[], bytes] | bytes, content_type: str = "application/octet-stream",
              *, etag: str | None = None, last_modified: float | None = None) -> str:
        """Serve ``body`` at ``path``; with ``etag``/``last_modified`` (epoch seconds) the answer carries them and
        a conditional request that matches is answered ``304``, as a web server does for a static file."""
        headers = [("ETag", etag)] if etag else []
        if last_modified is not None:
            headers.append(("Last-Modified", formatdate(last_modified, usegmt=True)))
        self.answers[path] = Answer(body if callable(body) else (lambda: body), content_type, headers)
        return self.base + path

    def fault(self, path: str, status: int) -> None:
        """Injected: answer ``status`` at ``path`` (a server's bad day, on demand)."""
        self.faults[path] = status

    def cut(self, path: str, size: int) -> None:
        """Injected: send only the first ``size`` bytes of ``path``'s body, announced as such."""
        self.cuts[path] = size

    def stall(self, path: str, seconds: float) -> None:
        """Injected: answer ``path`` only after ``seconds`` (a host slow to answer, on demand)."""
        self.stalls[path] = seconds

    def paths(self) -> list[str]:
        return [path for path, _ in self.requests]

    def __call__(self, environ, start_response):
        path = environ["PATH_INFO"]
        query = {k: v[0] for k, v in parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True).items()}
        self.requests.append((path, query))
        self.request_headers.append({k[5:].replace("_", "-").lower(): v for k, v in environ.items()
                                     if k.startswith("HTTP_")})
        time.sleep(self.stalls.get(path, 0))
        if path in self.faults:
            return self._send(start_response, self.faults[path], b"injected failure", "text/plain")
        answer = self.answers.get(path) or self._oai(query)
        if answer is None:
            return self._send(start_response, 404, b"not found", "text/plain")
        if self._not_modified(environ, answer.headers):
            return self._send(start_response, 304, b"", None, answer.headers)
        body = answer.body()
        if path in self.cuts:
            body = body[: self.cuts[path]]
        head = environ["REQUEST_METHOD"] == "HEAD"  # the headers of a GET, no body
        return self._send(start_response, 200, body, answer.content_type, answer.headers, head)

    def _oai(self, query: dict[str, str]) -> Answer | None:
        for route in self.oai_routes:
            match = route["match"]
            if all(key in query and value in ("*", query[key]) for key, value in match.items()):
                name = route["file"]
                return Answer(lambda: self.read(name), "text/xml; charset=utf-8")
        return None

    @staticmethod
    def _not_modified(environ, headers: list[tuple[str, str]]) -> bool:
        given = dict(headers)
        etag, since = environ.get("HTTP_IF_NONE_MATCH"), environ.get("HTTP_IF_MODIFIED_SINCE")
        if etag is not None and "ETag" in given:
            return etag == given["ETag"]
        return since is not None and since == given.get("Last-Modified")

    @staticmethod
    def _send(start_response, status: int, body: bytes, content_type: str | None, headers=(), head=False):
        sent = [("Content-Length", str(len(body))), *headers]
        if content_type:
            sent.append(("Content-Type", content_type))
        start_response(f"{status} {REASONS.get(status, 'Status')}", sent)
        return [] if head else [body]

