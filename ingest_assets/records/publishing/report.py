"""The report of one provider day, for the hub that sent the data and the operator who publishes it.

Counts per stage (from the ``_MANIFEST`` files of the very outputs the indexing read), problems grouped by
message with example ids (the harvest's unreadable records, the mapping's failures and dropped values), field
coverage of the enriched records, and what changed since the previous published day: the day's IndexRecords
against what the live index holds for the provider (records added, removed, changed, and per MAP field how
many records changed with before/after examples). Memory is bounded: records stream in batches, examples are
capped. Written as JSON and HTML into the indexing output's ``_LOGS/`` (:func:`write_report`).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator
from datetime import date, datetime
from itertools import islice
from typing import Any

from ingest_assets.core.registry import ProviderEntry
from ingest_assets.records.indexing import SearchIndex
from ingest_assets.records.mapping.report import Coverage
from ingest_assets.records.publishing.review import PENDING, DayState
from ingest_assets.storage import layout
from ingest_assets.storage.activities import RecordSource

REPORT_JSON, REPORT_HTML = "report.json", "report.html"
EXAMPLES = 5  # example ids per problem, added or removed records
FIELD_EXAMPLES = 3  # before/after examples per changed field
BATCH = 500  # records looked up in the live index at once
NOT_COMPARED = {"@context", "@id", "@type", "aggregatedCHO", "id", "ingestDate"}  # the same for every version
MAPPING_WARNINGS = {"invalid_value"}  # a value dropped; the record still maps


def build_report(
    entry: ProviderEntry,
    day: date,
    indexing: RecordSource,
    index: SearchIndex,
    live: str | None,
    review: DayState | None,
    suppressed: set[str],
    now: datetime,
) -> dict[str, Any]:
    """The report of ``entry``'s ``day`` whose IndexRecords are ``indexing``, compared with ``live`` (the
    provider's index behind the alias, None when it has none)."""
    enrichment, harvest = _inputs(indexing)
    mapping = _inputs(enrichment)[0] if enrichment else None
    outputs = {"harvest": harvest, "mapping": mapping, "enrichment": enrichment, "indexing": indexing}
    coverage = Coverage()
    for record in enrichment or ():
        coverage.add(record)
    return {
        "provider": entry.name,
        "label": entry.label,
        "day": day.isoformat(),
        "generated": now.isoformat(),
        "outputs": {name: source.uri for name, source in outputs.items() if source},
        "counts": _counts(outputs),
        "problems": _problems(harvest, mapping),
        "coverage": {"records": coverage.records, "fields": coverage.as_dict()},
        "diff": diff_against(indexing, index, live, suppressed),
        "review": review_section(entry, review),
    }


def review_section(entry: ProviderEntry, state: DayState | None) -> dict[str, Any]:
    """Whether the day waits for review, until when, and how to decide."""
    section: dict[str, Any] = {"required": entry.settings.review.required}
    if state is None:
        return section
    section.update(state=state.state, deadline=state.deadline.isoformat() if state.deadline else None,
                   decided_by=state.decided_by, reason=state.reason)
    if state.state == PENDING:
        when = f"--date {state.day.isoformat()}"
        section["commands"] = {
            "approve": f"ingest-assets review approve {entry.name} {when}",
            "reject": f"ingest-assets review reject {entry.name} {when} --reason '...'",
            "ui": f"Dagster UI: job record_publish, partition {state.day.isoformat()}|{entry.name}, run config "
                  "ops: {review_gate: {config: {decision: approve}}} (or reject, with a reason)",
        }
    return section


def write_report(indexing: RecordSource, report: dict[str, Any], html: str) -> list[str]:
    """Write the report as JSON and HTML into the output's ``_LOGS/``; returns their URIs."""
    written = []
    for name, data in ((REPORT_JSON, json.dumps(report, indent=2, ensure_ascii=False).encode("utf-8")),
                       (REPORT_HTML, html.encode("utf-8"))):
        key = f"{indexing.key}/{indexing.output.log(name)}"
        indexing.storage.write_bytes(key, data, overwrite=True)
        written.append(indexing.storage.uri(key))
    return written


def read_report(indexing: RecordSource) -> dict[str, Any] | None:
    """The report kept with ``indexing`` (None when it has none)."""
    key = f"{indexing.key}/{indexing.output.log(REPORT_JSON)}"
    if not indexing.storage.exists(key):
        return None
    return json.loads(indexing.storage.read_bytes(key))


# -- counts and problems ------------------------------------------------------------------------------------


def _inputs(source: RecordSource | None) -> list[RecordSource | None]:
    if source is None:
        return [None, None]
    found = [RecordSource(source.storage, layout.parse_output(key)) for key in source.manifest().inputs]
    return found + [None] * (2 - len(found))


