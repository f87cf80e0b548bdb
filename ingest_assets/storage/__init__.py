"""Where the platform keeps its files: backends (local, S3), the layout rules and Avro streaming.

:func:`open_storage` opens the backend a storage URL (``INGEST_STORAGE``) names."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from ingest_assets.storage.backends import FolderWriter, LocalStorage, S3Storage, Storage, StoredText

__all__ = ["FolderWriter", "LocalStorage", "S3Storage", "Storage", "StoredText", "open_storage"]


def open_storage(target: str, *, s3_client: Callable[[], Any] | None = None) -> Storage:
    """``/some/dir`` (or ``file:///some/dir``) -> local; ``s3://bucket/prefix`` -> S3, with the client
    ``s3_client()`` makes (the Dagster layer passes dagster-aws's ``S3Resource``), else boto3's defaults."""
    parts = urlsplit(target)
    if parts.scheme == "s3":
        return S3Storage(parts.netloc, parts.path, client=s3_client() if s3_client else None)
    if parts.scheme == "file":
        return LocalStorage(parts.path)
    if parts.scheme and len(parts.scheme) > 1:
        raise ValueError(f"unsupported storage URL {target!r} (use a directory or s3://bucket/prefix)")
    return LocalStorage(target)
