"""Fetch a request's base URL: redirect hops, terminal URL/status/time/sha1, and a size-limited landing page."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone

from requests.structures import CaseInsensitiveDict

from ingest_assets.datasets.status import DatasetIngestFailure, blocked_by_config
from ingest_assets.core.errors import FetchError, RefusedAddress
from ingest_assets.core.http import HttpClient, HttpResponse

HTML_TYPES = ("text/html", "application/xhtml+xml")


@dataclass
class Terminal:
    """Where the base URL ended: a landing page (``body`` set) or a non-HTML file (``body`` None)."""

    url: str
    status: int
    headers: Mapping[str, str]  # case-insensitive
    dt: str
    hops: list[str] = field(default_factory=list)
    body: bytes | None = None
    sha1hex: str | None = None  # of ``body``

    @property
    def mimetype(self) -> str:
        return self.headers.get("Content-Type", "").split(";")[0].strip().lower()

    @property
    def is_html(self) -> bool:
        return self.mimetype in HTML_TYPES


def timestamp14(moment: datetime | None = None) -> str:
    """``YYYYMMDDhhmmss`` in UTC, the wayback-style capture time."""
    return (moment or datetime.now(timezone.utc)).astimezone(timezone.utc).strftime("%Y%m%d%H%M%S")


def failure_for(exc: FetchError, what: str) -> DatasetIngestFailure:
    """Map a fetch error to a status: refused by configuration -> blocked-by-config, retryable -> fetch-error,
    HTTP 4xx -> terminal-bad-status."""
    if isinstance(exc, RefusedAddress):
        return blocked_by_config(what, exc)
    if exc.retryable:
        return DatasetIngestFailure("fetch-error", f"{what}: {exc}", terminal_status_code=exc.status)
    if exc.status is not None:
        return DatasetIngestFailure("terminal-bad-status", f"{what}: {exc}", terminal_status_code=exc.status)
    return DatasetIngestFailure("fetch-refused", f"{what}: {exc}")


def fetch_terminal(client: HttpClient, url: str, *, landing_max_bytes: int) -> Terminal:
    """Follow ``url`` to its terminal response; read the body only if it is an HTML landing page."""
    try:
        with client.open(url, max_bytes=landing_max_bytes, hashes=("sha1",)) as body:
            terminal = Terminal(
                url=body.url,
                status=body.status,
                headers=CaseInsensitiveDict(body.headers),
                dt=timestamp14(),
                hops=[hop_url for hop_url, _status in body.history] + [body.url],
            )
            if terminal.is_html:
                terminal.body = body.read()
                terminal.sha1hex = body.digests()["sha1"]
            return terminal
    except FetchError as exc:
        raise failure_for(exc, f"fetching {url}") from exc


class RecordingClient:
    """``client``, noting each response its ``get`` returns (url, status, Date, size, sha1): a dataset's
    platform API answers, kept in its lineage."""

    def __init__(self, client: HttpClient):
        self.client, self.responses = client, []

    def get(self, url: str, **kwargs) -> HttpResponse:
        response = self.client.get(url, **kwargs)
        self.responses.append({"url": response.url, "status": response.status, "date": CaseInsensitiveDict(response.headers).get("Date"),
                               "bytes": len(response.content), "sha1": hashlib.sha1(response.content).hexdigest()})
        return response

    def __getattr__(self, name: str):
        return getattr(self.client, name)
