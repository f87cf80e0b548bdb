"""Storage backends behind one interface: a local directory (default) and S3 (any endpoint).

Keys are '/'-separated paths relative to the storage root. Nothing is half-written: single files are
written atomically and never overwritten unless asked; a folder (an Avro activity output, a WARC set) is
staged and appears at once (local: one rename) or, on S3, its marker file (``_MANIFEST``) is written
last and readers treat folders without it as absent.
"""

from __future__ import annotations

import io
import os
import shutil
import tempfile
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from ingest_assets.core.digests import MultiHasher, hash_stream
from ingest_assets.core.errors import StorageError

STAGING = ".staging"
STALE_STAGING_SECONDS = 24 * 3600  # a staging folder no writer touched for a day belongs to a killed write


def check_key(key: str) -> str:
    """Reject keys that could escape the storage root or that are not canonical."""
    parts = key.split("/")
    if not key or key.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\\" in key:
        raise ValueError(f"invalid storage key {key!r}")
    return key


class FolderWriter(ABC):
    """Files of one folder that becomes visible only when :meth:`Storage.folder` exits cleanly."""

    @abstractmethod
    def open(self, name: str) -> BinaryIO:
        """A writable binary file at ``name`` (may contain '/') inside the folder."""

    def write_bytes(self, name: str, data: bytes) -> None:
        with self.open(name) as handle:
            handle.write(data)

    @property
    @abstractmethod
    def bytes_written(self) -> int:
        """Total size of the files written so far."""


class Storage(ABC):
    url: str

    @abstractmethod
    def uri(self, key: str) -> str: ...

    @abstractmethod
    def exists(self, key: str) -> bool: ...

    @abstractmethod
    def list_keys(self, prefix: str = "") -> Iterator[str]:
        """All file keys below ``prefix`` (recursive, sorted)."""

    @abstractmethod
    def list_children(self, prefix: str = "") -> list[str]:
        """Names of the immediate children (files and folders) of ``prefix``, sorted."""

    @abstractmethod
    def open_read(self, key: str) -> BinaryIO: ...

    def read_bytes(self, key: str) -> bytes:
        with self.open_read(key) as handle:
            return handle.read()

    @abstractmethod
    def write_bytes(self, key: str, data: bytes, overwrite: bool = False) -> None:
        """Write one file atomically; ``FileExistsError`` if it exists and ``overwrite`` is false."""

    @abstractmethod
    def write_file(self, key: str, local_path: str | Path, overwrite: bool = False) -> None: ...

    @abstractmethod
    def delete(self, key: str) -> None:
        """Delete a file, or a folder and everything below it."""

    @abstractmethod
    def folder(self, key: str, marker: str = "_MANIFEST"):
        """Context manager yielding a :class:`FolderWriter`; the folder appears atomically on exit.

        Call ``writer.write_bytes(marker, ...)`` inside the block: the backend holds it back and writes
        it last. ``FileExistsError`` if the folder already exists.
        """

    def is_complete(self, key: str, marker: str = "_MANIFEST") -> bool:
        return self.exists(f"{key}/{marker}")

    def clean_stale_staging(self, max_age_seconds: float = STALE_STAGING_SECONDS) -> list[str]:
        """Remove what killed writers left in staging (nothing a live writer touched within ``max_age``);
        returns what was removed. Object stores stage in a local temporary folder: nothing to do."""
        return []


