"""The resource index and change log: what every backend (embedded SQL, Elasticsearch) provides.

Reading never deletes anything: the change log is append-only and the resource documents change only
through :meth:`ResourceIndex.apply`. Times in and out are the stored strings of :mod:`.model`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator


class ResourceIndex(ABC):
    @abstractmethod
    def apply(self, resource_key: str, resource: dict | None, change: dict) -> None:
        """In one step: upsert ``resource`` (or delete the resource ``resource_key`` when None) and add
        ``change`` (kept as first written if a change with the same ``change_id`` exists)."""

    @abstractmethod
    def get_resource(self, resource_key: str) -> dict | None:
        """The current resource document with that key (:func:`.model.resource_id`), None if absent."""

    @abstractmethod
    def resources(self, resource_set: str) -> Iterator[dict]:
        """Current resource documents of a set, by location value then type (streamed)."""

    @abstractmethod
    def changes(self, resource_set: str, start: str | None = None, end: str | None = None) -> Iterator[dict]:
        """Change documents with ``start <= datetime < end``, by datetime, timestamp, change_id (streamed)."""

    @abstractmethod
    def change_span(self, resource_set: str, recorded_after: str | None = None) -> tuple[str, str] | None:
        """(earliest datetime, latest timestamp) over changes recorded after ``recorded_after``
        (all when None); None when there are none."""

    def refresh(self) -> None:  # noqa: B027 - optional hook
        """Make every applied event visible to readers (a no-op for transactional backends)."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""
