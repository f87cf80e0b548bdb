"""Download one file to local disk (md5+sha1+sha256 in the same read pass, with a size limit) as a capture."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ingest_assets.datasets.fetch import timestamp14
from ingest_assets.datasets.hashing import ALGORITHMS, Digests
from ingest_assets.datasets.status import DatasetIngestFailure, blocked_by_config
from ingest_assets.core.errors import FetchError, RefusedAddress, TooLargeError
from ingest_assets.core.http import HttpClient

DROP_HEADERS = {"content-encoding", "transfer-encoding", "content-length", "connection", "keep-alive"}


@dataclass
class Capture:
    """A fetched file on local disk and how it was served (what a WARC response record holds)."""

    url: str
    path: Path
    digests: Digests
    status: int
    dt: str
    headers: list[tuple[str, str]] = field(default_factory=list)
    hops: list[str] = field(default_factory=list)

    @property
    def mimetype(self) -> str | None:
        for name, value in self.headers:
            if name.lower() == "content-type":
                return value.split(";")[0].strip() or None
        return None


def download(client: HttpClient, url: str, dest: Path, *, max_bytes: int, what: str) -> Capture:
    """Stream ``url`` into ``dest``; HTTP errors become statuses (404 -> platform-404, 401/403 -> restricted)."""
    try:
        got = client.download(url, dest, max_bytes=max_bytes, hashes=ALGORITHMS)
    except TooLargeError as exc:
        raise DatasetIngestFailure("mismatch-size", f"{what}: {exc}") from exc
    except RefusedAddress as exc:
        raise blocked_by_config(what, exc) from exc
    except FetchError as exc:
        if exc.retryable:
            raise DatasetIngestFailure("fetch-error", f"{what}: {exc}") from exc
        status = {404: "platform-404", 410: "platform-404", 401: "platform-restricted", 403: "platform-restricted"}
        raise DatasetIngestFailure(status.get(exc.status, "terminal-bad-status"), f"{what}: {exc}") from exc
    return Capture(
        url=got.url,
        path=dest,
        digests=Digests(got.size, **got.digests),
        status=got.status,
        dt=timestamp14(),
        headers=[(k, v) for k, v in got.headers.items() if k.lower() not in DROP_HEADERS],
        hops=[u for u, _ in got.history] + [got.url],
    )
