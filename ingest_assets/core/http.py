"""The one HTTP client: timeouts, retries with backoff, size limits and a guard against hostile URLs.

Bodies are read through :meth:`HttpClient.open` (chunks under a size cap, hashed on the way), into memory by
:meth:`HttpClient.get` or to a file by :meth:`HttpClient.download`.

Providers hand us URLs (endpoints, VoID dumps, dataset landing pages). Every hop of a redirect chain is
checked: only http(s), and no loopback/private/link-local addresses unless ``allow_private`` is set. The
connection goes to the address that was checked (the name is not resolved a second time, so a DNS answer
that changes between check and connect cannot reach a private address), with the original Host and TLS name.

Each retry is one warning on the ``ingest_assets.core.http`` logger: what failed, the URL and the wait. A request
is tried at most ``retries + 1`` times (waits 0, 2 x backoff, 4 x backoff..., or the server's ``Retry-After`` up to
:data:`MAX_RETRY_AFTER`); a request that cannot be sent at all fails naming the cause (connection refused, a host
that does not resolve, a timeout).
"""

from __future__ import annotations

import ipaddress
import logging
import re
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar
from urllib.parse import urljoin

import requests
from requests.adapters import HTTPAdapter
from requests.structures import CaseInsensitiveDict
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, LocationParseError, MaxRetryError, ReadTimeoutError
from urllib3.util import parse_url
from urllib3.util.retry import Retry

from ingest_assets.core import json_input
from ingest_assets.core.digests import MultiHasher
from ingest_assets.core.errors import FetchError, RefusedAddress, TooLargeError
from ingest_assets.core.version import software_version

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
DEFAULT_MAX_BYTES = 256 * 1024 * 1024
ERROR_BODY_BYTES = 64 * 1024
READ_CHUNK = 64 * 1024
DOWNLOAD_CHUNK = 1024 * 1024  # requests/urllib3 assemble bigger reads from many small socket reads: no gain
MAX_RETRY_AFTER = 60.0
MAX_RESPONSE_SECONDS = 3600.0  # wall clock from request to last byte: a body trickled within each read timeout ends
CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})
log = logging.getLogger(__name__)


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
        return json_input.loads(self.content)


@dataclass
class Downloaded:
    """A body written to ``path``: where it ended up (``url`` after redirects), its size and hex digests."""

    url: str
    status: int
    headers: CaseInsensitiveDict
    history: list[tuple[str, int]]
    path: Path
    size: int
    digests: dict[str, str]


class Body:
    """An open response, read once through :meth:`chunks`: more than ``max_bytes`` raises a TooLargeError, and
    every chunk is fed to the hashlib algorithms named in ``hashes`` (:class:`~ingest_assets.core.digests.MultiHasher`)."""

    def __init__(self, response: requests.Response, history: list[tuple[str, int]], *, max_bytes: int,
                 hashes: tuple[str, ...], chunk_size: int):
        self.response, self.history, self.max_bytes, self.chunk_size = response, history, max_bytes, chunk_size
        self.url, self.status, self.headers = response.url, response.status_code, response.headers
        self._hasher = MultiHasher(hashes)

    @property
    def size(self) -> int:
        """Bytes :meth:`chunks` yielded so far."""
        return self._hasher.size

    def chunks(self) -> Iterator[bytes]:
        for chunk in self.response.iter_content(self.chunk_size):
            if self.size + len(chunk) > self.max_bytes:
                raise TooLargeError(self.max_bytes, url=self.url)
            self._hasher.update(chunk)
            yield chunk

    def read(self) -> bytes:
        return b"".join(self.chunks())

    def digests(self) -> dict[str, str]:
        """Hex digests of what :meth:`chunks` yielded so far."""
        return self._hasher.hexdigests()


# A connection that breaks while a body is read (requests raises these from iter_content).
_BROKEN_BODY = (requests.exceptions.ChunkedEncodingError, requests.ConnectionError)


class _BodyBroke(FetchError):
    """The connection broke while a body was read: the request is read again (a request that could not be sent
    at all was already retried by the Retry, and is not retried a second time around it)."""
_T = TypeVar("_T")


# Characters that parsers disagree about (WHATWG ends the authority at a backslash, RFC 3986 does not).
_AMBIGUOUS = re.compile(r"[\x00-\x20\x7f\\]")


