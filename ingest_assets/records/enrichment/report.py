"""The enrichment report of one run, as ingestion3's enrichment summary: records attempted and improved, and
how many records each step changed in each field, with sample changes per field."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Iterable
from typing import Any

from ingest_assets.core.registry import ENRICHMENT_STEPS

CSV_COLUMNS = ("step", "field", "changed", "unchanged", "sample_record", "before", "after")
ANY = "(any)"


class EnrichmentReport:
    """``add(record_id, changes, samples)`` per record; ``changes`` are ``(step, field)`` pairs and ``samples``
    the ``(before, after)`` record pair, read only while a changed field still needs examples. The records of a
    provider change in few distinct ways: each way is counted once per record, the counts per field and step
    are added up from them."""

    def __init__(self, samples_per_field: int = 5) -> None:
        self.samples_per_field = samples_per_field
        self.records = 0
        self.improved = 0
        self._patterns: dict[frozenset[tuple[str, str]], _Pattern] = {}  # each set of changes: its records, fields
        self._samples: dict[str, list[tuple[str, str, str]]] = {}
        self._sampled: set[str] = set()  # fields whose samples are all taken

    def add(self, record_id: str, changes: Iterable[tuple[str, str]],
            samples: tuple[dict[str, Any], dict[str, Any]] | None = None) -> None:
        self.records += 1
        pattern = frozenset(changes)
        if not pattern:
            return
        self.improved += 1
        seen = self._patterns.get(pattern)  # one look-up a record: the set's count, fields and sampling in one place
        if seen is None:
            seen = self._patterns[pattern] = _Pattern(frozenset(name for _, name in pattern))
        seen.records += 1
        if samples is None or seen.sampled:
            return
        before, after = samples
        for name in seen.names - self._sampled:
            taken = self._samples.setdefault(name, [])
            taken.append((record_id, _value(before, name), _value(after, name)))
            if len(taken) >= self.samples_per_field:
                self._sampled.add(name)
        seen.sampled = seen.names <= self._sampled

    def merge(self, other: "EnrichmentReport") -> None:
        """Add another run's report (of later records: samples fill up in record order)."""
        self.records += other.records
        self.improved += other.improved
        for pattern, theirs in other._patterns.items():
            seen = self._patterns.get(pattern)
            if seen is None:
                seen = self._patterns[pattern] = _Pattern(theirs.names)
            seen.records += theirs.records
        for name, samples in other._samples.items():
            taken = self._samples.setdefault(name, [])
            taken.extend(samples[: self.samples_per_field - len(taken)])
            if len(taken) >= self.samples_per_field:
                self._sampled.add(name)

    @property
    def _fields(self) -> Counter[str]:
        """Records changed per field."""
        fields: Counter[str] = Counter()
        for seen in self._patterns.values():
            for name in seen.names:
                fields[name] += seen.records
        return fields

    @property
    def _steps(self) -> Counter[tuple[str, str]]:
        """Records changed per (step, field)."""
        steps: Counter[tuple[str, str]] = Counter()
        for pattern, seen in self._patterns.items():
            for change in pattern:
                steps[change] += seen.records
        return steps

    def _step_rows(self) -> list[tuple[str, str, int]]:
        order = {step: n for n, step in enumerate(ENRICHMENT_STEPS)}
        return sorted(((step, name, n) for (step, name), n in self._steps.items()),
                      key=lambda row: (row[1], order[row[0]]))

    def summary(self) -> dict[str, Any]:
        return {
            "records": self.records,
            "improved": self.improved,
            "fields": {name: {"changed": n, "unchanged": self.records - n} for name, n in sorted(self._fields.items())},
            "steps": {f"{step} {name}": n for step, name, n in self._step_rows()},
        }

    def csv(self) -> bytes:
        """The records row, per field its row (step ``(any)``) then one per step that changed it, then samples."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        writer.writerow((ANY, "(records)", self.improved, self.records - self.improved, "", "", ""))
        steps: dict[str, list[tuple[str, int]]] = {}
        for step, name, n in self._step_rows():
            steps.setdefault(name, []).append((step, n))
        for name, changed in sorted(self._fields.items()):
            writer.writerow((ANY, name, changed, self.records - changed, "", "", ""))
            for step, n in steps.get(name, ()):
                writer.writerow((step, name, n, self.records - n, "", "", ""))
        for name in sorted(self._samples):
            for record_id, before, after in self._samples[name]:
                writer.writerow(("(sample)", name, "", "", record_id, before, after))
        return out.getvalue().encode("utf-8")

    def metadata(self) -> dict[str, Any]:
        """Plain values for Dagster metadata and the _MANIFEST: records, improved, and changes per field."""
        return {"records": self.records, "improved": self.improved, "fields": dict(sorted(self._fields.items()))}


class _Pattern:
    """One set of changes: how many records it changed, their fields, whether those fields' samples are all taken."""

    __slots__ = ("records", "names", "sampled")

    def __init__(self, names: frozenset[str]) -> None:
        self.records, self.names, self.sampled = 0, names, False


_EXTENSIONS = {"provider": "providerExactMatch", "dataProvider": ("dataProviderUri", "dataProviderExactMatch")}


def _value(record: dict[str, Any], name: str) -> str:
    source = record.get("sourceResource") or {}
    if name in source:
        value: Any = source[name]
    elif name in _EXTENSIONS:  # the name and what enrichment adds to it
        keys = _EXTENSIONS[name] if isinstance(_EXTENSIONS[name], tuple) else (_EXTENSIONS[name],)
        value = {name: record.get(name), **{key: record.get(key) for key in keys}}
    else:
        value = record.get(name)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)[:1000]
