"""Our JSON-L line next to DPLA's item document, field by field, for every ingestion3-era document of
``../shared/fixtures/dpla-published/`` (``support.dpla_published`` maps each file to its hub's profile).

Each hub's original records go through a harvest output, mapping, enrichment and indexing outputs and the JSON-L
export (``records/export/jsonl.py``); each line is read back from its gzipped part and its ``_source`` compared with
DPLA's document on the fields of the cross-project DPLA API field contract (ingestion3's
``docs/pipeline-unification/02-system-architecture.md``, "Cross-Project DPLA API Field Contract", with the
``sourceResource`` fields, ``object`` and ``rights`` the issue adds) and the document's frame. Per field: the key
(present in both or in neither), its JSON type (``array<string>``, ``object``...) and its value.
``python -m ingest_assets_tests.support.jsonl_contract`` prints the figures per hub, then each difference.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

from ingest_assets.core.registry import ProviderEntry
from ingest_assets.records.export.jsonl import PublishedState, export_jsonl
from ingest_assets.records.mapping import base_id_for
from ingest_assets.records.preview import read_inputs
from ingest_assets.records.mapping.profiles import PROFILES
from ingest_assets.storage import LocalStorage, layout
from ingest_assets_tests.support.dpla_published import FILE_NAME, FOLDER, documents, profile_of
from ingest_assets_tests.support.jsonl import read_export, run_day

# the contract's fields (``rightsStatement`` is MAP's name of the API's top-level ``rights``)
CONTRACT = (
    "id", "provider.name", "dataProvider.name", "sourceResource.title", "sourceResource.date", "sourceResource.creator",
    "sourceResource.description", "sourceResource.subject", "sourceResource.identifier", "sourceResource.type",
    "sourceResource.format", "sourceResource.language", "sourceResource.spatial", "sourceResource.rights", "rights",
    "isShownAt", "object", "mediaMaster", "iiifManifest",
)
# the document's frame, written the same for every record (ingestion3's jsonlRecord)
FRAME = ("@context", "@id", "@type", "aggregatedCHO", "ingestType", "ingestDate", "originalRecord.stringValue",
         "intermediateProvider", "tags")
# contract fields no JSON-L holds: sparkindexer adds them (ingestion3's jsonlRecord writes neither)
ADDED_BY_THE_INDEXER = {"rightsCategory": "derived from rights by sparkindexer", "edmRights": "not in ingestion3's jsonlRecord"}
# fields whose values differ by design: when the record was harvested, and the harvest's copy of the original
NOT_VALUES = {"ingestDate", "originalRecord.stringValue"}
DAY = date(2026, 3, 1)


def json_type(value: Any) -> str:
    """``string``, ``object``, ``array<string>``, ``array<object>``... (an array's member types joined by ``|``)."""
    if isinstance(value, list):
        return f"array<{'|'.join(sorted({json_type(v) for v in value})) or 'empty'}>"
    return {dict: "object", str: "string", bool: "boolean", int: "number", float: "number"}.get(type(value), "null")


def at(document: dict, path: str) -> tuple[bool, Any]:
    """``(present, value)`` of a dotted path (``provider.name``)."""
    value: Any = document
    for name in path.split("."):
        if not isinstance(value, dict) or name not in value:
            return False, None
        value = value[name]
    return True, value


@dataclass
class Difference:
    document: str
    field: str
    what: str  # key, type, value
    ours: Any
    dpla: Any

    def __str__(self) -> str:
        shown = [json.dumps(value, ensure_ascii=False)[:400] for value in (self.ours, self.dpla)]
        return f"{self.document} {self.field} ({self.what})\n  ours: {shown[0]}\n  DPLA: {shown[1]}"


@dataclass
class Comparison:
    documents: Counter = field(default_factory=Counter)  # hub -> documents compared
    counts: dict = field(default_factory=lambda: defaultdict(Counter))  # (hub, field) -> keys/types/values equal, compared
    differences: list[Difference] = field(default_factory=list)
    lines: dict[str, dict] = field(default_factory=dict)  # document -> our line
    skipped: dict[str, str] = field(default_factory=dict)  # document -> why it was not compared

    def add(self, hub: str, name: str, ours: dict, dpla: dict) -> None:
        for path in (*FRAME, *CONTRACT):
            mine, theirs = at(ours, path), at(dpla, path)
            if not mine[0] and not theirs[0]:
                continue
            counts = self.counts[hub, path]
            counts["compared"] += 1
            if mine[0] != theirs[0]:
                self.differences.append(Difference(name, path, "key", mine[1], theirs[1]))
                continue
            counts["keys"] += 1
            counts["typed"] += 1
            if json_type(mine[1]) != json_type(theirs[1]):
                self.differences.append(Difference(name, path, "type", json_type(mine[1]), json_type(theirs[1])))
                continue
            counts["types"] += 1
            if path in NOT_VALUES:
                continue
            counts["valued"] += 1
            if mine[1] == theirs[1]:
                counts["values"] += 1
            else:
                self.differences.append(Difference(name, path, "value", mine[1], theirs[1]))

    def totals(self, hub: str | None = None) -> Counter:
        total = Counter()
        for (h, _), counts in self.counts.items():
            if hub is None or h == hub:
                total.update(counts)
        return total

    def table(self) -> str:
        """Per hub and field: keys equal, types equal, values equal, each of those compared; then the totals."""
        def figures(c: Counter) -> str:
            return (f"keys {c['keys']}/{c['compared']}  types {c['types']}/{c['typed']}  "
                    f"values {c['values']}/{c['valued']}")

        lines = [f"{'hub':<20} {'field':<28} figures"]
        for hub in sorted(self.documents):
            for (h, path), counts in sorted(self.counts.items()):
                if h == hub:
                    lines.append(f"{hub:<20} {path:<28} {figures(counts)}")
            lines.append(f"{hub:<20} {'(all, ' + str(self.documents[hub]) + ' documents)':<28} {figures(self.totals(hub))}")
        lines.append(f"{'(all hubs)':<20} {'(all fields)':<28} {figures(self.totals())}")
        lines += [f"not in the JSON-L: {name} ({why})" for name, why in ADDED_BY_THE_INDEXER.items()]
        lines += [f"not compared: {name}: {why}" for name, why in sorted(self.skipped.items())]
        return "\n".join(lines)


def export_hub(folder: Path, hub: str, paths: list[Path]) -> dict[str, dict]:
    """Run ``paths``' original records (one hub's) through the pipeline's outputs and the JSON-L export in
    ``folder``; the lines read back, by DPLA id."""
    folder.mkdir(parents=True)
    profile = profile_of(paths[0])
    dpla = [json.loads(path.read_text(encoding="utf-8")) for path in paths]
    entry = ProviderEntry(re.sub("[^a-z0-9]", "", profile), {"mapping": profile, "label": dpla[0]["provider"]["name"]})
    originals = []
    for path, document in zip(paths, dpla, strict=True):
        original = folder / f"original-{path.name}"
        original.write_text(document["originalRecord"]["stringValue"], encoding="utf-8")
        originals += list(read_inputs([str(original)], PROFILES[profile], entry.name))
    storage = LocalStorage(folder / "storage")
    run_day(storage, entry, DAY, originals, "full")
    state = PublishedState(storage, entry, DAY, exclude=set(), suppressed=set())
    started = datetime(2026, 3, 2, tzinfo=timezone.utc)
    export = export_jsonl(storage, layout.jsonl_export(entry.name, entry.name, started), state, base_id_for(entry),
                          provider=entry.name, partition=f"{DAY}|{entry.name}", started=started, inputs=[])
    assert export.failed == 0, export.failures
    return {line["_source"]["id"]: line for line in read_export(storage, export.folder)}


def compare(folder: Path = FOLDER) -> Comparison:
    comparison = Comparison()
    by_hub: dict[str, list[Path]] = defaultdict(list)
    for path in documents(folder):
        if profile_of(path) in PROFILES:
            by_hub[FILE_NAME.match(path.name).group("hub")].append(path)
        else:
            comparison.skipped[path.name] = f"no shipped profile {profile_of(path)!r}"
    with tempfile.TemporaryDirectory(prefix="jsonl-contract-") as tmp:
        for hub, paths in sorted(by_hub.items()):
            lines = export_hub(Path(tmp) / hub, hub, paths)
            for path in paths:
                dpla = json.loads(path.read_text(encoding="utf-8"))
                line = lines.get(dpla["id"]) or _by_original(lines, dpla)
                comparison.lines[path.name] = line
                comparison.documents[hub] += 1
                comparison.add(hub, path.name, line["_source"], dpla)
    return comparison


def _by_original(lines: dict[str, dict], dpla: dict) -> dict:
    """Our line of ``dpla``'s record when our DPLA id differs from DPLA's: the one holding the same original record."""
    original = dpla["originalRecord"]["stringValue"]
    matches = [line for line in lines.values() if line["_source"]["originalRecord"]["stringValue"] == original]
    assert len(matches) == 1, f"{dpla['id']}: {len(matches)} lines hold its original record"
    return matches[0]


if __name__ == "__main__":
    found = compare()
    sys.exit(print("\n\n".join([found.table(), *map(str, found.differences)])))
