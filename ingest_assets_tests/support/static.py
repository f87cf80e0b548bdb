"""A WSGI app serving the files of a folder read-only, in place (what ``http_server(directory=...)`` serves)."""

from __future__ import annotations

import mimetypes
from pathlib import Path


def static_files(directory: str | Path):
    """GET/HEAD ``/<relative path>`` answers the file below ``directory`` (never outside it); anything else 404."""
    root = Path(directory).resolve()

    def app(environ, start_response):
        relative = environ.get("PATH_INFO", "").encode("latin-1").decode("utf-8").lstrip("/")
        path = (root / relative).resolve()
        if environ["REQUEST_METHOD"] not in ("GET", "HEAD") or not path.is_relative_to(root) or not path.is_file():
            start_response("404 Not Found", [("Content-Type", "text/plain"), ("Content-Length", "9")])
            return [b"not found"]
        body = path.read_bytes()
        kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        start_response("200 OK", [("Content-Type", kind), ("Content-Length", str(len(body)))])
        return [b"" if environ["REQUEST_METHOD"] == "HEAD" else body]

    return app
