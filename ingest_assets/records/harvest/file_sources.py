"""Where a file harvest's files come from: a local file or folder, an S3 object or prefix, or a list of URLs.

    source = open_source(provider, config, http=http, s3_client=make_client)
    listing = source.listing()              # Listing(records=[SourceFile...], deletes=[...]): stable order, bounded
    with source.fetch(listing.records[0]) as fetched:   # Fetched(path, status): a local path
        ...

A file's ``name`` is what the ``include`` globs match: its path below the folder or prefix, a URL's path. Globs
read as gitignore's: a pattern without ``/`` matches the last part of a name at any depth, one with ``/`` the
whole name; ``*`` and ``?`` stay within a part, ``**`` crosses parts; a later ``!pattern`` takes names back out.

Every listing is bounded: at most ``limits.max_listed`` entries looked at (an S3 listing pages through
``list_objects_v2`` 1,000 keys a page), at most ``max_files`` selected, none larger than ``max_file_bytes`` and
all together at most ``max_bytes``. Remote files are fetched one at a time into a temporary file (deleted when
done): S3 through the storage's client (:class:`~ingest_assets.storage.backends.S3Storage`, made by the
``s3_client`` the run was given, else boto3's defaults and ``AWS_*`` environment), URLs through the one HTTP
client. An S3 prefix that cannot be reached for want of credentials, a bucket or access is a ConfigError
naming the registry key, at the harvest's start.
"""

from __future__ import annotations

import os
import re
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlsplit

from ingest_assets.core.errors import ConfigError, LimitError, StorageError, context
from ingest_assets.core.http import HttpClient
from ingest_assets.core.registry import FileHarvest, key_error
from ingest_assets.storage import open_storage

COPY_CHUNK = 1024 * 1024
# S3 answers that no retry gets past: the registry's prefix (or the settings) must change
S3_CONFIG_CODES = frozenset({"NoSuchBucket", "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch",
                             "AllAccessDisabled", "InvalidBucketName", "PermanentRedirect", "AuthorizationHeaderMalformed"})


class Globs:
    """gitignore-style name patterns: the last pattern that matches decides, ``!pattern`` excludes."""

    def __init__(self, patterns: list[str]):
        self.rules = [(pattern.startswith("!"), _glob_regex(pattern.removeprefix("!"))) for pattern in patterns]

    def __call__(self, name: str) -> bool:
        selected = False
        for negated, regex in self.rules:
            if regex.fullmatch(name):
                selected = not negated
        return selected


def _glob_regex(pattern: str) -> re.Pattern:
    anchored = "/" in pattern.strip("/")
    parts, position = [], 0
    pattern = pattern.strip("/")
    while position < len(pattern):
        if pattern.startswith("**/", position):
            parts.append("(?:.*/)?")
            position += 3
            continue
        char = pattern[position]
        if pattern.startswith("**", position):
            parts.append(".*")
            position += 1
        elif char == "*":
            parts.append("[^/]*")
        elif char == "?":
            parts.append("[^/]")
        elif char == "[" and (end := pattern.find("]", position + 2)) != -1:
            body = pattern[position + 1:end].replace("\\", "\\\\")
            parts.append("[^" + body[1:] + "]" if body.startswith("!") else "[" + body + "]")
            position = end
        else:
            parts.append(re.escape(char))
        position += 1
    return re.compile(("" if anchored else "(?:.*/)?") + "".join(parts))


@dataclass(frozen=True)
class SourceFile:
    name: str  # below the folder or prefix (a URL: its path): what the globs match, and a name-id's name
    location: str  # what errors and the request log name: the path, s3://bucket/key, the URL
    size: int | None  # as stored, when the listing says (a URL's is known once fetched)


@dataclass
class Listing:
    records: list[SourceFile] = field(default_factory=list)
    deletes: list[SourceFile] = field(default_factory=list)  # delete lists (``deletes.include``)


@dataclass(frozen=True)
class Fetched:
    path: Path
    status: int | None = None  # the HTTP status of a URL's answer


