"""The one HTTP client: timeouts, retries with backoff, size limits and a guard against hostile URLs.

Providers hand us URLs (endpoints, VoID dumps, dataset landing pages). Every hop of a redirect chain is
checked: only http(s), and no loopback/private/link-local addresses unless ``allow_private`` is set.
"""

from __future__ import annotations

import ipaddress
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

import requests

from ingest_assets.errors import FetchError
from ingest_assets.version import SOFTWARE_VERSION

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
DEFAULT_MAX_BYTES = 256 * 1024 * 1024
ERROR_BODY_BYTES = 64 * 1024
USER_AGENT = f"ingest-assets/{SOFTWARE_VERSION}"


@dataclass
class HttpResponse:
    url: str
    status: int
    headers: dict[str, str]
    content: bytes
    history: list[tuple[str, int]] = field(default_factory=list)

    @property
    def text(self) -> str:
        return self.content.decode(self.encoding, errors="replace")

    @property
    def encoding(self) -> str:
        return requests.utils.get_encoding_from_headers(self.headers) or "utf-8"

    def json(self):
        import json

        return json.loads(self.content)


def check_url(url: str, *, allow_private: bool = False, allowed_schemes=("http", "https")) -> None:
    """Refuse URLs a provider must not make us fetch (``file://``, loopback, private ranges...)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:  # a bad port or bracketed host
        raise FetchError(f"malformed URL: {exc}", url=url, retryable=False) from exc
    if parts.scheme.lower() not in allowed_schemes:
        raise FetchError(f"refusing URL scheme {parts.scheme or '(none)'!r}", url=url, retryable=False)
    if not parts.hostname:
        raise FetchError("URL has no host", url=url, retryable=False)
    if allow_private:
        return
    try:
        infos = socket.getaddrinfo(parts.hostname, port or 443, proto=socket.IPPROTO_TCP)
    except socket.gaierror as exc:
        raise FetchError(f"cannot resolve host {parts.hostname!r}: {exc}", url=url, retryable=True) from exc
    for info in infos:
        address = ipaddress.ip_address(info[4][0].split("%")[0])
        if not all(a.is_global for a in _addresses_within(address)):
            raise FetchError(
                f"refusing {parts.hostname} -> {address}: not a public address (allow_private is off)",
                url=url,
                retryable=False,
            )


NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _addresses_within(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> list:
    """The address and any IPv4 address it carries (mapped, 6to4, Teredo, NAT64), all of which must be public."""
    found = [address]
    if isinstance(address, ipaddress.IPv6Address):
        for inner in (address.ipv4_mapped, address.sixtofour, address.teredo[1] if address.teredo else None):
            if inner is not None:
                found.append(inner)
        if address in NAT64:
            found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return found


class HttpClient:
    def __init__(
        self,
        *,
        timeout: tuple[float, float] | float = (5, 60),
        retries: int = 3,
        backoff: float = 0.5,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_redirects: int = 10,
        allow_private: bool = False,
        allowed_schemes: tuple[str, ...] = ("http", "https"),
        session: requests.Session | None = None,
    ):
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_bytes = max_bytes
        self.max_redirects = max_redirects
        self.allow_private = allow_private
        self.allowed_schemes = allowed_schemes
        self.session = session or requests.Session()
        self.session.headers.setdefault("User-Agent", USER_AGENT)

    def get(self, url: str, *, params=None, headers=None, max_bytes: int | None = None) -> HttpResponse:
        """GET with retries; the body is read fully but never beyond ``max_bytes``.

        A connection that breaks while the body is read is retried like one that fails to open.
        """
        limit = self.max_bytes if max_bytes is None else max_bytes
        attempt = 0
        while True:
            try:
                with self.stream(url, params=params, headers=headers) as (response, history):
                    chunks, size = [], 0
                    for chunk in response.iter_content(64 * 1024):
                        size += len(chunk)
                        if size > limit:
                            raise FetchError(f"response larger than {limit} bytes", url=response.url, retryable=False)
                        chunks.append(chunk)
                    return HttpResponse(response.url, response.status_code, dict(response.headers), b"".join(chunks), history)
            except (requests.exceptions.ChunkedEncodingError, requests.ConnectionError) as exc:
                if attempt >= self.retries:
                    raise FetchError(f"connection broke while reading the body: {exc}", url=url, retryable=True) from exc
                self._sleep(attempt, None)
                attempt += 1

    @contextmanager
    def stream(self, url: str, *, params=None, headers=None, method: str = "GET", data=None) -> Iterator[
        tuple[requests.Response, list[tuple[str, int]]]
    ]:
        """Open a streaming response after redirects (each hop checked); yields ``(response, hops)``.

        Retries connection errors, timeouts, 429 and 5xx with exponential backoff (``Retry-After`` honoured).
        A final 4xx/5xx is raised as :class:`FetchError`.
        """
        attempt = 0
        while True:
            try:
                response, history = self._open(url, params, headers, method, data)
            except (requests.ConnectionError, requests.Timeout) as exc:
                if attempt >= self.retries:
                    raise FetchError(f"{type(exc).__name__}: {exc}", url=url, retryable=True) from exc
                self._sleep(attempt, None)
                attempt += 1
                continue
            if response.status_code in RETRY_STATUSES and attempt < self.retries:
                retry_after = response.headers.get("Retry-After")
                response.close()
                self._sleep(attempt, retry_after)
                attempt += 1
                continue
            break
        try:
            if response.status_code >= 400:
                error = FetchError(f"HTTP {response.status_code}", status=response.status_code, url=response.url)
                error.body = response.raw.read(ERROR_BODY_BYTES, decode_content=True)  # e.g. an OAI-PMH error document
                raise error
            yield response, history
        finally:
            response.close()

    def _open(self, url, params, headers, method, data) -> tuple[requests.Response, list[tuple[str, int]]]:
        history: list[tuple[str, int]] = []
        current = url
        for _ in range(self.max_redirects + 1):
            check_url(current, allow_private=self.allow_private, allowed_schemes=self.allowed_schemes)
            response = self.session.request(
                method,
                current,
                params=params if not history else None,
                headers=headers,
                data=data,
                timeout=self.timeout,
                stream=True,
                allow_redirects=False,
            )
            if response.is_redirect and "Location" in response.headers:
                history.append((response.url, response.status_code))
                current = urljoin(response.url, response.headers["Location"])
                response.close()
                method, data = ("GET", None) if response.status_code in (301, 302, 303) else (method, data)
                continue
            return response, history
        raise FetchError(f"more than {self.max_redirects} redirects", url=url, retryable=False)

    def _sleep(self, attempt: int, retry_after: str | None) -> None:
        delay = self.backoff * (2**attempt)
        if retry_after and retry_after.isdigit():
            delay = max(delay, min(float(retry_after), 60.0))
        time.sleep(delay)
