"""One small error hierarchy: every error names where it happened and whether a retry can help."""

from __future__ import annotations


class IngestError(Exception):
    """Base error. ``str(err)`` names the provider, file and record it concerns."""

    retryable_default = False

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        file: str | None = None,
        record: str | None = None,
        retryable: bool | None = None,
    ):
        super().__init__(message)
        self.message = message
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


class ConfigError(IngestError):
    """A setting or registry entry is missing or invalid."""


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


class ParseError(IngestError):
    """Input could not be parsed (bad XML, JSON, RDF, Avro...)."""


class LimitError(IngestError):
    """A bound on remote data was reached (pages, time, pages without new records): a retry meets it again."""


class ValidationError(IngestError):
    """Input parsed but breaks a rule of the target model."""
