"""Publish the ResourceSync documents of resource sets as static files in the storage layout.

URL path -> storage key is one rule (:func:`layout.resourcesync_key` of the path parts), so the server
only serves files. Per set::

    /.well-known/resourcesync                      Source Description (all sets)
    /<set>/capabilitylist.xml                      Capability List (rs:ln up -> Source Description)
    /<set>/resourcelist/<snapshot>/resourcelist.xml   Resource List or Resource List Index (+ components);
                                                   a new snapshot folder per publish, the newest two kept
    /<set>/changelist.xml                          Change List Index
    /<set>/changelist/<interval start>-NNNNN.xml   Change Lists of an interval with changes, cut at every
                                                   Resource List's ``at`` and at the sitemap limit
    /<set>/changelists.json                        publisher state (parts, Resource List times, recording
                                                   time seen)
    /<set>/resources/<path>                        the set's files, when it has no root (:mod:`.files`)

Change Lists carry every change ever logged (the log is never pruned). Each publish cuts the Change Lists
at the ``at`` of the Resource List it writes, so a destination that made its baseline from that Resource
List finds in the next Change List exactly the changes after it: the deletion of a resource it knows only
from the baseline is there, and not next to that resource's creation (which a client such as resync
would take for "created and deleted since", i.e. nothing to do). Changes are placed and ordered by their
listing time (``listed``, printed as ``rs:md datetime``), not their event time: the Resource List's ``at``
is recorded in the index before the list is read, and a change recorded after that is listed at ``at`` or
later, so an event observed before a publish but recorded after it still reaches the destinations
baselined from that publish. Only intervals touched by changes recorded since the previous publish are
rewritten (events recorded within a few minutes before a publish are looked at again by the next one, in
case their transaction committed after it read).
"""

from __future__ import annotations

import json
import tempfile
from bisect import bisect_right
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from ingest_assets.resourcesync import documents as docs
from ingest_assets.resourcesync.index import ResourceIndex
from ingest_assets.resourcesync.model import ResourceSet, parse_stored, stored_time, w3c_time
from ingest_assets.storage.backends import Storage
from ingest_assets.storage.layout import resourcesync_key

SNAPSHOT_FORMAT = "%Y%m%dT%H%M%S%fZ"
INTERVAL_FORMAT = "%Y%m%dT%H%M%SZ"
KEEP_SNAPSHOTS = 2
LATE_COMMIT_MARGIN = timedelta(minutes=5)
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _now() -> datetime:
    return datetime.now(timezone.utc)


