"""Result status values, each marked retryable (a later run may succeed) or final.

What depends on this hub's configuration rather than on the request is never final: ``blocked-by-config``
(an address the configuration does not let us reach: a private one without ``allow_private``) and
``no-platform-match`` (no platform recognised with the hosts configured). A request that met either is
processed again when it comes again, under the configuration of that time."""

from __future__ import annotations

SUCCESS = "success"
SUCCESS_FILE = "success-file"
SUCCESS_EXISTING = "success-existing"

#: status -> retryable?  Final statuses are never re-crawled unless a request is forced.
STATUSES: dict[str, bool] = {
    SUCCESS: False,
    SUCCESS_FILE: False,
    SUCCESS_EXISTING: False,
    "invalid-request": False,
    "no-platform-match": True,
    "platform-scope": False,
    "platform-restricted": False,
    "platform-404": False,
    "platform-error": True,
    "empty-manifest": False,
    "too-large-size": False,
    "too-many-files": False,
    "mismatch-size": False,
    "mismatch-md5": False,
    "mismatch-sha1": False,
    "mismatch-sha256": False,
    "bundle-unsafe": False,
    "unsafe-file-name": False,
    "bundle-incomplete": False,
    "terminal-bad-status": False,
    "fetch-error": True,
    "fetch-refused": False,
    "blocked-by-config": True,
    "storage-error": True,
    "upload-error": True,
}

SUCCESSES = frozenset({SUCCESS, SUCCESS_FILE})


def is_retryable(status: str) -> bool:
    """True when a re-run may succeed (network, 5xx, upload trouble); unknown statuses are final."""
    return STATUSES.get(status, False)


def blocked_by_config(what: str, exc: Exception) -> "DatasetIngestFailure":
    """The failure of a fetch the configuration refused (:class:`~ingest_assets.core.errors.RefusedAddress`)."""
    return DatasetIngestFailure("blocked-by-config", f"{what}: {exc} (a matter of configuration: allow_private, or "
                                                     "the hosts of a registry datasets: block)")


class DatasetIngestFailure(Exception):
    """Ends the processing of one request with a non-success ``status`` (never escapes ``ingest``)."""

    def __init__(self, status: str, message: str, **extra):
        if status not in STATUSES:
            raise ValueError(f"unknown dataset ingest status {status!r}")
        super().__init__(message)
        self.status = status
        self.message = message
        self.extra = extra
