"""Resource sets, locations and the two index documents (``resource`` and ``change``) of the ES protocol.

Documents are plain dicts shaped like the Elasticsearch mappings in ``ingest_assets/schemas/resourcesync-*.json`` so
that every backend stores and returns exactly the same thing::

    resource: resource_set, location{type,value}, length, md5, sha256, mime, lastmod,
              ln[{rel, href{type,value}, mime}], timestamp
    change:   change_id, resource_set, location{type,value}, change, lastmod, datetime, listed, timestamp,
              length, md5, sha256, mime

``datetime`` is the event time (the resource's history); ``listed`` is when the change is listed in the
Change Lists (and their ``rs:md datetime``): :func:`listing_time`.

Times are stored as fixed-width UTC strings with milliseconds (``2013-01-02T13:00:00.000Z``: they sort as
text and Elasticsearch ``date`` keeps milliseconds); documents print them without ``.000``.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from urllib.parse import quote, urlsplit

from ingest_assets.core.errors import ValidationError

CHANGES = ("created", "updated", "deleted")
URL_SAFE = "/~!$&'()*+,;=:@-._"
PLAIN_PATH = re.compile(r"[A-Za-z0-9._~!$'()*+,;=:@/-]+")  # nothing to percent-encode or XML-escape
_BAD_SEGMENT = re.compile(r"(?:^|/)\.{0,2}(?:/|$)")  # empty, "." or ".." segment
LOCATION_TYPES = ("url", "abs_path", "rel_path")
STORED_FORMAT = "%Y-%m-%dT%H:%M:%S.{ms}Z"


def stored_time(moment: datetime) -> str:
    """A timezone-aware datetime as the fixed-width stored form (milliseconds, UTC)."""
    if not isinstance(moment, datetime) or moment.tzinfo is None:
        raise ValidationError(f"datetime must be timezone-aware, got {moment!r}")
    moment = moment.astimezone(timezone.utc)
    return moment.strftime(STORED_FORMAT.format(ms=f"{moment.microsecond // 1000:03d}"))


def w3c_time(stored: str) -> str:
    """The stored form as printed in documents: ``...:00Z`` when the milliseconds are zero."""
    return stored[:19] + "Z" if stored.endswith(".000Z") else stored


def parse_stored(stored: str) -> datetime:
    return datetime.strptime(stored, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)


def listing_time(event_time: str, resource_list_at: str | None) -> str:
    """When a change recorded after a Resource List taken at ``resource_list_at`` is listed: its event
    time, or that ``at`` when the event time is earlier, so that a destination baselined from that
    Resource List (which may lack the change) finds it in the Change Lists from ``at`` on."""
    return max(event_time, resource_list_at) if resource_list_at else event_time


@dataclass(frozen=True)
class Location:
    """Where a resource is: a full ``url``, an ``abs_path`` under the set's root, or a ``rel_path``."""

    type: str
    value: str

    @classmethod
    def of(cls, value: "Location | str | dict") -> "Location":
        """Accept a Location, a ``{type, value}`` dict, or a string (URL, absolute path, relative path)."""
        if isinstance(value, Location):
            return value
        if isinstance(value, dict):
            return cls(value.get("type", ""), value.get("value", ""))
        if not isinstance(value, str) or not value:
            raise ValidationError(f"location must be a non-empty string, got {value!r}")
        if urlsplit(value).scheme in ("http", "https"):
            return cls("url", value)
        return cls("abs_path" if value.startswith("/") else "rel_path", value)

    def as_doc(self) -> dict:
        return {"type": self.type, "value": self.value}


def _check_rel(rel: str, provider: str, record: str) -> str:
    parts = rel.split("/")
    if not rel or rel.startswith("/") or "\\" in rel or any(p in ("", ".", "..") for p in parts):
        raise ValidationError(
            f"relative path {rel!r} is not a canonical path inside the root", provider=provider, record=record
        )
    return rel


@dataclass(frozen=True)
class ResourceSet:
    """One published set: its name, the URL prefix of its resources and the root their paths live under.

    ``root`` is a local directory or storage URL: ``rel_path`` locations are relative to it, ``abs_path``
    locations must lie below it (lexically, after normalisation) and are published relative to it.
    Without a root, ``rel_path`` locations are relative to the set's storage area (:mod:`.files`).
    """

    name: str
    url_prefix: str
    root: str | None = None
    publish_outputs: bool = False  # the provider's record activity outputs are files too (:mod:`.outputs`)

    def __post_init__(self):
        if not self.url_prefix.endswith("/"):
            object.__setattr__(self, "url_prefix", self.url_prefix + "/")

    def relative(self, location: Location) -> str:
        """The path of a file location relative to the root; never outside it."""
        record = location.value
        if location.type == "rel_path":
            return _check_rel(location.value, self.name, record)
        if location.type != "abs_path":
            raise ValidationError(f"location type {location.type!r} has no path", provider=self.name, record=record)
        if not self.root or urlsplit(self.root).scheme not in ("", "file"):
            raise ValidationError("abs_path needs a local root for the resource set", provider=self.name, record=record)
        root = posixpath.abspath(urlsplit(self.root).path if "://" in self.root else self.root)
        path = posixpath.normpath(location.value)
        if not location.value.startswith("/") or not path.startswith(root.rstrip("/") + "/"):
            raise ValidationError(f"abs_path is outside the root {root!r}", provider=self.name, record=record)
        return _check_rel(path[len(root.rstrip("/")) + 1 :], self.name, record)

    def canonical(self, location: Location) -> Location:
        """The stored form: URLs as they are, file paths relative to the root (an ``abs_path`` and the
        ``rel_path`` of the same file are one resource)."""
        if location.type == "url":
            self.url(location)
            return location
        return Location("rel_path", self.relative(location))

    def url(self, location: Location) -> str:
        """The published URL of a location (``url`` as is, paths appended to ``url_prefix``)."""
        if location.type == "url":
            if urlsplit(location.value).scheme not in ("http", "https"):
                raise ValidationError("url location must be http(s)", provider=self.name, record=location.value)
            return location.value
        if location.type not in LOCATION_TYPES:
            raise ValidationError(f"unknown location type {location.type!r}", provider=self.name, record=location.value)
        return self.url_prefix + quote(self.relative(location), safe=URL_SAFE)

    def stored_url(self, location: dict) -> str:
        """:meth:`url` of a stored location (``{type, value}``), fast for plain relative paths."""
        value = location["value"]
        if location["type"] == "rel_path" and PLAIN_PATH.fullmatch(value) and not _BAD_SEGMENT.search(value):
            return self.url_prefix + value
        return self.url(Location(location["type"], value))


def doc_id(*parts: str) -> str:
    """A stable document id from its identifying fields (same in every backend)."""
    return hashlib.sha1("\x00".join(parts).encode()).hexdigest()


def resource_id(resource_set: str, location: dict) -> str:
    return doc_id(resource_set, location["type"], location["value"])
