"""The enrichment report of one run: per field, records improved vs unchanged, plus sample changes."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Iterable
from typing import Any

CSV_COLUMNS = ("field", "improved", "unchanged", "sample_record", "before", "after")


class EnrichmentReport:
    """``add(record_id, changes, samples)`` per record; ``samples`` is the ``(before, after)`` record
    pair, only read while a changed field still needs examples (at most ``samples_per_field``)."""

    def __init__(self, samples_per_field: int = 5) -> None:
        self.samples_per_field = samples_per_field
        self.records = 0
        self._improved: Counter[str] = Counter()
        self._samples: dict[str, list[tuple[str, str, str]]] = {}

    def add(
        self,
        record_id: str,
        changes: Iterable[str],
        samples: tuple[dict[str, Any], dict[str, Any]] | None = None,
    ) -> None:
        self.records += 1
        for name in changes:
            self._improved[name] += 1
            taken = self._samples.setdefault(name, [])
            if samples is not None and len(taken) < self.samples_per_field:
                before, after = samples
                taken.append((record_id, _value(before, name), _value(after, name)))

    def merge(self, other: "EnrichmentReport") -> None:
        """Add another run's report (of later records: samples fill up in record order)."""
        self.records += other.records
        self._improved.update(other._improved)
        for name, samples in other._samples.items():
            taken = self._samples.setdefault(name, [])
            taken.extend(samples[: self.samples_per_field - len(taken)])

    def summary(self) -> dict[str, Any]:
        return {
            "records": self.records,
            "fields": {
                name: {"improved": n, "unchanged": self.records - n} for name, n in sorted(self._improved.items())
            },
        }

    def csv(self) -> bytes:
        """One row per field (counts), then one row per sample with its before/after JSON."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        writer.writerow(("(records)", "", self.records, "", "", ""))
        for name, improved in sorted(self._improved.items()):
            writer.writerow((name, improved, self.records - improved, "", "", ""))
            for record_id, before, after in self._samples.get(name, ()):
                writer.writerow((name, "", "", record_id, before, after))
        return out.getvalue().encode("utf-8")

    def metadata(self) -> dict[str, Any]:
        """Plain values for Dagster metadata: total and improved count per field."""
        return {"records": self.records, "improved": dict(sorted(self._improved.items()))}


def _value(record: dict[str, Any], name: str) -> str:
    source = record.get("sourceResource") or {}
    value = source[name] if name in source else record.get(name)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)[:1000]