def check_url(url: str, *, allow_private: bool = False, allowed_schemes=("http", "https"),
              private_hosts: frozenset[str] = frozenset()) -> tuple[str, str | None]:
    """Refuse URLs a provider must not make us fetch (``file://``, loopback, private ranges...); returns the host
    and the checked address to connect to (None with ``allow_private``, or for a host in ``private_hosts``,
    the ones configured to be reached on private addresses: the system resolves it). A non-public address is
    refused with :class:`RefusedAddress`.

    The host judged is the one urllib3 (which ``requests`` connects with) parses; URLs whose parsers could disagree
    about the host (userinfo, backslashes, whitespace or control characters, percent-encoded hosts) are refused.
    """
    if _AMBIGUOUS.search(url):
        raise FetchError("refusing URL with a backslash, whitespace or control character", url=url, retryable=False)
    try:
        parts = parse_url(url)
    except LocationParseError as exc:  # a bad port or bracketed host
        raise FetchError(f"malformed URL: {exc}", url=url, retryable=False) from exc
    if (parts.scheme or "").lower() not in allowed_schemes:
        raise FetchError(f"refusing URL scheme {parts.scheme or '(none)'!r}", url=url, retryable=False)
    if not parts.host:
        raise FetchError("URL has no host", url=url, retryable=False)
    if parts.auth is not None or "%" in parts.host:
        raise FetchError("refusing URL with userinfo or a percent-encoded host", url=url, retryable=False)
    host = parts.host.strip("[]").lower()
    if allow_private or host in private_hosts:
        return host, None
    try:
        infos = socket.getaddrinfo(host, parts.port or 443, proto=socket.IPPROTO_TCP)
    except socket.gaierror as exc:
        raise FetchError(f"cannot resolve host {host!r}: {exc}", url=url, retryable=True) from exc
    for info in infos:
        address = ipaddress.ip_address(info[4][0].split("%")[0])
        if not all(a.is_global for a in _addresses_within(address)):
            raise RefusedAddress(f"refusing {host} -> {address}: not a public address (allow_private is off)", url=url)
    return host, infos[0][4][0]


# host -> the address check_url approved, for the request being sent (set around each hop by HttpClient)
_PINNED: ContextVar[dict[str, str]] = ContextVar("ingest_assets_pinned_addresses", default={})


class _Pinned:
    """A urllib3 connection that opens its socket to the pinned address of its host, if there is one; Host
    header, TLS SNI and certificate checks keep the host name."""

    def _new_conn(self):
        address = _PINNED.get().get(self._dns_host.rstrip(".").lower())
        if address is None:
            return super()._new_conn()
        host, self._dns_host = self._dns_host, address
        try:
            return super()._new_conn()
        finally:
            self._dns_host = host


class _PinnedHTTPConnection(_Pinned, HTTPConnection):
    pass


class _PinnedHTTPSConnection(_Pinned, HTTPSConnection):
    pass


class _PinnedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _PinnedHTTPConnection


class _PinnedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _PinnedHTTPSConnection


class _PinningAdapter(HTTPAdapter):
    def init_poolmanager(self, *args, **kwargs) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _PinnedHTTPPool, "https": _PinnedHTTPSPool}


NAT64 = ipaddress.ip_network("64:ff9b::/96")


def origin(url: str) -> tuple[str, str, int | None]:
    """Scheme, host and port of ``url`` (as urllib3 parses it)."""
    parts = parse_url(url)
    return (parts.scheme or "").lower(), (parts.host or "").lower(), parts.port


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


class _Retry(Retry):
    """urllib3's ``Retry`` (``Retry-After`` in seconds or as an HTTP date), capped: a provider cannot park a worker.
    Each retry it grants is logged as one line (urllib3's own warning says neither the whole URL nor the wait)."""

    def parse_retry_after(self, retry_after: str) -> float:
        return min(super().parse_retry_after(retry_after), MAX_RETRY_AFTER)

    def increment(self, method=None, url=None, response=None, error=None, _pool=None, _stacktrace=None):
        granted = super().increment(method, url, response, error, _pool, _stacktrace)  # MaxRetryError when spent
        if _pool is not None:
            url = f"{_pool.scheme}://{_pool.host}{'' if _pool.port in (None, 80, 443) else f':{_pool.port}'}{url}"
        wait = (granted.get_retry_after(response) if response is not None else None) or granted.get_backoff_time()
        tries = len(granted.history)
        log.warning("%s %s: %s; retry %d of %d %s", method or "GET", url,
                    f"HTTP {response.status}" if response is not None else reason(error),
                    tries, tries + (granted.total or 0), f"in {wait:g} s" if wait else "at once")
        return granted


