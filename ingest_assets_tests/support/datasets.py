"""A routed WSGI "platform" server for the dataset-ingest tests (it can answer any status or body a test needs).

The platform API documents come from ``../shared/fixtures/datasets`` (read in place). Their absolute
production URLs (zenodo.org, ndownloader.figshare.com...) are rewritten to the local server when served,
because tests have no network; any other adaptation is made (and explained) in the test that needs it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Route:
    body: bytes | Callable[[], bytes]
    status: int = 200
    content_type: str = "application/json"
    headers: list[tuple[str, str]] = field(default_factory=list)


class PlatformServer:
    """Serves registered routes (path with query string) and counts hits per route."""

    def __init__(self):
        self.routes: dict[str, Route] = {}
        self.hits: Counter[str] = Counter()
        self.base = ""

    @property
    def netloc(self) -> str:
        return self.base.split("://", 1)[1]

    def route(self, path: str, body, status: int = 200, content_type: str = "application/json", headers=()):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        elif isinstance(body, str):
            body = body.encode()
        self.routes[path] = Route(body, status, content_type, list(headers))

    def redirect(self, path: str, target: str, status: int = 302):
        self.route(path, b"", status, "text/plain", [("Location", target)])

    def fixture_json(self, path: Path, replace: dict[str, str] | None = None):
        """A fixture document with production hosts pointed at this server."""
        text = path.read_text(encoding="utf-8")
        hosts = {"https://zenodo.org": self.base, "https://ndownloader.figshare.com": self.base, **(replace or {})}
        for old, new in hosts.items():
            text = text.replace(old, new)
        return json.loads(text)

    def __call__(self, environ, start_response):
        path = environ["PATH_INFO"]
        if environ.get("QUERY_STRING"):
            path += "?" + environ["QUERY_STRING"]
        self.hits[path] += 1
        route = self.routes.get(path)
        if route is None:
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"not found"]
        body = route.body() if callable(route.body) else route.body
        reason = {200: "OK", 301: "Moved", 302: "Found", 403: "Forbidden", 404: "Not Found", 503: "Unavailable"}
        headers = [("Content-Type", route.content_type), ("Content-Length", str(len(body))), *route.headers]
        start_response(f"{route.status} {reason.get(route.status, 'X')}", headers)
        return [body]
