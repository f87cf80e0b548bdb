"""Feed a record provider's resource set from its IndexRecords (``{"id", "document", "deleted"}``).

Each item's document (the IndexRecord's JSON, exactly its bytes) is a file of the set,
``items/<id>.jsonld`` (:data:`DOCUMENT_MIME`), kept where the set's files live (:mod:`.files`: the storage
area ``_resourcesync/<set>/resources/`` unless the set has a ``root``), so it is published and served at
``<url_prefix>items/<id>.jsonld``. A record is ``created`` when the index does not hold it, ``updated``
when its document bytes changed (the file is replaced atomically, then the event recorded), nothing at
all when they did not (re-indexing a day neither floods the Change Lists nor rewrites files), and
``deleted`` for a deletion record of an item the index holds (the file is removed, then the event
recorded). A bad record is reported and never stops the others.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime

from ingest_assets.errors import IngestError, ValidationError
from ingest_assets.events import record_event
from ingest_assets.resourcesync.files import ResourceFiles
from ingest_assets.resourcesync.index import ResourceIndex
from ingest_assets.resourcesync.model import Location, ResourceSet, resource_id
from ingest_assets.storage.backends import Storage

DOCUMENT_MIME = "application/ld+json"
ITEMS = "items"
SUFFIX = ".jsonld"  # served as application/ld+json
FILE_ID = re.compile(r"[A-Za-z0-9_~-][A-Za-z0-9._~-]{0,199}")  # a plain file name on any filesystem


@dataclass
class FeedReport:
    counts: dict[str, int] = field(default_factory=lambda: {"created": 0, "updated": 0, "deleted": 0, "unchanged": 0})
    errors: list[str] = field(default_factory=list)

    @property
    def metadata(self) -> dict:
        return {**self.counts, "errors": len(self.errors), "first_errors": self.errors[:10]}


def record_path(record_id: str) -> str:
    """The relative path of an item's document in its set: ``items/<id>.jsonld``."""
    return f"{ITEMS}/{record_id}{SUFFIX}"


def feed_index_records(
    index: ResourceIndex, storage: Storage, resource_set: ResourceSet, records: Iterable[dict], event_time: datetime
) -> FeedReport:
    """Write the documents and record the changes that ``records`` (IndexRecords written at
    ``event_time``) make to the set; ``storage`` is the platform storage (:meth:`.ResourceFiles.of`)."""
    files = ResourceFiles.of(storage, resource_set)
    report = FeedReport()
    for record in records:
        try:
            change = _feed_one(index, files, resource_set, record, event_time)
        except IngestError as exc:
            report.errors.append(str(exc))
            continue
        report.counts[change] += 1
    return report


def _feed_one(
    index: ResourceIndex, files: ResourceFiles, resource_set: ResourceSet, record: dict, event_time: datetime
) -> str:
    record_id = record.get("id") if isinstance(record, dict) else None
    if not isinstance(record_id, str) or not record_id:
        raise ValidationError(f"index record without an id: {record!r:.80}", provider=resource_set.name)
    if not FILE_ID.fullmatch(record_id):
        raise ValidationError(
            "record id cannot name a file (letters, digits, '._~-', at most 200, not starting with '.')",
            provider=resource_set.name,
            record=record_id,
        )
    path = record_path(record_id)
    if record.get("deleted"):
        location = Location("rel_path", path)
        if index.get_resource(resource_id(resource_set.name, location.as_doc())) is None:
            return "unchanged"
        files.delete(path)
        record_event(index, resource_set, location, "deleted", None, event_time)
        return "deleted"
    document = record.get("document")
    if not isinstance(document, str) or not document:
        raise ValidationError("index record without a document", provider=resource_set.name, record=record_id)
    data = document.encode("utf-8")
    return record_file_change(
        index,
        resource_set,
        path,
        event_time,
        len(data),
        hashlib.md5(data).hexdigest(),
        hashlib.sha256(data).hexdigest(),
        DOCUMENT_MIME,
        write=lambda: files.write(path, data),
    )


def record_file_change(
    index: ResourceIndex,
    resource_set: ResourceSet,
    path: str,
    event_time: datetime,
    length: int,
    md5: str,
    sha256: str,
    mime: str,
    write: Callable[[], None] | None = None,
) -> str:
    """Record the file at ``path`` as ``created`` (not in the index) or ``updated`` (another md5), after
    calling ``write`` (which puts the file in place); ``unchanged`` (nothing written or recorded) when the
    index holds it with this md5. Returns the change."""
    current = index.get_resource(resource_id(resource_set.name, Location("rel_path", path).as_doc()))
    if current is not None and current["md5"] == md5:
        return "unchanged"
    change = "created" if current is None else "updated"
    if write is not None:  # file first: if recording fails, the next run still sees a change and writes both again
        write()
    record_event(
        index, resource_set, path, change, event_time, event_time, length=length, md5=md5, sha256=sha256, mime=mime
    )
    return change
