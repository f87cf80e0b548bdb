"""Feed the resource index from the platform's index events (IndexRecords: ``{"id", "document", "deleted"}``).

Each IndexRecord becomes one event for the item URL (``http://dp.la/api/items/<id>``, the ``@id`` of its
document): ``created`` when the index does not hold it, ``updated`` when its document bytes changed,
nothing when they did not (re-indexing a day does not flood the Change Lists), ``deleted`` for a
deletion record of an item the index holds. One bad record is reported and never stops the others.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from ingest_assets.errors import IngestError, ValidationError
from ingest_assets.events import record_event
from ingest_assets.records.indexing.documents import ITEM_URI
from ingest_assets.resourcesync.index import ResourceIndex
from ingest_assets.resourcesync.model import Location, ResourceSet, resource_id

DOCUMENT_MIME = "application/ld+json"


@dataclass
class FeedReport:
    counts: dict[str, int] = field(default_factory=lambda: {"created": 0, "updated": 0, "deleted": 0, "unchanged": 0})
    errors: list[str] = field(default_factory=list)

    @property
    def metadata(self) -> dict:
        return {**self.counts, "errors": len(self.errors), "first_errors": self.errors[:10]}


def feed_index_records(
    index: ResourceIndex, resource_set: ResourceSet, records: Iterable[dict], event_time: datetime
) -> FeedReport:
    """Record the changes that ``records`` (IndexRecords written at ``event_time``) make to the set."""
    report = FeedReport()
    for record in records:
        try:
            change = _feed_one(index, resource_set, record, event_time)
        except IngestError as exc:
            report.errors.append(str(exc))
            continue
        report.counts[change] += 1
    return report


def _feed_one(index: ResourceIndex, resource_set: ResourceSet, record: dict, event_time: datetime) -> str:
    record_id = record.get("id") if isinstance(record, dict) else None
    if not isinstance(record_id, str) or not record_id:
        raise ValidationError(f"index record without an id: {record!r:.80}", provider=resource_set.name)
    location = Location("url", ITEM_URI + record_id)
    current = index.get_resource(resource_id(resource_set.name, location.as_doc()))
    if record.get("deleted"):
        if current is None:
            return "unchanged"
        record_event(index, resource_set, location, "deleted", None, event_time)
        return "deleted"
    document = record.get("document")
    if not isinstance(document, str) or not document:
        raise ValidationError("index record without a document", provider=resource_set.name, record=record_id)
    data = document.encode("utf-8")
    md5 = hashlib.md5(data).hexdigest()
    if current is not None and current["md5"] == md5:
        return "unchanged"
    change = "created" if current is None else "updated"
    record_event(
        index,
        resource_set,
        location,
        change,
        event_time,
        event_time,
        length=len(data),
        md5=md5,
        sha256=hashlib.sha256(data).hexdigest(),
        mime=DOCUMENT_MIME,
    )
    return change
