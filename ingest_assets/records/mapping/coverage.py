"""Field coverage: how many MAP records filled each MAP field (the preview's table, the day report's section).

The enrichment activity counts the coverage of the records it writes and keeps it in its output's ``_LOGS/``
(:data:`COVERAGE_LOG`), so the day report reads a small file instead of the whole output again.
"""

from __future__ import annotations

import json

from ingest_assets.records.mapping.fields import FIELDS

COVERAGE_LOG = "coverage.json"
COVERED = [*FIELDS.items(), ("providerUri", ("top", "one"))]  # what a record may fill, the profile's URI too
_TOP = tuple(name for name, (section, _) in COVERED if section == "top")
_SOURCE = tuple(name for name, (section, _) in COVERED if section != "top")


class Coverage:
    """How many mapped records filled each MAP field."""

    def __init__(self) -> None:
        self.records = 0
        self.filled = dict.fromkeys([name for name, _ in COVERED], 0)

    def add(self, record: dict) -> None:
        self.records += 1
        filled = self.filled
        for name in filter(record.get, _TOP):
            filled[name] += 1
        for name in filter(record["sourceResource"].get, _SOURCE):
            filled[name] += 1

    def merge(self, other: "Coverage") -> None:
        self.records += other.records
        for name, count in other.filled.items():
            self.filled[name] += count

    def as_dict(self) -> dict[str, int]:
        return dict(self.filled)

    def to_bytes(self) -> bytes:
        return json.dumps({"records": self.records, "fields": self.filled}).encode("utf-8")

    @classmethod
    def from_bytes(cls, data: bytes) -> "Coverage":
        kept = json.loads(data)
        coverage = cls()
        coverage.records = int(kept["records"])
        coverage.filled.update((name, int(kept["fields"].get(name, 0))) for name in coverage.filled)
        return coverage
