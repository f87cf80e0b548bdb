"""One small error hierarchy: every error names where it happened and whether a retry can help.

Callers that know more (the provider, the file) add it on the way up with :func:`context`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Self


class IngestError(Exception):
    """Base error. ``str(err)`` names the provider, file and record it concerns; ``hint`` (optional, not part of
    ``str``) says what the person who reads it can do about it (the command line prints it)."""

    retryable_default = False

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        file: str | None = None,
        record: str | None = None,
        retryable: bool | None = None,
        hint: str | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.provider = provider
        self.file = file
        self.record = record
        self.retryable = self.retryable_default if retryable is None else retryable

    def __str__(self) -> str:
        where = [
            f"{label} {value!r}"
            for label, value in (("provider", self.provider), ("file", self.file), ("record", self.record))
            if value
        ]
        return f"{self.message} ({', '.join(where)})" if where else self.message

    def add_context(
        self, *, provider: str | None = None, file: str | None = None, record: str | None = None,
        doing: str | None = None,
    ) -> Self:
        """Fill in provider, file and record where still missing (a deeper frame knew better) and append ``doing``
        (what was being done: "fetching page 3") to the message; type, ``retryable`` and cause stay. Returns self."""
        self.provider = self.provider or provider
        self.file = self.file or file
        self.record = self.record or record
        if doing:
            self.message = f"{self.message} {doing}"
            self.args = (self.message,)
        return self


class ConfigError(IngestError):
    """A setting or registry entry is missing or invalid."""


class UsageError(ConfigError):
    """A command-line argument is missing, malformed or names something that does not exist."""


class FetchError(IngestError):
    """A network fetch failed; retryable for timeouts, 429 and 5xx."""

    def __init__(self, message: str, *, status: int | None = None, url: str | None = None, **kwargs):
        if "retryable" not in kwargs or kwargs["retryable"] is None:
            kwargs["retryable"] = status is None or status == 429 or status >= 500
        kwargs.setdefault("file", url)
        super().__init__(message, **kwargs)
        self.status = status
        self.url = url
        self.body: bytes | None = None  # the start of an error response, when there was one


class RefusedAddress(FetchError):
    """A URL's host is not a public address and this configuration does not allow private ones: a matter of
    configuration (``allow_private``, the hosts a block names), not of the URL; the same configuration refuses
    it again."""

    def __init__(self, message: str, *, url: str | None = None, **kwargs):
        super().__init__(message, url=url, retryable=False, **kwargs)


class TooLargeError(FetchError):
    """A response body went past its size cap; a retry meets the same body."""

    def __init__(self, limit: int, *, url: str | None = None, **kwargs):
        super().__init__(f"a body larger than {limit} bytes", url=url, retryable=False, **kwargs)
        self.limit = limit


class ParseError(IngestError):
    """Input could not be parsed (bad XML, JSON, RDF, Avro...)."""


class ArchiveError(ParseError):
    """A zip or tar is unreadable, or it or one of its members breaks a safety rule (:mod:`ingest_assets.core.archives`)."""


class LimitError(IngestError):
    """A bound on remote data was reached (pages, time, pages without new records): a retry meets it again."""


class ValidationError(IngestError):
    """Input parsed but breaks a rule of the target model."""


class DatabaseError(IngestError):
    """The SQL database could not be reached or dropped the connection (a retry can help once it is back); ``file``
    names it (URL without password)."""

    retryable_default = True


class StorageError(IngestError):
    """The storage backend failed: an object store's 5xx or throttling, a connection broken or timed out (a retry
    can help), or a refusal such as access denied (it cannot)."""


class StorageLimitError(StorageError):
    """Storage refused a write: the disk or quota is full (a retry can help once space is freed) or a file went past
    the file-size limit (``RLIMIT_FSIZE``, the filesystem's largest file: a retry meets it again)."""


class NotFoundError(IngestError):
    """What was asked for (a record, graph, object or dataset) is not in the stores."""


@contextmanager
def context(
    *, provider: str | None = None, file: str | None = None, record: str | None = None, doing: str | None = None
) -> Iterator[None]:
    """Add context (:meth:`IngestError.add_context`) to any IngestError raised inside the block."""
    try:
        yield
    except IngestError as exc:
        exc.add_context(provider=provider, file=file, record=record, doing=doing)
        raise
