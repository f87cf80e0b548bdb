"""Quality figures behind the record pipeline's gates, read from the activities' ``_MANIFEST`` files, and the
verdicts the gates give on them: passed or not, in words that name the figure, the limit and the registry key that
sets it (a failed gate is read on the command line, in ``status`` and in the UI)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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


@dataclass(frozen=True)
class Verdict:
    """A gate's judgement: whether it passed, what it found (in words) and its figures."""

    passed: bool
    description: str
    figures: dict[str, Any] = field(default_factory=dict)


def judge_count_drop(provider: str, found: CountDrop, limit: float) -> Verdict:
    """``found`` against ``<provider>.quality.max_count_drop`` (``limit``)."""
    key = f"{provider}.quality.max_count_drop"
    figures = {"current": found.current, "previous": found.previous or 0, "drop": found.drop or 0.0, "limit": limit,
               "registry_key": key}
    if found.drop is None:
        text = (f"{found.current} records; no earlier full harvest to compare with" if found.previous is None
                else f"{found.current} records; the earlier full harvest held none")
        return Verdict(True, text, figures)
    compared = f"{found.previous} -> {found.current} records, {found.drop:.1%} fewer than the previous full harvest"
    if found.drop <= limit:
        return Verdict(True, f"harvest count {compared}, within the limit {limit:.1%} ({key})", figures)
    return Verdict(False, f"harvest count dropped: {compared}, more than the limit {limit:.1%}. If the source "
                   f"really shrank, raise {key} in the registry (now {limit:g}) and harvest the day again; otherwise "
                   "the source answered short: harvest the day again later", figures)


def judge_failure_rate(provider: str, manifest: Manifest | None, limit: float) -> Verdict:
    """The mapping output's failure rate (``manifest``; None: nothing was mapped) against
    ``<provider>.quality.max_failure_rate`` (``limit``)."""
    key = f"{provider}.quality.max_failure_rate"
    rate, attempted, failed = failure_rate(manifest) if manifest is not None else (0.0, 0, 0)
    figures = {"failure_rate": rate, "attempted": attempted, "failed": failed, "limit": limit, "registry_key": key}
    text = f"mapping failure rate {rate:.1%} ({failed} of {attempted} records failed to map, deletions not counted)"
    if rate <= limit:
        return Verdict(True, f"{text}, within the limit {limit:.1%} ({key})", figures)
    return Verdict(False, f"{text}, above the limit {limit:.1%}. See why in the mapping output's "
                   f"_LOGS/mapping-report.csv (or preview: ingest-assets map --provider {provider} harvest:{provider}); "
                   f"fix the mapping, or accept the failures by raising {key} in the registry (now {limit:g}), then "
                   "harvest the day again", figures)
