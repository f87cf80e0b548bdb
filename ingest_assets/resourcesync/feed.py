"""The change feed every capability publishes through, and the record pipeline's use of it.

:class:`ChangeFeed` is the one caller of :func:`~ingest_assets.resourcesync.events.record_event`: a capability
gets one per resource set from its Dagster asset and tells it what it stored (``put``), what it holds
already (``record``) and what it removed (``delete``), with the event time. Files live where the set's
files live (:mod:`.files`), so they are published and served at ``<url_prefix><path>``. A file is
``created`` when the index does not hold it, ``updated`` when its md5 changed (the file is replaced
atomically, then the event recorded), nothing at all when it did not, and ``deleted`` when a file the index
holds is removed.

The record pipeline's items: each IndexRecord's document (its JSON, exactly its bytes) is the file
``items/<id>.jsonld`` (:data:`DOCUMENT_MIME`); a deletion record deletes it. A bad record is reported and
never stops the others.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import BinaryIO

from ingest_assets.core.digests import MultiHasher, hash_stream
from ingest_assets.core.errors import IngestError, ValidationError
from ingest_assets.resourcesync.events import record_event
from ingest_assets.resourcesync.files import ResourceFiles
from ingest_assets.resourcesync.index import ResourceIndex
from ingest_assets.resourcesync.model import Location, ResourceSet, resource_id
from ingest_assets.storage.backends import Storage

DOCUMENT_MIME = "application/ld+json"
ITEMS = "items"
SUFFIX = ".jsonld"  # served as application/ld+json
FILE_ID = re.compile(r"[A-Za-z0-9_~-][A-Za-z0-9._~-]{0,199}")  # a plain file name on any filesystem
FEED_DIGESTS = ("md5", "sha256")


@dataclass
class FeedReport:
    counts: dict[str, int] = field(default_factory=lambda: {"created": 0, "updated": 0, "deleted": 0, "unchanged": 0})
    errors: list[str] = field(default_factory=list)

    @property
    def metadata(self) -> dict:
        return {**self.counts, "errors": len(self.errors), "first_errors": self.errors[:10]}


class ChangeFeed:
    """The changes of one resource set's files; every method returns the change it recorded
    (``created``, ``updated``, ``deleted``) or ``unchanged``, and counts it in :attr:`report`."""

    def __init__(self, index: ResourceIndex, storage: Storage, resource_set: ResourceSet):
        """``storage`` is the platform storage (:meth:`.ResourceFiles.of` finds the set's files)."""
        self.index, self.resource_set = index, resource_set
        self.files = ResourceFiles.of(storage, resource_set)
        self.report = FeedReport()

    def holds(self, path: str) -> bool:
        """Whether the index holds the file at the relative ``path``."""
        return self._current(path) is not None

    def paths(self) -> Iterator[str]:
        """The relative paths of the files the index holds, in order."""
        for resource in self.index.resources(self.resource_set.name):
            if resource["location"]["type"] == "rel_path":
                yield resource["location"]["value"]

    def put(self, path: str, data: bytes | Path, at: datetime, mime: str) -> str:
        """Store ``data`` (bytes, or a local file's content) as the file at ``path`` unless the set holds
        it with the same md5, and record the change at ``at``."""
        if isinstance(data, bytes):
            length, md5, sha256 = _digests(MultiHasher.of(data, FEED_DIGESTS))
            return self.record(path, at, length, md5, sha256, mime, write=partial(self.files.write, path, data))
        with open(data, "rb") as handle:
            length, md5, sha256 = file_digests(handle)
        return self.record(path, at, length, md5, sha256, mime, write=partial(self.files.write_file, path, data))

    def record(
        self,
        path: str,
        at: datetime,
        length: int,
        md5: str,
        sha256: str,
        mime: str,
        write: Callable[[], None] | None = None,
    ) -> str:
        """Record the file at ``path`` as ``created`` or ``updated`` (another md5) after calling ``write``
        (which puts it in place; None: it is in place); ``unchanged`` (nothing written or recorded) when
        the index holds it with this md5."""
        current = self._current(path)
        if current is not None and current["md5"] == md5:
            return self._count("unchanged")
        change = "created" if current is None else "updated"
        if write is not None:  # file first: if recording fails, the next run still sees a change and writes both again
            write()
        record_event(
            self.index, self.resource_set, path, change, at, at, length=length, md5=md5, sha256=sha256, mime=mime
        )
        return self._count(change)

    def delete(self, path: str, at: datetime) -> str:
        """Remove the file at ``path`` and record ``deleted`` at ``at``; ``unchanged`` when not held."""
        if self._current(path) is None:
            return self._count("unchanged")
        self.files.delete(path)
        record_event(self.index, self.resource_set, path, "deleted", None, at)
        return self._count("deleted")

    def _current(self, path: str) -> dict | None:
        location = self.resource_set.canonical(Location("rel_path", path))
        return self.index.get_resource(resource_id(self.resource_set.name, location.as_doc()))

    def _count(self, change: str) -> str:
        self.report.counts[change] += 1
        return change


def file_digests(handle: BinaryIO) -> tuple[int, str, str]:
    """Length, md5 and sha256 of what ``handle`` reads, in one pass."""
    return _digests(hash_stream(handle, FEED_DIGESTS))


def _digests(hasher: MultiHasher) -> tuple[int, str, str]:
    digests = hasher.hexdigests()
    return hasher.size, digests["md5"], digests["sha256"]


def record_path(record_id: str) -> str:
    """The relative path of an item's document in its set: ``items/<id>.jsonld``."""
    return f"{ITEMS}/{record_id}{SUFFIX}"


def feed_index_records(feed: ChangeFeed, records: Iterable[dict], event_time: datetime) -> FeedReport:
    """Write the documents and record the changes that ``records`` (IndexRecords written at
    ``event_time``) make to the feed's set."""
    for record in records:
        try:
            _feed_one(feed, record, event_time)
        except IngestError as exc:
            feed.report.errors.append(str(exc))
    return feed.report


def _feed_one(feed: ChangeFeed, record: dict, event_time: datetime) -> str:
    name = feed.resource_set.name
    record_id = record.get("id") if isinstance(record, dict) else None
    if not isinstance(record_id, str) or not record_id:
        raise ValidationError(f"index record without an id: {record!r:.80}", provider=name)
    if not FILE_ID.fullmatch(record_id):
        raise ValidationError(
            "record id cannot name a file (letters, digits, '._~-', at most 200, not starting with '.')",
            provider=name,
            record=record_id,
        )
    path = record_path(record_id)
    if record.get("deleted"):
        return feed.delete(path, event_time)
    document = record.get("document")
    if not isinstance(document, str) or not document:
        raise ValidationError("index record without a document", provider=name, record=record_id)
    return feed.put(path, document.encode("utf-8"), event_time, DOCUMENT_MIME)