class Source(ABC):
    """The files of one harvest block; :meth:`listing` selects them, :meth:`fetch` makes one a local file."""

    def __init__(self, provider: str, config: FileHarvest):
        self.provider, self.config, self.limits = provider, config, config.limits
        self.fetched_bytes = 0

    @abstractmethod
    def entries(self) -> Iterator[SourceFile]:
        """Every file there is, in any order (the listing sorts, selects and bounds them)."""

    @abstractmethod
    def fetch(self, entry: SourceFile) -> Any:
        """A context manager giving the :class:`Fetched` local copy (the file itself when it is local)."""

    def listing(self) -> Listing:
        """The data files and delete lists, each sorted by name (``order: descending``: the records' last first),
        within the bounds."""
        records, deletes = Globs(self.config.include), Globs(self.config.deletes.include) if self.config.deletes else None
        listing, total, looked = Listing(), 0, 0
        for looked, entry in enumerate(self.entries(), 1):
            if looked > self.limits.max_listed:
                raise LimitError(f"the listing goes past {self.limits.max_listed} entries (harvest.limits.max_listed)",
                                 provider=self.provider, file=self.config.source)
            chosen = listing.deletes if deletes and deletes(entry.name) else listing.records if records(entry.name) else None
            if chosen is None:
                continue
            chosen.append(entry)
            if len(listing.records) + len(listing.deletes) > self.limits.max_files:
                raise LimitError(f"more than {self.limits.max_files} files to read (harvest.limits.max_files)",
                                 provider=self.provider, file=self.config.source)
            self.check_size(entry, entry.size)
            total += entry.size or 0
            if total > self.limits.max_bytes:
                raise LimitError(f"the files come to more than {self.limits.max_bytes} bytes (harvest.limits.max_bytes)",
                                 provider=self.provider, file=self.config.source)
        if not listing.records and not listing.deletes:  # a full harvest of nothing would delete every record
            raise ConfigError(f"harvest.include: no file matches {self.config.include} (looked at {looked} entries)",
                              provider=self.provider, file=self.config.source)
        listing.records.sort(key=lambda e: e.name, reverse=self.config.order == "descending")
        listing.deletes.sort(key=lambda e: e.name)
        return listing

    def check_size(self, entry: SourceFile, size: int | None) -> None:
        if size is not None and size > self.limits.max_file_bytes:
            raise LimitError(f"{size} bytes (harvest.limits.max_file_bytes: {self.limits.max_file_bytes})",
                             provider=self.provider, file=entry.location)


class LocalSource(Source):
    def __init__(self, provider: str, config: FileHarvest):
        super().__init__(provider, config)
        self.root = Path(config.path)

    def entries(self) -> Iterator[SourceFile]:
        if self.root.is_file():
            yield SourceFile(self.root.name, str(self.root), self.root.stat().st_size)
            return
        if not self.root.is_dir():
            raise ConfigError("harvest.path: no such file or folder", provider=self.provider, file=str(self.root))
        for folder, subfolders, names in os.walk(self.root, onerror=self._unreadable):
            subfolders.sort()
            for name in sorted(names):
                path = Path(folder, name)
                if path.is_file():
                    yield SourceFile(path.relative_to(self.root).as_posix(), str(path), path.stat().st_size)

    def _unreadable(self, error: OSError) -> None:
        raise ConfigError(f"harvest.path: cannot list {error.filename}: {error.strerror}", provider=self.provider,
                          file=str(self.root))

    @contextmanager
    def fetch(self, entry: SourceFile) -> Iterator[Fetched]:
        yield Fetched(Path(entry.location))


