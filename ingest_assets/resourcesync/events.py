"""How a change of something a capability holds is recorded; capabilities reach it through
:class:`~ingest_assets.resourcesync.feed.ChangeFeed`, its one caller.

A record indexed or withdrawn, a file stored or deleted: :func:`record_event` takes the event time
(when the change happened, not when it is processed). It writes, in one step of the index, the resource
document (current state; removed on ``deleted``) and an append-only change document. The ResourceSync
Resource Lists and Change Lists are generated from those two documents. The change keeps the event time
(``datetime``) and is listed at ``listed``: the event time, or the ``at`` of the set's latest Resource List
when the event is recorded after it (that list may lack the change, so it must be listed after it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import datetime as Datetime
from datetime import timezone

from ingest_assets.core.errors import ValidationError
from ingest_assets.resourcesync.index import ResourceIndex
from ingest_assets.resourcesync.model import CHANGES, Location, ResourceSet, doc_id, resource_id, stored_time

# what documents print without escaping: lower-case hex digests and plain media types
PATTERNS = {
    "md5": re.compile(r"[0-9a-f]{32}"),
    "sha256": re.compile(r"[0-9a-f]{64}"),
    "mime": re.compile(r"[\w.+-]+/[\w.+-]+(?:; ?[\w.+-]+=[\w.+-]+)*", re.ASCII),
}


def record_event(
    index: ResourceIndex,
    resource_set: ResourceSet,
    location: Location | str,
    change: str,
    lastmod: Datetime | None,
    datetime: Datetime,
    length: int | None = None,
    md5: str | None = None,
    sha256: str | None = None,
    mime: str | None = None,
    links: Iterable[Mapping] = (),
    *,
    timestamp: Datetime | None = None,
) -> dict:
    """Record that ``location`` in ``resource_set`` was created/updated/deleted at ``datetime``.

    ``location`` is a URL, an absolute path (must lie under the set's root; stored relative to it) or a
    path relative to the root.
    ``links`` are ``{"rel", "href", "mime"?}`` mappings (href takes the same forms as ``location``).
    ``timestamp`` is when the index learned of it (defaults to now). Recording the same event twice is
    harmless: the change document's id is derived from set, location, change and datetime, and the
    first one recorded (with its ``listed``) is kept. Returns the change document as stored.
    """
    loc = resource_set.canonical(Location.of(location))  # rejects abs_path outside the root, '..', ...
    if change not in CHANGES:
        raise ValidationError(
            f"change must be one of {CHANGES}, got {change!r}", provider=resource_set.name, record=loc.value
        )
    for name, value in {"length": length, "md5": md5, "sha256": sha256, "mime": mime}.items():
        if value is not None and not _valid(name, value):
            raise ValidationError(f"invalid {name} {value!r}", provider=resource_set.name, record=loc.value)
    when = stored_time(datetime)
    modified = stored_time(lastmod) if lastmod is not None else None
    recorded = stored_time(timestamp or Datetime.now(timezone.utc))
    location_doc = loc.as_doc()
    change_doc = {
        "change_id": doc_id(resource_set.name, loc.type, loc.value, change, when),
        "resource_set": resource_set.name,
        "location": location_doc,
        "change": change,
        "lastmod": modified,
        "datetime": when,
        "listed": None,  # set by the index when it writes the event (ResourceIndex.apply)
        "timestamp": recorded,
        "length": length,
        "md5": md5,
        "sha256": sha256,
        "mime": mime,
    }
    resource_doc = None
    if change != "deleted":
        resource_doc = {
            "resource_set": resource_set.name,
            "location": location_doc,
            "length": length,
            "md5": md5,
            "sha256": sha256,
            "mime": mime,
            "lastmod": modified,
            "ln": [_link(resource_set, link, loc.value) for link in links],
            "timestamp": recorded,
        }
    return index.apply(resource_id(resource_set.name, location_doc), resource_doc, change_doc)


def _link(resource_set: ResourceSet, link: Mapping, record: str) -> dict:
    if not link.get("rel") or not link.get("href"):
        raise ValidationError(f"link needs rel and href, got {dict(link)!r}", provider=resource_set.name, record=record)
    href = resource_set.canonical(Location.of(link["href"]))
    return {"rel": str(link["rel"]), "href": href.as_doc(), "mime": link.get("mime")}


def _valid(name: str, value: object) -> bool:
    if name == "length":
        return type(value) is int and value >= 0
    return isinstance(value, str) and PATTERNS[name].fullmatch(value) is not None
