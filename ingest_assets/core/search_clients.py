"""The search-server client shared by the search index and the ResourceSync index: one API (the official
``elasticsearch`` 8.19 client's) for Elasticsearch and OpenSearch, the server named without the credentials its
URL may carry, and client errors as :class:`FetchError` (retryable for 429, 5xx and transport failures).

The two servers differ only here. :func:`connect` returns a :class:`SearchClient`, which learns what it talks to
from the server's first answer (``GET /``: Elasticsearch sends ``X-Elastic-Product``, OpenSearch names itself in
``version.distribution``), or from the URL (a ``opensearch+`` or ``elasticsearch+`` scheme prefix; an AWS
OpenSearch Service endpoint, ``*.es.amazonaws.com`` or ``*.aoss.amazonaws.com``, is OpenSearch with requests
signed by SigV4 over boto3's credentials). For Elasticsearch it is the 8.19 client itself: 8.x servers, and 9.x
through their REST compatibility with 8.x clients. For OpenSearch, which refuses that client (its compatibility
media types answer 406, and the client refuses a server that is not Elasticsearch), every request the same API
builds goes through ``opensearch-py``'s transport instead, the two point-in-time endpoints OpenSearch names
differently are translated, and its errors become the same exception types.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from elastic_transport import (
    ApiResponseMeta,
    HeadApiResponse,
    HttpHeaders,
    NodeConfig,
    ObjectApiResponse,
    TransportError,
)
from elastic_transport import ConnectionError as TransportConnectionError
from elastic_transport import ConnectionTimeout as TransportTimeout
from elasticsearch import ApiError, Elasticsearch
from elasticsearch.exceptions import HTTP_EXCEPTIONS

from ingest_assets.core.errors import ConfigError, FetchError
from ingest_assets.core.settings import SEARCH_PRODUCTS as PRODUCTS
from ingest_assets.core.settings import is_search_server

_USERINFO = re.compile(r"^((?:[A-Za-z][A-Za-z0-9+.-]*:)?//)?[^/?#]*@")
ELASTICSEARCH, OPENSEARCH = PRODUCTS["elasticsearch"], PRODUCTS["opensearch"]
_AWS_HOST = re.compile(r"\.(?P<region>[a-z0-9-]+)\.(?P<service>es|aoss)\.amazonaws\.com$")


def redacted(url: str) -> str:
    """``url`` without ``user:password@``: the form to show in errors and logs."""
    return _USERINFO.sub(r"\1", url, count=1)


@dataclass
class _Server:
    """What every copy of a client (``client.options(...)`` makes copies) shares about its server."""

    url: str  # without a product prefix, credentials kept (they go to the transport)
    shown: str  # redacted
    product: str | None
    aws: tuple[str, str] | None  # (region, service) when requests are signed with SigV4
    transport_options: dict
    lock: threading.Lock = field(default_factory=threading.Lock)
    opensearch: Any = None  # opensearchpy.Transport, made on first use


class SearchClient(Elasticsearch):
    """The Elasticsearch 8.19 client, also speaking to OpenSearch (see the module docstring)."""

    _server: _Server

    def __init__(self, hosts=None, *, _server: _Server | None = None, **options):
        super().__init__(hosts, **options)
        if _server is not None:
            self._server = _server

    def options(self, **options) -> "SearchClient":
        client = super().options(**options)
        client._server = self._server
        return client

    @property
    def product(self) -> str:
        """``Elasticsearch`` or ``OpenSearch`` (asks the server when the URL did not say)."""
        server = self._server
        with server.lock:
            if server.product is None:
                server.product = self._ask_product()
        return server.product

    @property
    def shown_url(self) -> str:
        return self._server.shown

    def _ask_product(self) -> str:
        response = self.transport.perform_request("GET", "/", headers={"accept": "application/json"})
        if response.meta.headers.get("x-elastic-product") == ELASTICSEARCH:
            return ELASTICSEARCH
        body = response.body if isinstance(response.body, dict) else {}
        if str(body.get("version", {}).get("distribution", "")).lower() == "opensearch":
            return OPENSEARCH
        raise ConfigError(
            f"{self._server.shown} answered GET / with HTTP {response.meta.status} and neither Elasticsearch's "
            "X-Elastic-Product header nor OpenSearch's version.distribution: name the product in the URL "
            "(opensearch+https://... or elasticsearch+https://...)",
            file=self._server.shown,
        )

    def perform_request(self, method: str, path: str, *, params=None, headers=None, body=None, **rest):
        if self.product == ELASTICSEARCH:
            return super().perform_request(method, path, params=params, headers=headers, body=body, **rest)
        return self._opensearch_request(method, path, params or {}, dict(headers or {}), body)

    # --- OpenSearch ---------------------------------------------------------------------------------
    def _opensearch_transport(self):
        server = self._server
        with server.lock:
            if server.opensearch is None:
                server.opensearch = _opensearch_transport(server)
            return server.opensearch

    def _opensearch_request(self, method: str, path: str, params: dict, headers: dict, body):
        path, body, pit = _opensearch_pit(method, path, body)
        if isinstance(body, list | tuple):  # _bulk and _msearch: one JSON document per line
            body = b"".join(_ndjson_line(line) for line in body)
        headers = {k: v for k, v in headers.items() if k.lower() in ("content-type", "accept")} or None
        meta = self._meta(200)
        try:
            result = self._opensearch_transport().perform_request(
                method, path, params={k: _param(v) for k, v in params.items()}, body=body, headers=headers,
                timeout=self._request_timeout if isinstance(self._request_timeout, int | float) else None,
            )
        except Exception as err:
            ignored = getattr(self, "_ignore_status", None)
            status = getattr(err, "status_code", None)
            if isinstance(status, int) and isinstance(ignored, tuple | list) and status in ignored:
                return ObjectApiResponse(body=getattr(err, "info", None) or {}, meta=self._meta(status))
            raise self._translate(err) from err
        if method == "HEAD":
            return HeadApiResponse(meta=self._meta(200 if result else 404))
        if pit == "open" and isinstance(result, dict):
            result = {**result, "id": result.get("pit_id")}
        elif pit == "close" and isinstance(result, dict):
            freed = [p for p in result.get("pits", []) if p.get("successful")]
            result = {"succeeded": True, "num_freed": len(freed)}
        return ObjectApiResponse(body=result if result is not None else {}, meta=meta)

    def _meta(self, status: int) -> ApiResponseMeta:
        parts = urlsplit(self._server.url)
        node = NodeConfig(parts.scheme, parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80))
        return ApiResponseMeta(status=status, http_version="1.1", headers=HttpHeaders(), duration=0.0, node=node)

    def _translate(self, err: Exception) -> Exception:
        """An opensearch-py error as the Elasticsearch client's exception of the same kind."""
        from opensearchpy.exceptions import ConnectionError as OsConnectionError
        from opensearchpy.exceptions import ConnectionTimeout as OsTimeout
        from opensearchpy.exceptions import TransportError as OsTransportError

        if isinstance(err, OsTimeout):
            return TransportTimeout(str(err.info or err))
        if isinstance(err, OsConnectionError):
            return TransportConnectionError(str(err.info or err))
        if isinstance(err, OsTransportError) and isinstance(err.status_code, int):
            info = err.info
            message = str(info)
            if isinstance(info, dict):
                error = info.get("error", message)
                message = error.get("type", message) if isinstance(error, dict) else str(error)
            return HTTP_EXCEPTIONS.get(err.status_code, ApiError)(message=message, meta=self._meta(err.status_code),
                                                                 body=info)
        return err