class S3Source(Source):
    """The objects below an S3 prefix, or the one object the path names."""

    def __init__(self, provider: str, config: FileHarvest, s3_client: Callable[[], Any] | None):
        super().__init__(provider, config)
        parts = urlsplit(config.path)
        self.bucket, self.prefix = parts.netloc, parts.path.strip("/")
        with self.reaching():
            self.storage = open_storage(f"s3://{self.bucket}", s3_client=s3_client)

    @contextmanager
    def reaching(self) -> Iterator[None]:
        """S3 failures no retry gets past (no credentials, no bucket, access denied) as the registry key's
        ConfigError; the others stay StorageErrors (retryable when S3 said so), naming the provider."""
        from botocore.exceptions import ClientError, NoCredentialsError, PartialCredentialsError

        try:
            with context(provider=self.provider):
                yield
        except StorageError as exc:
            cause = exc.__cause__
            code = cause.response.get("Error", {}).get("Code") if isinstance(cause, ClientError) else None
            if isinstance(cause, (NoCredentialsError, PartialCredentialsError)) or code in S3_CONFIG_CODES:
                raise key_error(self.provider, f"{self.provider}.harvest.path",
                                f"S3 cannot be read: {exc.message} (set the AWS credentials, AWS_ENDPOINT_URL or the "
                                "storage's s3 settings, or fix the bucket)", self.config.path) from exc
            raise

    def entries(self) -> Iterator[SourceFile]:
        base = self.prefix + "/" if self.prefix else ""
        found = False
        with self.reaching():
            for key, size in self.storage.list_objects(self.prefix):
                if not key.endswith("/"):  # not a folder marker
                    found = True
                    yield SourceFile(key[len(base):], f"s3://{self.bucket}/{key}", size)
        if not found and self.prefix:  # the path names one object (or nothing: fetching it says so)
            yield SourceFile(PurePosixPath(self.prefix).name, f"s3://{self.bucket}/{self.prefix}", None)

    @contextmanager
    def fetch(self, entry: SourceFile) -> Iterator[Fetched]:
        key = entry.location.removeprefix(f"s3://{self.bucket}/")
        with tempfile.TemporaryDirectory(prefix="harvest-s3-") as tmp:
            path = Path(tmp) / "object"
            try:
                with self.reaching(), context(file=entry.location), self.storage.open_read(key) as body, \
                        path.open("wb") as out:
                    copied = 0
                    while chunk := body.read(COPY_CHUNK):
                        copied += len(chunk)
                        self.check_size(entry, copied)
                        out.write(chunk)
            except FileNotFoundError:
                raise ConfigError("harvest.path: no object at or below this S3 path", provider=self.provider,
                                  file=entry.location) from None
            except ValueError as exc:  # a key the storage refuses to read (``..``, ``//``)
                raise ConfigError(f"harvest.path: {exc}", provider=self.provider, file=entry.location) from None
            yield Fetched(path)


class UrlSource(Source):
    def __init__(self, provider: str, config: FileHarvest, http: HttpClient):
        super().__init__(provider, config)
        self.http = http

    def entries(self) -> Iterator[SourceFile]:
        for url in self.config.urls:
            yield SourceFile(unquote(urlsplit(url).path).strip("/") or url, url, None)

    @contextmanager
    def fetch(self, entry: SourceFile) -> Iterator[Fetched]:
        with tempfile.TemporaryDirectory(prefix="harvest-url-") as tmp:
            path = Path(tmp) / "download"
            with context(provider=self.provider, file=entry.location):
                got = self.http.download(entry.location, path, max_bytes=self.limits.max_file_bytes)
            self.fetched_bytes += path.stat().st_size
            if self.fetched_bytes > self.limits.max_bytes:
                raise LimitError(f"the files come to more than {self.limits.max_bytes} bytes (harvest.limits.max_bytes)",
                                 provider=self.provider, file=entry.location)
            yield Fetched(path, got.status)


def open_source(provider: str, config: FileHarvest, *, http: HttpClient,
                s3_client: Callable[[], Any] | None = None) -> Source:
    """The :class:`Source` of ``config`` (``s3_client()`` makes the S3 client; None: boto3's defaults)."""
    if config.urls:
        return UrlSource(provider, config, http)
    if config.path.startswith("s3://"):
        return S3Source(provider, config, s3_client)
    return LocalSource(provider, config)
