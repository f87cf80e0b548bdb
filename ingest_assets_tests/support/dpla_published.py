"""What we would publish next to what DPLA published: the ingestion3-era documents of
``../shared/fixtures/dpla-published/`` (a hub's original record and DPLA's item document for it), each original
mapped with the hub's shipped profile, enriched and indexed, then compared field by field with DPLA's.

Every hub with a shipped profile is compared (the file name's hub is the profile name, ``smithsonian`` is
``si``); documents of hubs without one are counted as skipped. ``python -m
ingest_assets_tests.support.dpla_published`` prints the figures per hub and field, then each difference.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingest_assets.core.registry import ProviderEntry
from ingest_assets.records.enrichment import chain_for
from ingest_assets.records.indexing import index_record
from ingest_assets.records.mapping import mapper_for
from ingest_assets.records.preview import read_inputs
from ingest_assets.records.mapping.profiles import PROFILES
from ingest_assets_tests.support import SHARED_FIXTURES

FOLDER = SHARED_FIXTURES / "dpla-published"
PROFILE_OF_HUB = {"smithsonian": "si"}  # file name's hub -> ingestion3 profile, where they differ
FILE_NAME = re.compile(r"^(?P<hub>[a-z-]+?)-[0-9a-f]{8}(?:-v\d+)?\.json$")
# the top-level fields compared (with every sourceResource field but its @id)
TOP_FIELDS = ("isShownAt", "object", "dataProvider", "provider", "intermediateProvider", "rights")


@dataclass
class Difference:
    document: str
    field: str
    ours: Any
    dpla: Any


@dataclass
class Comparison:
    compared: Counter = field(default_factory=Counter)  # (hub, field) -> fields compared
    equal: Counter = field(default_factory=Counter)  # (hub, field) -> equal
    differences: list[Difference] = field(default_factory=list)
    documents: Counter = field(default_factory=Counter)  # hub -> documents compared
    skipped: dict[str, str] = field(default_factory=dict)  # document -> why not compared

    def share(self) -> float:
        total = sum(self.compared.values())
        return sum(self.equal.values()) / total if total else 0.0

    def table(self) -> str:
        """Per hub and field: equal / compared, then each hub's and the overall totals."""
        lines = [f"{'hub':<20} {'field':<22} equal/compared"]
        hubs = sorted(self.documents)
        for hub in hubs:
            for (h, name), n in sorted(self.compared.items()):
                if h == hub:
                    lines.append(f"{hub:<20} {name:<22} {self.equal[h, name]}/{n}")
            hub_total = sum(n for (h, _), n in self.compared.items() if h == hub)
            hub_equal = sum(n for (h, _), n in self.equal.items() if h == hub)
            lines.append(f"{hub:<20} {'(all fields)':<22} {hub_equal}/{hub_total} "
                         f"({100 * hub_equal / hub_total:.1f}%, {self.documents[hub]} documents)")
        total, equal = sum(self.compared.values()), sum(self.equal.values())
        lines.append(f"{'(all hubs)':<20} {'(all fields)':<22} {equal}/{total} ({100 * self.share():.1f}%)")
        for name, why in sorted(self.skipped.items()):
            lines.append(f"not compared: {name}: {why}")
        return "\n".join(lines)


def documents(folder: Path = FOLDER) -> list[Path]:
    """The ingestion3-era documents (the folder's top level; ``ingestion1-era/`` is not read)."""
    return sorted(path for path in folder.glob("*.json") if FILE_NAME.match(path.name))


def profile_of(path: Path) -> str:
    hub = FILE_NAME.match(path.name).group("hub")
    return PROFILE_OF_HUB.get(hub, hub)


def publish(path: Path) -> tuple[dict, dict]:
    """``(ours, dpla)``: our index document for the document's original record, and DPLA's document."""
    dpla = json.loads(path.read_text(encoding="utf-8"))
    profile = profile_of(path)
    entry = ProviderEntry(re.sub("[^a-z0-9]", "", profile), {"mapping": profile, "label": dpla["provider"]["name"]})
    with tempfile.TemporaryDirectory() as folder:
        original = Path(folder) / path.name
        original.write_text(dpla["originalRecord"]["stringValue"], encoding="utf-8")
        (item,) = read_inputs([str(original)], PROFILES[profile], entry.name)
    result = mapper_for(entry).map(item)
    if result.record is None:
        raise AssertionError(f"{path.name} did not map: {result.messages}")
    enriched, _ = chain_for(entry).enrich(result.record)
    return json.loads(index_record(enriched)["document"]), dpla


def _fields(document: dict) -> dict[str, Any]:
    out = {name: document[name] for name in TOP_FIELDS if name in document}
    if isinstance(out.get("intermediateProvider"), str):  # DPLA writes its one intermediate provider as a string
        out["intermediateProvider"] = [out["intermediateProvider"]]
    for name, value in document.get("sourceResource", {}).items():
        if name != "@id":
            out[f"sourceResource.{name}"] = value
    return out


def compare(folder: Path = FOLDER) -> Comparison:
    comparison = Comparison()
    for path in documents(folder):
        profile = profile_of(path)
        if profile not in PROFILES:
            comparison.skipped[path.name] = f"no shipped profile {profile!r}"
            continue
        ours, dpla = publish(path)
        hub = FILE_NAME.match(path.name).group("hub")
        comparison.documents[hub] += 1
        mine, theirs = _fields(ours), _fields(dpla)
        for name in sorted(set(mine) | set(theirs)):
            comparison.compared[hub, name] += 1
            if mine.get(name) == theirs.get(name):
                comparison.equal[hub, name] += 1
            else:
                comparison.differences.append(Difference(path.name, name, mine.get(name), theirs.get(name)))
    return comparison


def main() -> int:
    comparison = compare()
    print(comparison.table())
    for difference in comparison.differences:
        print(f"\n{difference.document} {difference.field}\n  ours: {json.dumps(difference.ours, ensure_ascii=False)}"
              f"\n  DPLA: {json.dumps(difference.dpla, ensure_ascii=False)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
