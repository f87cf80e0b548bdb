"""The mapping report of one run: counts, per message kind and field, with examples (flat memory); the MAP fields
the mapped records filled (:class:`Coverage`)."""

from __future__ import annotations

import csv
import io
from collections import Counter
from typing import Any

import orjson

from ingest_assets.records.mapping.fields import FIELDS
from ingest_assets.records.mapping.mapper import MappingResult, Message

CSV_COLUMNS = ("kind", "field", "count", "example_record", "example_value", "reason")


class MappingReport:
    """Accumulates ``MappingResult``s. Memory is bounded: one example message per (kind, field)."""

    def __init__(self) -> None:
        self.attempted = 0
        self.mapped = 0
        self.failed = 0
        self.deleted = 0
        self._counts: Counter[tuple[str, str]] = Counter()
        self._examples: dict[tuple[str, str], Message] = {}

    def add(self, result: MappingResult) -> None:
        self.attempted += 1
        if result.record is not None:
            self.mapped += 1
        elif result.deleted:
            self.deleted += 1
        else:
            self.failed += 1
        for message in result.messages:
            key = (message.kind, message.field)
            self._counts[key] += 1
            self._examples.setdefault(key, message)

    def merge(self, other: "MappingReport") -> None:
        """Add another run's report (of later records: examples already held are kept)."""
        self.attempted += other.attempted
        self.mapped += other.mapped
        self.failed += other.failed
        self.deleted += other.deleted
        self._counts.update(other._counts)
        for key, message in other._examples.items():
            self._examples.setdefault(key, message)

    @property
    def failure_rate(self) -> float:
        """Failed / (attempted - deleted); 0.0 when nothing was mappable."""
        mappable = self.attempted - self.deleted
        return self.failed / mappable if mappable else 0.0

    def summary(self) -> dict[str, Any]:
        fields: Counter[str] = Counter()
        for (kind, field_name), count in self._counts.items():
            if kind != "deleted":
                fields[field_name] += count
        return {
            "attempted": self.attempted,
            "mapped": self.mapped,
            "failed": self.failed,
            "deleted": self.deleted,
            "failure_rate": round(self.failure_rate, 6),
            "messages": {f"{kind}:{f}" if f else kind: n for (kind, f), n in sorted(self._counts.items())},
            "fields": dict(sorted(fields.items())),
        }

    def csv(self) -> bytes:
        """Totals then one row per (kind, field) with its count and first example."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        for name in ("attempted", "mapped", "failed", "deleted"):
            writer.writerow(("total", name, getattr(self, name), "", "", ""))
        for (kind, field_name), count in sorted(self._counts.items()):
            example = self._examples[(kind, field_name)]
            writer.writerow((kind, field_name, count, example.record, example.value[:500], example.reason))
        return out.getvalue().encode("utf-8")

    def metadata(self) -> dict[str, Any]:
        """Plain values for Dagster asset metadata (numbers plot over partitions)."""
        summary = self.summary()
        return {
            "attempted": summary["attempted"],
            "mapped": summary["mapped"],
            "failed": summary["failed"],
            "deleted": summary["deleted"],
            "failure_rate": summary["failure_rate"],
            "messages": summary["messages"],
        }


COVERAGE_LOG = "coverage.json"  # the enrichment output's _LOGS/ file that keeps its records' coverage
COVERED = [*FIELDS.items(), ("providerUri", ("top", "one"))]  # what a record may fill, the profile's URI too
_TOP = tuple(name for name, (section, _) in COVERED if section == "top")
_SOURCE = tuple(name for name, (section, _) in COVERED if section != "top")


MAX_SETS = 4096  # distinct sets of filled fields kept before they are added up


class Coverage:
    """How many mapped records filled each MAP field. The enrichment activity counts the coverage of the records it
    writes and keeps it (:data:`COVERAGE_LOG`), so the day report reads a small file, not the whole output again.

    A provider's records fill few distinct sets of fields: each record counts once for its set, and the counts per
    field are added up from the sets when read (``filled``)."""

    def __init__(self) -> None:
        self.records = 0
        self._filled = dict.fromkeys([name for name, _ in COVERED], 0)
        self._sets: Counter[tuple[str, ...]] = Counter()  # the names a record filled: how many records

    def add(self, record: dict) -> None:
        self.records += 1
        sets = self._sets
        sets[(*filter(record.get, _TOP), *filter(record["sourceResource"].get, _SOURCE))] += 1
        if len(sets) > MAX_SETS:  # a provider whose records fill many distinct sets: memory stays bounded
            self._fold()

    @property
    def filled(self) -> dict[str, int]:
        """Records per field, in :data:`COVERED`'s order."""
        self._fold()
        return self._filled

    def _fold(self) -> None:
        filled = self._filled
        for names, records in self._sets.items():
            for name in names:
                filled[name] += records
        self._sets.clear()

    def merge(self, other: "Coverage") -> None:
        self.records += other.records
        for name, count in other.filled.items():
            self._filled[name] += count

    def as_dict(self) -> dict[str, int]:
        return dict(self.filled)

    def to_bytes(self) -> bytes:
        return orjson.dumps({"records": self.records, "fields": self.filled})

    @classmethod
    def from_bytes(cls, data: bytes) -> "Coverage":
        kept = orjson.loads(data)
        coverage = cls()
        coverage.records = int(kept["records"])
        coverage._filled.update((name, int(kept["fields"].get(name, 0))) for name in coverage._filled)
        return coverage
