"""Secrets a registry entry names but never holds (:class:`~ingest_assets.core.registry.SecretRef`): an API key
from an environment variable (``{env: NAME}``, read with the process's settings) or a secrets file
(``{file: /run/secrets/name}``).

The registry checks the form when it loads; :func:`resolve_secrets` reads the values of a block's secrets when the
work that needs them starts: a variable that is not set or a file that cannot be read is a :class:`SecretUnreadable`
naming its key below the block (``params.apikey``), never the value; the caller, which knows the entry, names entry
and file (``getty.harvest.params.apikey``). :class:`Secrets` holds the values and redacts them from
whatever is written or raised: URLs and messages (:meth:`Secrets.redact`), errors (:meth:`Secrets.scrub`), and
the HTTP libraries' own logs (urllib3 logs every request line, query included, at DEBUG level, which
``--verbose`` shows), through a filter on their loggers. A value is redacted as given and as a URL carries it
(percent-encoded, ``+`` for spaces).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from pathlib import Path
from urllib.parse import quote, quote_plus

from pydantic import BaseModel

from ingest_assets.core.errors import ConfigError, IngestError
from ingest_assets.core.registry import SecretRef
from ingest_assets.core.settings import Settings

MASK = "[redacted]"
MAX_SECRET_BYTES = 64 * 1024
# the loggers of the HTTP stack that write URLs (urllib3's request line, retries and redirects)
LIBRARY_LOGGERS = ("urllib3.connectionpool", "urllib3.connection", "urllib3.poolmanager", "urllib3.response",
                   "urllib3.util.retry")


def secret_refs(model: BaseModel, prefix: str = "") -> Iterator[tuple[str, SecretRef]]:
    """Every :class:`SecretRef` in a registry block, with its dotted key below the block (``params.apikey``)."""
    for name in type(model).model_fields:
        value = getattr(model, name)
        values = value.items() if isinstance(value, Mapping) else [(None, value)]
        for key, item in values:
            where = f"{prefix}{name}" + (f".{key}" if key is not None else "")
            if isinstance(item, SecretRef):
                yield where, item
            elif isinstance(item, BaseModel):
                yield from secret_refs(item, f"{where}.")


class SecretUnreadable(ConfigError):
    """A secret a block names cannot be read; ``key`` is where the block names it (``params.apikey``)."""

    def __init__(self, key: str, message: str):
        super().__init__(message)
        self.key = key


def resolve_secrets(block: BaseModel, settings: Settings | None = None) -> Secrets:
    """The values of the secrets in a registry ``block``, by their key below it; ``{env: NAME}`` from ``settings``
    (by default the process's). One that cannot be read: :class:`SecretUnreadable`."""
    return Secrets({key: _read(ref, key, settings) for key, ref in secret_refs(block)})


def _read(ref: SecretRef, key: str, settings: Settings | None) -> str:
    if ref.env is not None:
        value = (settings or Settings.current()).secret(ref.env)
        if value is None:
            raise SecretUnreadable(key, f"environment variable {ref.env} is not set (or empty)")
        return value
    path = Path(ref.file or "")
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_SECRET_BYTES + 1)
    except OSError as exc:
        raise SecretUnreadable(key, f"secrets file {path} cannot be read: {exc.strerror or type(exc).__name__}") from None
    if len(data) > MAX_SECRET_BYTES:
        raise SecretUnreadable(key, f"secrets file {path} is larger than {MAX_SECRET_BYTES} bytes")
    try:
        value = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise SecretUnreadable(key, f"secrets file {path} is not UTF-8 text") from None
    if not value:
        raise SecretUnreadable(key, f"secrets file {path} is empty")
    return value


class Secrets:
    """Resolved secret values by key (``secrets["params.apikey"]``), and their redaction."""

    def __init__(self, values: Mapping[str, str] | None = None):
        self.values = dict(values or {})
        self._forms = _forms(self.values.values())
        if self._forms:
            _LibraryLogs.add(self._forms)

    def __getitem__(self, key: str) -> str:
        return self.values[key]

    def __bool__(self) -> bool:
        return bool(self.values)

    def redact(self, text: str) -> str:
        """``text`` with every form of every secret replaced by :data:`MASK`."""
        return _redact(text, self._forms)

    def scrub(self, error: BaseException) -> BaseException:
        """``error`` with no secret left in what it says; raise the result ``from None`` (its cause, a library's
        exception, may carry the URL). An IngestError is redacted in place (type and ``retryable`` kept);
        another exception that carries a secret becomes an IngestError saying the same, redacted."""
        if not self._forms:
            return error
        if isinstance(error, IngestError):
            for name in ("message", "file", "record", "hint", "url"):
                if isinstance(getattr(error, name, None), str):
                    setattr(error, name, self.redact(getattr(error, name)))
            if isinstance(getattr(error, "body", None), bytes):
                error.body = self.redact(error.body.decode("utf-8", "replace")).encode("utf-8")
            error.args = (error.message,)
            return error
        text = f"{type(error).__name__}: {error}"
        return error if self.redact(text) == text else IngestError(self.redact(text))


def _forms(values) -> tuple[str, ...]:
    """Each value as given and as URLs carry it, longest first (a value inside another is replaced last)."""
    forms = {form for value in values for form in (value, quote(value, safe=""), quote(value), quote_plus(value))}
    return tuple(sorted(forms, key=len, reverse=True))


def _redact(text: str, forms: tuple[str, ...]) -> str:
    for form in forms:
        if form in text:
            text = text.replace(form, MASK)
    return text


class _LibraryLogs(logging.Filter):
    """Redacts, from the records of :data:`LIBRARY_LOGGERS`, every secret this process has resolved."""

    forms: tuple[str, ...] = ()
    installed = False

    @classmethod
    def add(cls, forms: tuple[str, ...]) -> None:
        cls.forms = tuple(sorted(set(cls.forms) | set(forms), key=len, reverse=True))
        if not cls.installed:
            cls.installed = True
            for name in LIBRARY_LOGGERS:
                logging.getLogger(name).addFilter(cls())

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = _redact(message, self.forms)
        if redacted != message:
            record.msg, record.args = redacted, ()
        return True