def _ndjson_line(line) -> bytes:
    if isinstance(line, bytes):
        return line + b"\n"
    text = line if isinstance(line, str) else json.dumps(line, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8") + b"\n"


def _param(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(map(str, value))
    return str(value)


def _opensearch_pit(method: str, path: str, body) -> tuple[str, Any, str | None]:
    """OpenSearch's names for the point-in-time endpoints: ``POST /<index>/_pit`` opens one at
    ``/<index>/_search/point_in_time`` (answering ``pit_id``), ``DELETE /_pit`` with ``{"id"}`` closes one at
    ``/_search/point_in_time`` with ``{"pit_id": [...]}``."""
    if method == "POST" and path.endswith("/_pit"):
        return path[: -len("/_pit")] + "/_search/point_in_time", body, "open"
    if method == "DELETE" and path == "/_pit":
        return "/_search/point_in_time", {"pit_id": [body["id"]]}, "close"
    return path, body, None


def _opensearch_transport(server: _Server):
    from opensearchpy import OpenSearch, RequestsHttpConnection

    options = dict(server.transport_options)
    if server.aws:
        import boto3
        from opensearchpy import RequestsAWSV4SignerAuth

        region, service = server.aws
        credentials = boto3.Session().get_credentials()
        if credentials is None:
            raise ConfigError(f"{server.shown} is an AWS endpoint and boto3 found no AWS credentials", file=server.shown)
        options.update(http_auth=RequestsAWSV4SignerAuth(credentials, region, service),
                       connection_class=RequestsHttpConnection)
    return OpenSearch([server.url], **options).transport


def _with_port(url: str) -> str:
    """``url`` with its scheme's default port written out: the Elasticsearch client wants one (AWS endpoints and
    servers behind a proxy are often named without). Not for opensearch-py: a port in the URL would go into the
    ``Host`` header, and a SigV4 signature is made for the host without it."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        return url  # a malformed port: the client's own error says so
    if port is not None or not parts.hostname:
        return url
    netloc = f"{parts.netloc}:{443 if parts.scheme == 'https' else 80}"
    return parts._replace(netloc=netloc).geturl()


def aws_endpoint(url: str) -> tuple[str, str] | None:
    """``(region, service)`` of an AWS OpenSearch Service (``es``) or Serverless (``aoss``) endpoint URL."""
    found = _AWS_HOST.search(urlsplit(url).hostname or "")
    return (found["region"], found["service"]) if found else None


def connect(url: str, **options) -> SearchClient:
    """The client for the server at ``url`` (``request_timeout``, ``max_retries``, ``retry_on_timeout``,
    ``retry_on_status`` apply to either product). A malformed URL is a :class:`ConfigError` that does not show
    it whole."""
    shown = redacted(url)
    if not is_search_server(url):
        raise ConfigError(f"invalid search server URL {shown!r}: use http(s)://, opensearch+http(s)://, or "
                          "elasticsearch+http(s)://", file=shown)
    scheme, _, rest = url.partition("://")
    product, _, transport = scheme.rpartition("+")
    plain = f"{transport}://{rest}"
    aws = aws_endpoint(plain)
    known = PRODUCTS.get(product) or (OPENSEARCH if aws else None)
    transport_options = {
        "timeout": options.get("request_timeout", 10),
        "max_retries": options.get("max_retries", 3),
        "retry_on_timeout": options.get("retry_on_timeout", False),
        "retry_on_status": tuple(options.get("retry_on_status", (502, 503, 504))),
    }
    server = _Server(plain, redacted(plain), known, aws, transport_options)
    try:
        return SearchClient(_with_port(plain), _server=server, **options)
    except ValueError as err:  # the client's message quotes the URL, credentials included
        raise ConfigError(f"invalid search server URL: {str(err).replace(plain, shown)}", file=shown) from None


def error_type(err: ApiError) -> str:
    """The ``error.type`` of an error response, or ``unknown``."""
    error = err.body.get("error") if isinstance(err.body, dict) else None
    return error.get("type", "unknown") if isinstance(error, dict) else "unknown"


def reason(err: ApiError) -> str:
    """``<type>: <reason>`` of an error response, with its first root cause when that says more (a search's
    "all shards failed" names what failed only there), else the client's message."""
    error = err.body.get("error") if isinstance(err.body, dict) else None
    if not isinstance(error, dict):
        return str(error or err.message)
    said = f"{error.get('type')}: {error.get('reason')}"
    causes = error.get("root_cause") or [f.get("reason") for f in error.get("failed_shards") or [] if f.get("reason")]
    cause = causes[0] if causes and isinstance(causes[0], dict) else None
    if cause and (cause.get("type"), cause.get("reason")) != (error.get("type"), error.get("reason")):
        said += f" ({cause.get('type')}: {cause.get('reason')})"
    return said


@contextmanager
def translated(action: str, client: SearchClient) -> Iterator[None]:
    """Client errors raised in the block become ``FetchError("<product> <action> failed: ...")`` with the
    response status, naming the server by its redacted URL."""
    product = client._server.product or "search server"  # not asked again: the server may be down
    url = client.shown_url
    try:
        yield
    except ApiError as err:
        raise FetchError(
            f"{product} {action} failed: HTTP {err.meta.status} {reason(err)}", status=err.meta.status, url=url
        ) from err
    except TransportError as err:
        raise FetchError(f"{product} {action} failed: {err.message}", url=url) from err