def reason(error: BaseException | None) -> str:
    """Why a request got no answer, in words: connection refused, a host that does not resolve, a timeout...
    (the first known cause down ``error``'s chain of causes, else the error's own text)."""
    chain, seen = [], error
    while seen is not None and len(chain) < 10:
        chain.append(seen)
        seen = getattr(seen, "reason", None) or seen.__cause__ or seen.__context__ or next(
            (arg for arg in getattr(seen, "args", ()) if isinstance(arg, BaseException)), None)
    for found in chain:
        if isinstance(found, socket.gaierror):
            return f"the host name does not resolve ({found.strerror})"
        if isinstance(found, ConnectionRefusedError):
            return "connection refused"
        if isinstance(found, ConnectionResetError):
            return "connection reset by the server"
    for found in chain:
        if isinstance(found, ReadTimeoutError):
            return "no answer within the read timeout"
        if isinstance(found, (ConnectTimeoutError, TimeoutError)):
            return "no connection within the connect timeout"
        if isinstance(found, OSError) and found.strerror:
            return found.strerror
    return str(error) if error is not None else "no answer"


def _socket_of(response: requests.Response) -> socket.socket | None:
    """The socket a response body is read from: the pooled connection's, or (for a response that closes its
    connection, where http.client hands the socket to the response) the one under the response's file."""
    sock = getattr(getattr(response.raw, "connection", None), "sock", None)
    if sock is None:
        body = getattr(getattr(response.raw, "_fp", None), "fp", None)  # http.client.HTTPResponse -> BufferedReader
        sock = getattr(getattr(body, "raw", None), "_sock", None)  # -> socket.SocketIO
    return sock


def _limit_body_time(response: requests.Response, seconds: float) -> threading.Timer:
    """End the response ``seconds`` after it opened, however its bytes trickle in: a timer shuts the socket
    down, and every body read (``iter_content``, ``raw.read``) then raises a FetchError (never a short body)."""
    cut = threading.Event()

    def expire() -> None:
        cut.set()
        sock = _socket_of(response)
        try:
            if sock is not None:
                sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    read = response.raw.read

    def read_before_deadline(*args, **kwargs):
        error = FetchError(f"response not complete within {seconds:g} s (a trickling body)", url=response.url,
                           retryable=True)
        if cut.is_set():
            raise error
        try:
            data = read(*args, **kwargs)
        except Exception as exc:
            if cut.is_set():
                raise error from exc
            raise
        if cut.is_set():
            raise error
        return data

    response.raw.read = read_before_deadline
    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    timer.start()
    return timer