def _counts(outputs: dict[str, RecordSource | None]) -> dict[str, dict[str, Any]]:
    counts = {}
    for stage, source in outputs.items():
        if source is None:
            continue
        manifest = source.manifest()
        figures: dict[str, Any] = {"records": manifest.record_count}
        for key, value in manifest.extra.items():
            if key.startswith("Summary "):
                figures[key.removeprefix("Summary ")] = int(value) if value.lstrip("-").isdigit() else value
        counts[stage] = figures
    return counts


def _problems(harvest: RecordSource | None, mapping: RecordSource | None) -> list[dict[str, Any]]:
    """Problems grouped by message, each with its count and example ids, most frequent first."""
    found: dict[tuple[str, str, str], dict[str, Any]] = {}
    for row in _log_rows(harvest, "harvest-errors.csv"):
        group = found.setdefault(("harvest", "error", row["message"]),
                                 {"stage": "harvest", "level": "error", "message": row["message"], "count": 0,
                                  "examples": []})
        group["count"] += 1
        if row["record"] and len(group["examples"]) < EXAMPLES:
            group["examples"].append(row["record"])
    for row in _log_rows(mapping, "mapping-report.csv"):
        if row["kind"] in ("total", "deleted"):
            continue
        level = "warning" if row["kind"] in MAPPING_WARNINGS else "error"
        message = f"{row['kind']} {row['field']}: {row['reason']}".strip()
        found[("mapping", level, message)] = {"stage": "mapping", "level": level, "message": message,
                                             "count": int(row["count"]),
                                             "examples": [row["example_record"]] if row["example_record"] else []}
    if harvest is not None:  # the error report keeps the first 1,000: say how many there were
        unread = int(harvest.manifest().extra.get("Summary failed", 0))
        listed = sum(p["count"] for p in found.values() if p["stage"] == "harvest")
        if unread > listed:
            found[("harvest", "error", "")] = {"stage": "harvest", "level": "error", "count": unread - listed,
                                               "message": "more unreadable records than the error report keeps",
                                               "examples": []}
    return sorted(found.values(), key=lambda p: (p["level"] != "error", -p["count"], p["message"]))


def _log_rows(source: RecordSource | None, name: str) -> Iterator[dict[str, str]]:
    if source is None:
        return
    key = f"{source.key}/{source.output.log(name)}"
    if source.storage.exists(key):
        yield from csv.DictReader(io.StringIO(source.storage.read_bytes(key).decode("utf-8")))


# -- the diff -------------------------------------------------------------------------------------------------


def diff_against(records: Iterable[dict], index: SearchIndex, live: str | None, suppressed: set[str]) -> dict[str, Any]:
    """What ``records`` (IndexRecords) change in the ``live`` index: counts, examples and the changes per field."""
    diff: dict[str, Any] = {"live_index": live, "added": 0, "removed": 0, "changed": 0, "unchanged": 0,
                            "deleted_unpublished": 0, "kept_out": 0, "examples": {"added": [], "removed": []},
                            "fields": {}}
    stream = iter(records)
    while batch := list(islice(stream, BATCH)):
        before = index.documents(live, [r["id"] for r in batch]) if live else {}
        for record in batch:
            _compare(diff, record, before.get(record["id"]), suppressed)
    diff["fields"] = dict(sorted(diff["fields"].items(), key=lambda item: (-item[1]["changed"], item[0])))
    return diff


def _compare(diff: dict[str, Any], record: dict, previous: dict | None, suppressed: set[str]) -> None:
    record_id = record["id"]
    if record["deleted"] or record_id in suppressed:
        if record_id in suppressed and not record["deleted"]:
            diff["kept_out"] += 1
        if previous is None:
            diff["deleted_unpublished"] += not (record_id in suppressed and not record["deleted"])
            return
        diff["removed"] += 1
        _example(diff["examples"]["removed"], record_id)
        return
    if previous is None:
        diff["added"] += 1
        _example(diff["examples"]["added"], record_id)
        return
    current = json.loads(record["document"])
    changed = [path for path in sorted(_fields(previous) | _fields(current))
               if _value(previous, path) != _value(current, path)]
    if not changed:
        diff["unchanged"] += 1
        return
    diff["changed"] += 1
    for path in changed:
        entry = diff["fields"].setdefault(path, {"changed": 0, "examples": []})
        entry["changed"] += 1
        if len(entry["examples"]) < FIELD_EXAMPLES:
            entry["examples"].append({"id": record_id, "before": _value(previous, path), "after": _value(current, path)})


def _example(examples: list[str], record_id: str) -> None:
    if len(examples) < EXAMPLES:
        examples.append(record_id)


def _fields(document: dict) -> set[str]:
    """The MAP fields of an index document: top-level ones and each ``sourceResource.<field>``."""
    paths = {key for key in document if key not in NOT_COMPARED and key != "sourceResource"}
    source = document.get("sourceResource")
    if isinstance(source, dict):
        paths |= {f"sourceResource.{key}" for key in source if key != "@id"}
    return paths


def _value(document: dict, path: str) -> Any:
    value: Any = document
    for name in path.split("."):
        value = value.get(name) if isinstance(value, dict) else None
    return value