class _LocalFolderWriter(FolderWriter):
    def __init__(self, staging: Path):
        self.staging = staging
        self._paths: list[Path] = []

    def open(self, name: str) -> BinaryIO:
        path = self.staging / check_key(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._paths.append(path)
        return open(path, "xb")

    @property
    def bytes_written(self) -> int:
        return sum(p.stat().st_size for p in self._paths if p.exists())


class LocalStorage(Storage):
    def __init__(self, root: str | Path):
        self.root = Path(root).resolve()
        self.root.mkdir(parents=True, exist_ok=True)
        self.url = str(self.root)

    def _path(self, key: str) -> Path:
        return self.root / check_key(key)

    def uri(self, key: str) -> str:
        return str(self._path(key))

    def exists(self, key: str) -> bool:
        return self._path(key).exists()

    def list_keys(self, prefix: str = "") -> Iterator[str]:
        base = self._path(prefix) if prefix else self.root
        if base.is_file():
            yield prefix
        elif base.is_dir():
            yield from self._walk(base)

    def _walk(self, directory: Path) -> Iterator[str]:
        """Keys in the same lexicographic order S3 lists them ('/' sorts after '-' and '.')."""
        entries = [(e.name + "/" if e.is_dir() else e.name, e) for e in os.scandir(directory)]
        for _, entry in sorted(entries, key=lambda item: item[0]):
            if entry.is_dir():
                if not (directory == self.root and entry.name == STAGING):
                    yield from self._walk(Path(entry.path))
            else:
                yield Path(entry.path).relative_to(self.root).as_posix()

    def list_children(self, prefix: str = "") -> list[str]:
        base = self._path(prefix) if prefix else self.root
        if not base.is_dir():
            return []
        return sorted(p.name for p in base.iterdir() if not (base == self.root and p.name == STAGING))

    def open_read(self, key: str) -> BinaryIO:
        return open(self._path(key), "rb")

    def write_bytes(self, key: str, data: bytes, overwrite: bool = False) -> None:
        with self._staged_file(key) as tmp:
            tmp.write_bytes(data)
            self._publish_file(tmp, self._path(key), overwrite)

    def write_file(self, key: str, local_path: str | Path, overwrite: bool = False) -> None:
        with self._staged_file(key) as tmp:
            shutil.copyfile(local_path, tmp)
            self._publish_file(tmp, self._path(key), overwrite)

    def delete(self, key: str) -> None:
        path = self._path(key)
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)

    def clean_stale_staging(self, max_age_seconds: float = STALE_STAGING_SECONDS) -> list[str]:
        """Staging folders whose newest file is older than ``max_age_seconds`` (a live write keeps writing into
        its folder; a SIGKILLed one left it behind)."""
        base = self.root / STAGING
        cutoff = time.time() - max_age_seconds
        removed = []
        for folder in sorted(base.iterdir()) if base.is_dir() else []:
            try:
                newest = max([folder.stat().st_mtime] + [p.stat().st_mtime for p in folder.rglob("*")])
            except FileNotFoundError:  # its writer just finished or cleaned it
                continue
            if newest < cutoff:
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder.name)
        return removed

    @contextmanager
    def folder(self, key: str, marker: str = "_MANIFEST"):
        final = self._path(key)
        if final.exists():
            raise FileExistsError(f"{final} already exists")
        staging = self.root / STAGING / uuid.uuid4().hex
        staging.mkdir(parents=True)
        try:
            yield _LocalFolderWriter(staging)
            if not (staging / marker).exists():
                raise RuntimeError(f"folder {key} was closed without its {marker}")
            final.parent.mkdir(parents=True, exist_ok=True)
            if final.exists():
                raise FileExistsError(f"{final} already exists")
            os.rename(staging, final)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    @contextmanager
    def _staged_file(self, key: str):
        target = self._path(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.parent / f".{target.name}.{uuid.uuid4().hex}.tmp"
        try:
            yield tmp
        finally:
            tmp.unlink(missing_ok=True)

    @staticmethod
    def _publish_file(tmp: Path, target: Path, overwrite: bool) -> None:
        if overwrite:
            os.replace(tmp, target)
        else:
            os.link(tmp, target)  # atomic and fails if the target exists


class _S3FolderWriter(FolderWriter):
    def __init__(self, storage: "S3Storage", key: str, marker: str, tmpdir: Path):
        self.storage, self.key, self.marker, self.tmpdir = storage, key, marker, tmpdir
        self.uploaded: list[str] = []
        self.marker_file: Path | None = None
        self._bytes = 0

    def open(self, name: str) -> BinaryIO:
        check_key(name)
        local = self.tmpdir / uuid.uuid4().hex
        handle = open(local, "xb")
        writer = self
        original_close = handle.close

        def close_and_upload() -> None:
            if handle.closed:
                return
            original_close()
            writer._bytes += local.stat().st_size
            if name == writer.marker:
                writer.marker_file = local
                return
            object_key = writer.storage._key(f"{writer.key}/{name}")
            with writer.storage._errors(f"{writer.key}/{name}"):
                writer.storage.client.upload_file(str(local), writer.storage.bucket, object_key)
            writer.uploaded.append(object_key)
            local.unlink()

        handle.close = close_and_upload  # type: ignore[method-assign]
        return handle

    @property
    def bytes_written(self) -> int:
        return self._bytes


# S3 error codes a retry can get past (besides every 5xx)
_S3_TRANSIENT = frozenset({"SlowDown", "Throttling", "ThrottlingException", "RequestTimeout", "RequestTimeTooSkewed",
                           "InternalError", "ServiceUnavailable"})
READ_RESUMES = 5  # a body read that breaks is resumed from where it stopped (a ranged GET) this many times


class S3Storage(Storage):
    """S3 or any S3-compatible endpoint (``AWS_ENDPOINT_URL`` or ``endpoint_url``).

    botocore retries each request (jittered exponential back-off, ``max_attempts``); what still fails comes out
    as a :class:`~ingest_assets.core.errors.StorageError` naming the object, never as a botocore exception. A
    body read that breaks or stalls past ``read_timeout`` resumes where it stopped (:data:`READ_RESUMES` times).
    """

    def __init__(self, bucket: str, prefix: str = "", *, endpoint_url: str | None = None, client=None,
                 read_timeout: float = 60):
        import boto3
        from botocore.config import Config

        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self.url = f"s3://{bucket}/{self.prefix}" if self.prefix else f"s3://{bucket}"
        self.client = client or boto3.client(
            "s3",
            endpoint_url=endpoint_url,
            config=Config(connect_timeout=5, read_timeout=read_timeout, retries={"max_attempts": 5, "mode": "standard"}),
        )

    def _key(self, key: str) -> str:
        check_key(key)
        return f"{self.prefix}/{key}" if self.prefix else key

    def _strip(self, object_key: str) -> str:
        return object_key[len(self.prefix) + 1 :] if self.prefix else object_key

    def uri(self, key: str) -> str:
        return f"s3://{self.bucket}/{self._key(key)}" if key else self.url

    @contextmanager
    def _errors(self, key: str, doing: str = "request"):
        """botocore's and s3transfer's failures (after botocore's own retries) as a StorageError naming the object."""
        from boto3.exceptions import S3UploadFailedError
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            yield
        except ClientError as exc:
            error = exc.response.get("Error", {})
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
            code = str(error.get("Code", status))
            raise StorageError(f"S3 {doing} failed: {code} {error.get('Message', '')}".rstrip(), file=self.uri(key),
                               retryable=status >= 500 or code in _S3_TRANSIENT) from exc
        except S3UploadFailedError as exc:  # s3transfer's wrapper of a ClientError, after its retries
            cause = exc.__cause__ or exc.__context__
            retryable = not isinstance(cause, ClientError) or any(code in str(exc) for code in (*_S3_TRANSIENT, "(5"))
            raise StorageError(f"S3 upload failed: {exc}", file=self.uri(key), retryable=retryable) from exc
        except BotoCoreError as exc:  # connection refused, reset or closed, timeouts
            raise StorageError(f"S3 {doing} failed: {exc}", file=self.uri(key), retryable=True) from exc

    def exists(self, key: str) -> bool:
        from botocore.exceptions import ClientError

        with self._errors(key, "HEAD"):
            try:
                self.client.head_object(Bucket=self.bucket, Key=self._key(key))
                return True
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") not in ("404", "NoSuchKey", "NotFound"):
                    raise
        return bool(self.list_children(key))

    def _full(self, prefix: str) -> str:
        return self._key(prefix) + "/" if prefix else (self.prefix + "/" if self.prefix else "")

    def _pages(self, prefix: str, **extra) -> Iterator[dict]:
        with self._errors(prefix, "listing"):
            yield from self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=self._full(prefix),
                                                                             **extra)

    def list_keys(self, prefix: str = "") -> Iterator[str]:
        return (key for key, _size in self.list_objects(prefix))

    def list_objects(self, prefix: str = "") -> Iterator[tuple[str, int]]:
        """``(key, size in bytes)`` of each object below ``prefix``, listed a page (1,000 keys) at a time."""
        for page in self._pages(prefix):
            for item in page.get("Contents", []):
                yield self._strip(item["Key"]), item["Size"]

    def list_children(self, prefix: str = "") -> list[str]:
        full = self._full(prefix)
        names: set[str] = set()
        for page in self._pages(prefix, Delimiter="/"):
            names.update(p["Prefix"][len(full) :].rstrip("/") for p in page.get("CommonPrefixes", []))
            names.update(item["Key"][len(full) :] for item in page.get("Contents", []))
        return sorted(n for n in names if n)

    def open_read(self, key: str) -> BinaryIO:
        return io.BufferedReader(_S3Body(self, key), buffer_size=1024 * 1024)  # type: ignore[return-value]

    def _get(self, key: str, **extra) -> dict:
        from botocore.exceptions import ClientError

        with self._errors(key, "GET"):
            try:
                return self.client.get_object(Bucket=self.bucket, Key=self._key(key), **extra)
            except ClientError as exc:  # the same exception as the local backend
                if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404", "NotFound"):
                    raise FileNotFoundError(self.uri(key)) from exc
                raise

    def write_bytes(self, key: str, data: bytes, overwrite: bool = False) -> None:
        self._put(key, data, overwrite)

    def write_file(self, key: str, local_path: str | Path, overwrite: bool = False) -> None:
        if overwrite:
            with self._errors(key, "upload"):
                self.client.upload_file(str(local_path), self.bucket, self._key(key))  # multipart for large files
            return
        with open(local_path, "rb") as body:  # one conditional PUT: atomic no-overwrite (up to 5 GB)
            self._put(key, body, overwrite=False)

    def _put(self, key: str, body, overwrite: bool) -> None:
        from botocore.exceptions import ClientError

        extra = {} if overwrite else {"IfNoneMatch": "*"}
        with self._errors(key, "PUT"):
            try:
                self.client.put_object(Bucket=self.bucket, Key=self._key(key), Body=body, **extra)
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") not in ("PreconditionFailed", "ConditionalRequestConflict"):
                    raise
                if not self._holds(key, body):
                    raise FileExistsError(self.uri(key)) from exc

    def _holds(self, key: str, body) -> bool:
        """Whether ``key`` already holds exactly ``body``: a conditional PUT whose answer was lost is retried by botocore
        and meets its own object (the retry's 412 is then this write's success, not someone else's file)."""
        if isinstance(body, bytes):
            digest = MultiHasher.of(body, ("md5",))
        else:
            body.seek(0)
            digest = hash_stream(body, ("md5",))
        etag = self.client.head_object(Bucket=self.bucket, Key=self._key(key))["ETag"].strip('"')
        return etag == digest.hexdigests()["md5"]

    def delete(self, key: str) -> None:
        keys = [self._key(k) for k in self.list_keys(key)] or [self._key(key)]
        for start in range(0, len(keys), 1000):
            batch = [{"Key": k} for k in keys[start : start + 1000]]
            with self._errors(key, "delete"):
                self.client.delete_objects(Bucket=self.bucket, Delete={"Objects": batch, "Quiet": True})

    @contextmanager
    def folder(self, key: str, marker: str = "_MANIFEST"):
        if self.list_children(key):
            raise FileExistsError(f"{self.uri(key)} already exists")
        with tempfile.TemporaryDirectory(prefix="ingest-s3-") as tmp:
            writer = _S3FolderWriter(self, key, marker, Path(tmp))
            try:
                yield writer
                if writer.marker_file is None:
                    raise RuntimeError(f"folder {key} was closed without its {marker}")
                with self._errors(f"{key}/{marker}", "upload"):
                    self.client.upload_file(str(writer.marker_file), self.bucket, self._key(f"{key}/{marker}"))
            except BaseException:
                for start in range(0, len(writer.uploaded), 1000):
                    batch = [{"Key": k} for k in writer.uploaded[start : start + 1000]]
                    try:  # best effort: without its marker the folder is invisible to readers anyway
                        with self._errors(key, "delete"):
                            self.client.delete_objects(Bucket=self.bucket, Delete={"Objects": batch, "Quiet": True})
                    except StorageError:
                        break
                raise