class HttpClient:
    def __init__(
        self,
        *,
        timeout: tuple[float, float] | float = (5, 60),
        retries: int = 3,
        backoff: float = 0.5,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_redirects: int = 10,
        max_seconds: float = MAX_RESPONSE_SECONDS,
        allow_private: bool = False,
        private_hosts: frozenset[str] = frozenset(),
        allowed_schemes: tuple[str, ...] = ("http", "https"),
        session: requests.Session | None = None,
    ):
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_bytes = max_bytes
        self.max_redirects = max_redirects
        self.max_seconds = max_seconds
        self.allow_private = allow_private
        self.private_hosts = frozenset(host.lower() for host in private_hosts)  # reached on private addresses too
        self.allowed_schemes = allowed_schemes
        # headers (lower-case names) that never follow a redirect to another origin: credentials (a harvest adds
        # the names of its secret headers)
        self.credential_headers = CREDENTIAL_HEADERS
        self.session = session or requests.Session()
        self.session.headers.setdefault("User-Agent", f"ingest-assets/{software_version()}")
        adapter = _PinningAdapter(max_retries=self._retry())
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)

    def _retry(self) -> _Retry:
        """Connection errors, timeouts, 429 and 5xx, any method; redirects are followed (and checked) by ``_open``."""
        return _Retry(
            total=self.retries, redirect=False, status_forcelist=RETRY_STATUSES, allowed_methods=None,
            backoff_factor=self.backoff, backoff_max=MAX_RETRY_AFTER, raise_on_status=False,
        )

    def get(self, url: str, *, params=None, headers=None, max_bytes: int | None = None) -> HttpResponse:
        """GET with retries; the body is read fully but never beyond ``max_bytes`` (default: the client's).

        A connection that breaks while the body is read is retried like one that fails to open.
        """

        def read() -> HttpResponse:
            with self.open(url, params=params, headers=headers, max_bytes=max_bytes) as body:
                return HttpResponse(body.url, body.status, dict(body.headers), body.read(), body.history)

        return self._retrying_reads(url, read)

    def download(self, url: str, dest: Path, *, max_bytes: int | None = None, hashes: tuple[str, ...] = (),
                 params=None, headers=None) -> Downloaded:
        """Stream a GET into ``dest`` (memory stays flat), hashing with ``hashes`` on the way; as :meth:`get`,
        capped at ``max_bytes`` and retried when the connection breaks mid-body. A failure leaves no ``dest``."""

        def write() -> Downloaded:
            with self.open(url, params=params, headers=headers, max_bytes=max_bytes, hashes=hashes,
                           chunk_size=DOWNLOAD_CHUNK) as body, dest.open("wb") as out:
                for chunk in body.chunks():
                    out.write(chunk)
            return Downloaded(body.url, body.status, CaseInsensitiveDict(body.headers), body.history, dest, body.size,
                              body.digests())

        try:
            return self._retrying_reads(url, write)
        except BaseException:
            dest.unlink(missing_ok=True)
            raise

    def _retrying_reads(self, url: str, read: Callable[[], _T]) -> _T:
        """``read()`` again (after the Retry's backoff) while the connection breaks mid-body."""
        retry = self._retry()
        while True:
            try:
                return read()
            except _BodyBroke as exc:
                try:
                    retry = retry.increment("GET", url, error=exc.__cause__)
                except MaxRetryError:
                    raise exc from exc.__cause__
                retry.sleep()

    @contextmanager
    def open(self, url: str, *, max_bytes: int | None = None, hashes: tuple[str, ...] = (),
             chunk_size: int = READ_CHUNK, params=None, headers=None, method: str = "GET", data=None) -> Iterator[Body]:
        """:meth:`stream` with the body read through a :class:`Body` (``max_bytes`` defaults to the client's);
        a connection that breaks while it is read raises a retryable FetchError."""
        with self.stream(url, params=params, headers=headers, method=method, data=data) as (response, history):
            try:
                yield Body(response, history, max_bytes=self.max_bytes if max_bytes is None else max_bytes,
                           hashes=hashes, chunk_size=chunk_size)
            except _BROKEN_BODY as exc:
                raise _BodyBroke(f"connection broke while reading the body: {exc}", url=url, retryable=True) from exc

    @contextmanager
    def stream(self, url: str, *, params=None, headers=None, method: str = "GET", data=None) -> Iterator[
        tuple[requests.Response, list[tuple[str, int]]]
    ]:
        """Open a streaming response after redirects (each hop checked); yields ``(response, hops)``.

        The session's urllib3 ``Retry`` retries connection errors, timeouts, 429 and 5xx with exponential backoff
        (``Retry-After`` honoured, in seconds or as an HTTP date). A final 4xx/5xx is raised as :class:`FetchError`.
        """
        try:
            response, history = self._open(url, params, headers, method, data)
        except (requests.ConnectionError, requests.Timeout) as exc:
            where = parse_url(url)
            tried = "once" if self.retries == 0 else f"{self.retries + 1} times"
            raise FetchError(f"cannot reach {where.host}{f':{where.port}' if where.port else ''}: {reason(exc)} "
                             f"(tried {tried})", url=url, retryable=True) from exc
        deadline = _limit_body_time(response, self.max_seconds)
        try:
            if response.status_code >= 400:
                error = FetchError(f"HTTP {response.status_code}", status=response.status_code, url=response.url)
                error.body = response.raw.read(ERROR_BODY_BYTES, decode_content=True)  # e.g. an OAI-PMH error document
                raise error
            yield response, history
        finally:
            deadline.cancel()
            response.close()

    def _open(self, url, params, headers, method, data) -> tuple[requests.Response, list[tuple[str, int]]]:
        history: list[tuple[str, int]] = []
        current = url
        for _ in range(self.max_redirects + 1):
            host, address = check_url(current, allow_private=self.allow_private, allowed_schemes=self.allowed_schemes,
                                      private_hosts=self.private_hosts)
            pinned = _PINNED.set({host: address} if address else {})
            try:
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
            finally:
                _PINNED.reset(pinned)
            if response.is_redirect and "Location" in response.headers:
                history.append((response.url, response.status_code))
                current = urljoin(response.url, response.headers["Location"])
                response.close()
                if headers and origin(current) != origin(url):
                    headers = {k: v for k, v in headers.items() if k.lower() not in self.credential_headers}
                method, data = ("GET", None) if response.status_code in (301, 302, 303) else (method, data)
                continue
            return response, history
        raise FetchError(f"more than {self.max_redirects} redirects", url=url, retryable=False)
