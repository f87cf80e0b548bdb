"""The resource index and change log: what every backend (embedded SQL, Elasticsearch) provides.

Reading never deletes anything: the change log is append-only and the resource documents change only
through :meth:`ResourceIndex.apply`. Times in and out are the stored strings of :mod:`.model`.

Each set also remembers the ``at`` of its latest Resource List (:meth:`ResourceIndex.start_resource_list`,
called before the list is read): :meth:`ResourceIndex.apply` lists every change it records at that time
or later (:func:`.model.listing_time`), so a change the Resource List may have missed is never listed
before it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator


class ResourceIndex(ABC):
    @abstractmethod
    def apply(self, resource_key: str, resource: dict | None, change: dict) -> dict:
        """In one step: upsert ``resource`` (or delete the resource ``resource_key`` when None) and add
        ``change`` with ``listed`` set from its ``datetime`` and the set's latest Resource List ``at``.
        A change with the same ``change_id`` already logged is kept as first written. Returns the change
        document as stored."""

    @abstractmethod
    def start_resource_list(self, resource_set: str, at: str) -> None:
        """Record that a Resource List of the set is taken at ``at``; returns when every change recorded
        from then on is listed at ``at`` or later and the others can be read."""

    @abstractmethod
    def get_resource(self, resource_key: str) -> dict | None:
        """The current resource document with that key (:func:`.model.resource_id`), None if absent."""

    @abstractmethod
    def resources(self, resource_set: str) -> Iterator[dict]:
        """Current resource documents of a set, by location value then type (streamed)."""

    @abstractmethod
    def changes(self, resource_set: str, start: str | None = None, end: str | None = None) -> Iterator[dict]:
        """Change documents with ``start <= listed < end``, by listed, timestamp, change_id (streamed)."""

    @abstractmethod
    def change_span(self, resource_set: str, recorded_after: str | None = None) -> tuple[str, str] | None:
        """(earliest listed, latest timestamp) over changes recorded after ``recorded_after``
        (all when None); None when there are none."""

    def refresh(self) -> None:  # noqa: B027 - optional hook
        """Make every applied event visible to readers (a no-op for transactional backends)."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""
