"""Download one file to local disk, hashing md5+sha1+sha256 in the same read pass, with a size limit."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import requests

from ingest_assets.datasets.fetch import timestamp14
from ingest_assets.datasets.hashing import Digests, MultiHasher
from ingest_assets.datasets.status import DatasetIngestFailure
from ingest_assets.errors import FetchError
from ingest_assets.http import HttpClient

READ_SIZE = 1024 * 1024  # requests/urllib3 assemble bigger reads from many small socket reads: no gain
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
    hasher = MultiHasher()
    try:
        with client.stream(url) as (response, history), open(dest, "wb") as sink:
            for chunk in response.iter_content(READ_SIZE):
                hasher.update(chunk)
                if hasher.size > max_bytes:
                    raise DatasetIngestFailure("mismatch-size", f"{what}: {url} is larger than {max_bytes} bytes "
                                               f"(received {hasher.size} before stopping)")
                sink.write(chunk)
            headers = [(k, v) for k, v in response.headers.items() if k.lower() not in DROP_HEADERS]
            return Capture(
                url=response.url,
                path=dest,
                digests=hasher.digests(),
                status=response.status_code,
                dt=timestamp14(),
                headers=headers,
                hops=[u for u, _ in history] + [response.url],
            )
    except requests.RequestException as exc:  # the connection broke mid-body
        raise DatasetIngestFailure("fetch-error", f"{what}: {url}: {type(exc).__name__}: {exc}") from exc
    except FetchError as exc:
        if exc.retryable:
            raise DatasetIngestFailure("fetch-error", f"{what}: {exc}") from exc
        status = {404: "platform-404", 410: "platform-404", 401: "platform-restricted", 403: "platform-restricted"}
        raise DatasetIngestFailure(status.get(exc.status, "terminal-bad-status"), f"{what}: {exc}") from exc
