"""Elasticsearch client helpers shared by the search index and the ResourceSync index: the server named
without the credentials its URL may carry, and client errors as :class:`FetchError` (retryable for 429,
5xx and transport failures)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from elasticsearch import ApiError, Elasticsearch, TransportError

from ingest_assets.core.errors import ConfigError, FetchError

_USERINFO = re.compile(r"^((?:[A-Za-z][A-Za-z0-9+.-]*:)?//)?[^/?#]*@")


def redacted(url: str) -> str:
    """``url`` without ``user:password@``: the form to show in errors and logs."""
    return _USERINFO.sub(r"\1", url, count=1)


def connect(url: str, **options) -> Elasticsearch:
    """The official client for ``url``; a malformed URL is a :class:`ConfigError` that does not show it whole."""
    try:
        return Elasticsearch(url, **options)
    except ValueError as err:  # the client's message quotes the URL, credentials included
        shown = redacted(url)
        raise ConfigError(f"invalid Elasticsearch URL: {str(err).replace(url, shown)}", file=shown) from None


def error_type(err: ApiError) -> str:
    """The ``error.type`` of an error response, or ``unknown``."""
    error = err.body.get("error") if isinstance(err.body, dict) else None
    return error.get("type", "unknown") if isinstance(error, dict) else "unknown"


def reason(err: ApiError) -> str:
    """``<type>: <reason>`` of an error response, else the client's message."""
    error = err.body.get("error") if isinstance(err.body, dict) else None
    if isinstance(error, dict):
        return f"{error.get('type')}: {error.get('reason')}"
    return str(error or err.message)


@contextmanager
def translated(action: str, url: str) -> Iterator[None]:
    """Client errors raised in the block become ``FetchError("Elasticsearch <action> failed: ...")`` with the
    response status, naming the server by its redacted ``url``."""
    try:
        yield
    except ApiError as err:
        raise FetchError(
            f"Elasticsearch {action} failed: HTTP {err.meta.status} {reason(err)}",
            status=err.meta.status,
            url=redacted(url),
        ) from err
    except TransportError as err:
        raise FetchError(f"Elasticsearch {action} failed: {err.message}", url=redacted(url)) from err