@dataclass
class Publisher:
    """Writes the documents of ``sets`` for a server reachable at ``base_url``; ``clock`` is the clock
    events are recorded with (it closes intervals and dates the lists)."""

    index: ResourceIndex
    storage: Storage
    base_url: str
    interval: timedelta = timedelta(days=1)
    limit: int = docs.SITEMAP_LIMIT
    clock: Callable[[], datetime] = field(default=_now)

    def __post_init__(self):
        self.base_url = self.base_url.rstrip("/")
        if self.interval <= timedelta(0) or self.limit < 1:
            raise ValueError("interval and limit must be positive")

    def url(self, *parts: str) -> str:
        return "/".join([self.base_url, *parts])

    def publish(self, sets: list[ResourceSet]) -> dict[str, dict]:
        """Publish every set, then the Source Description; returns per-set counts."""
        summary = {}
        for resource_set in sets:
            resources = self._resource_list(resource_set)
            changes = self._change_lists(resource_set, resources["at"])
            self._write(
                resourcesync_key(resource_set.name, "capabilitylist.xml"),
                docs.write_capability_list,
                self.url(".well-known", "resourcesync"),
                [(resources["url"], "resourcelist"), (self.url(resource_set.name, "changelist.xml"), "changelist")],
            )
            self._prune_snapshots(resource_set.name)
            summary[resource_set.name] = {"resources": resources["count"], **changes}
        self._write(
            resourcesync_key(".well-known", "resourcesync"),
            docs.write_source_description,
            [self.url(s.name, "capabilitylist.xml") for s in sets],
        )
        return summary

    # -- Resource List ----------------------------------------------------------------------------------

    def _resource_list(self, resource_set: ResourceSet) -> dict:
        started = self.clock()
        self.index.start_resource_list(resource_set.name, stored_time(started))  # before reading: see above
        self.index.refresh()
        snapshot = started.astimezone(timezone.utc).strftime(SNAPSHOT_FORMAT)
        folder = resourcesync_key(resource_set.name, "resourcelist", snapshot)
        url = self.url(resource_set.name, "resourcelist", snapshot, "resourcelist.xml")
        entries = docs.resource_entries(resource_set, self.index.resources(resource_set.name))
        with self.storage.folder(folder) as writer:
            count, parts = docs.write_resource_list(
                writer.open,
                entries,
                up=self.url(resource_set.name, "capabilitylist.xml"),
                index_url=url,
                part_url=lambda n: self.url(resource_set.name, "resourcelist", snapshot, f"resourcelist-{n:05d}.xml"),
                at=self._w3c(started),
                now=lambda: self._w3c(self.clock()),
                limit=self.limit,
            )
            writer.write_bytes("_MANIFEST", json.dumps({"resources": count, "components": len(parts)}).encode())
        return {"url": url, "count": count, "at": stored_time(started)}

    def _prune_snapshots(self, name: str) -> None:
        prefix = resourcesync_key(name, "resourcelist")
        for old in self.storage.list_children(prefix)[:-KEEP_SNAPSHOTS]:
            self.storage.delete(f"{prefix}/{old}")

    # -- Change Lists -----------------------------------------------------------------------------------

    def _change_lists(self, resource_set: ResourceSet, resource_list_at: str) -> dict:
        name = resource_set.name
        state_key = resourcesync_key(name, "changelists.json")
        state = json.loads(self.storage.read_bytes(state_key)) if self.storage.exists(state_key) else {}
        parts = state.get("parts", [])
        cuts = sorted({*state.get("resource_list_ats", []), resource_list_at})
        after = state.get("recorded_after")
        now = self.clock()
        # events still committing while we read carry a recording time shortly before this moment
        in_flight = stored_time(now - LATE_COMMIT_MARGIN)
        span = self.index.change_span(name, after)
        dirty = [parse_stored(span[0])] if span else []
        dirty += [parse_stored(p["interval"]) for p in parts if p["until"] is None]  # open: to cut or close
        written = 0
        if dirty:
            start = self._interval_start(min(dirty))
            parts = [p for p in parts if parse_stored(p["interval"]) < start]
            for part in self._write_parts(resource_set, start, now, [parse_stored(c) for c in cuts]):
                parts.append(part)
                written += 1
        index_parts = [
            docs.Part(p["url"], {"from": w3c_time(p["from"]), "until": p["until"] and w3c_time(p["until"])})
            for p in parts
        ]
        self._write(
            resourcesync_key(name, "changelist.xml"),
            docs.write_change_list_index,
            index_parts,
            up=self.url(name, "capabilitylist.xml"),
            start=w3c_time(parts[0]["from"]) if parts else self._w3c(now),
        )
        seen = max(filter(None, [after, span and span[1]]), default=None)
        after = min(seen, in_flight) if seen else None
        self.storage.write_bytes(
            state_key,
            json.dumps({"recorded_after": after, "resource_list_ats": cuts, "parts": parts}).encode(),
            overwrite=True,
        )
        return {"change_lists": len(parts), "change_lists_written": written}

    def _interval_start(self, moment: datetime) -> datetime:
        return EPOCH + ((moment - EPOCH) // self.interval) * self.interval

    def _segment(self, moment: datetime, cuts: list[datetime]) -> tuple[datetime, datetime]:
        """The stretch of time a change listed at ``moment`` falls in: its interval, cut at every Resource
        List's ``at``."""
        start = self._interval_start(moment)
        end = start + self.interval
        i = bisect_right(cuts, moment)
        return max(start, cuts[i - 1]) if i else start, min(end, cuts[i]) if i < len(cuts) else end

    def _write_parts(
        self, resource_set: ResourceSet, start: datetime, now: datetime, cuts: list[datetime]
    ) -> Iterator[dict]:
        """Stream the changes from ``start`` once, cutting them into segments (:meth:`_segment`) and
        sitemap-sized parts (a part holds its entries, at most ``limit``, because its header needs ``until``)."""
        chunk: list[str] = []
        segment = interval = chunk_from = None
        number = 0
        for doc in self.index.changes(resource_set.name, stored_time(start)):
            moment = parse_stored(doc["listed"])
            doc_segment, doc_interval = self._segment(moment, cuts), self._interval_start(moment)
            if chunk and (doc_segment != segment or len(chunk) >= self.limit):
                until = doc["listed"] if doc_segment == segment else stored_time(segment[1])
                yield self._write_part(resource_set, interval, number, chunk_from, until, chunk)
                chunk = []
            if not chunk:
                number = number + 1 if doc_interval == interval else 1
                chunk_from = doc["listed"] if doc_segment == segment else stored_time(doc_segment[0])
                segment, interval = doc_segment, doc_interval
            chunk.append(docs.change_entry(resource_set, doc))
        if chunk:
            until = stored_time(segment[1]) if segment[1] <= now else None
            yield self._write_part(resource_set, interval, number, chunk_from, until, chunk)

    def _write_part(
        self,
        resource_set: ResourceSet,
        interval: datetime,
        number: int,
        start: str,
        until: str | None,
        entries: list[str],
    ) -> dict:
        name = f"{interval.strftime(INTERVAL_FORMAT)}-{number:05d}.xml"
        url = self.url(resource_set.name, "changelist", name)
        self._write(
            resourcesync_key(resource_set.name, "changelist", name),
            docs.write_change_list,
            entries,
            up=self.url(resource_set.name, "capabilitylist.xml"),
            index_url=self.url(resource_set.name, "changelist.xml"),
            start=w3c_time(start),
            end=until and w3c_time(until),
        )
        return {"url": url, "interval": stored_time(interval), "from": start, "until": until}

    # -- helpers ------------------------------------------------------------------------------------------

    def _w3c(self, moment: datetime) -> str:
        return w3c_time(stored_time(moment))

    def _write(self, key: str, writer, *args, **kwargs) -> None:
        """Stream a document into a local temporary file, then publish it atomically at ``key``."""
        with _temporary() as path:
            with open(path, "wb") as out:
                writer(out, *args, **kwargs)
            self.storage.write_file(key, path, overwrite=True)


@contextmanager
def _temporary():
    with tempfile.TemporaryDirectory(prefix="resourcesync-") as tmp:
        yield Path(tmp) / "document.xml"
