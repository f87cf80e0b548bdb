"""Quality figures behind the record pipeline's gates, read from the activities' ``_MANIFEST`` files."""

from __future__ import annotations

from dataclasses import dataclass

from ingest_assets.storage import layout
from ingest_assets.storage.backends import Storage
from ingest_assets.storage.manifest import Manifest

FULL = "full"


@dataclass(frozen=True)
class CountDrop:
    current: int
    previous: int | None
    drop: float | None  # fraction lost vs previous; None when there is nothing comparable


def _manifest(storage: Storage, output: layout.ActivityOutput) -> Manifest:
    return Manifest.from_bytes(storage.read_bytes(output.manifest))


def count_drop(storage: Storage, outputs: list[layout.ActivityOutput], current: layout.ActivityOutput | None) -> CountDrop:
    """Drop of ``current``'s record count vs the newest earlier *full* harvest (incremental ones vary by day)."""
    if current is None:
        return CountDrop(0, None, None)
    now = _manifest(storage, current)
    if now.extra.get("Summary mode") != FULL:
        return CountDrop(now.record_count, None, None)
    earlier = [o for o in outputs if o.started < current.started]
    for output in sorted(earlier, key=lambda o: o.started, reverse=True):
        before = _manifest(storage, output)
        if before.extra.get("Summary mode") == FULL:
            if before.record_count == 0:
                return CountDrop(now.record_count, 0, None)
            return CountDrop(now.record_count, before.record_count, max(0.0, 1 - now.record_count / before.record_count))
    return CountDrop(now.record_count, None, None)


def failure_rate(manifest: Manifest) -> tuple[float, int, int]:
    """``(rate, attempted, failed)`` from a mapping manifest's summary; deletions are not failures."""
    attempted = int(manifest.extra.get("Summary attempted", manifest.record_count))
    failed = int(manifest.extra.get("Summary failed", 0))
    mappable = attempted - int(manifest.extra.get("Summary deleted", 0))
    return (failed / mappable if mappable else 0.0), attempted, failed