class _S3Body(io.RawIOBase):
    """An object's body that resumes a broken or stalled read with a ranged GET of the same version (``If-Match``
    its ETag), at most :data:`READ_RESUMES` times; then a retryable StorageError."""

    def __init__(self, storage: S3Storage, key: str):
        self.storage, self.key = storage, key
        answer = storage._get(key)
        self.body, self.etag, self.offset, self.resumes = answer["Body"], answer.get("ETag"), 0, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        from botocore.exceptions import BotoCoreError
        from urllib3.exceptions import HTTPError

        while True:
            try:
                data = self.body.read(len(buffer))
            except (BotoCoreError, HTTPError, OSError) as exc:
                if self.resumes >= READ_RESUMES:
                    raise StorageError(f"S3 read broke {self.resumes + 1} times, the last at byte {self.offset}: {exc}",
                                       file=self.storage.uri(self.key), retryable=True) from exc
                self.resumes += 1
                self.body.close()
                extra = {"IfMatch": self.etag} if self.etag else {}
                self.body = self.storage._get(self.key, Range=f"bytes={self.offset}-", **extra)["Body"]
                continue
            buffer[: len(data)] = data
            self.offset += len(data)
            return len(data)

    def close(self) -> None:
        if not self.closed:
            self.body.close()
        super().close()


class StoredText:
    """A mutable text document at a storage key (the registry's last good copy)."""

    def __init__(self, storage: Storage, key: str):
        self.storage, self.key = storage, key

    def read(self) -> str | None:
        return self.storage.read_bytes(self.key).decode("utf-8") if self.storage.exists(self.key) else None

    def write(self, text: str) -> None:
        self.storage.write_bytes(self.key, text.encode("utf-8"), overwrite=True)

