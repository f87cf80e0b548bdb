"""A linked-data provider graph's lineage: its current version, then each import it was built from (the
VoID read, its ``modified``, every dump's URL, size and sha256), newest first, from the status document."""

from __future__ import annotations

from ingest_assets.core.errors import NotFoundError
from ingest_assets.lineage import Lineage, Step
from ingest_assets.linked_data.status import read_status, status_key
from ingest_assets.storage import Storage


def graph_lineage(storage: Storage, provider: str) -> Lineage:
    status = read_status(storage, provider)
    found = status.get("lineage")
    if not found:
        raise NotFoundError("no import of this provider's graph has recorded its lineage", provider=provider,
                            file=storage.uri(status_key(provider)))
    harvested = status.get("harvested") or {}
    steps = [Step("graph version", found["version"], {"graph": status.get("graph"), "triples": harvested.get("triples"),
                                                      "modified": harvested.get("modified_text")})]
    for entry in found["imports"]:
        void = entry["void"]
        steps.append(Step(f"{entry['strategy']} import of the VoID", void["url"], {
            "dataset": void["dataset"], "modified": void["modified"], "kind": void["kind"],
            "imported": entry["imported"], "software version": entry["software_version"]}))
        steps += [Step("dump", dump["url"], {key: dump[key] for key in ("format", "triples", "bytes", "sha256")})
                  for dump in entry["dumps"]]
    return Lineage(f"graph {status.get('graph')} of {provider}", steps)
