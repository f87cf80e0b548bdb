"""A repository object's lineage: the object (read from the repository), then the wiki page revision and the
source (export file, MediaWiki API or template index) its record came from, as the object's triples say."""

from __future__ import annotations

from ingest_assets.core.errors import NotFoundError
from ingest_assets.lineage import Lineage, Step
from ingest_assets.repository.backend import Repository


def object_lineage(repository: Repository, pid: str, where: str) -> Lineage:
    """``where``: the repository's location (an OCFL root or Fedora URL), to name it."""
    if not repository.exists(pid):
        raise NotFoundError("no such object in the repository", file=where, record=pid)
    obj = repository.get(pid)
    facts = obj.lineage
    steps = [Step("repository object", f"{where} {pid}", {
        "kind": obj.kind, "collection": obj.collection, "provider": obj.provider,
        "harvested": obj.first("Harvested"), "software version": facts.get("software_version")})]
    if facts:
        steps.append(Step("wiki page revision", facts.get("page", obj.harvesting_url), {
            "revision": facts.get("revision"), "modified": obj.first("Modified"), "template": facts.get("template"),
            "occurrence": facts.get("occurrence")}))
        steps.append(Step("source", facts.get("source", ""), {}))
    else:  # collections and providers implied by a page, not read from a record
        steps.append(Step("implied by the page", obj.harvesting_url, {}))
    return Lineage(f"object {pid}", steps)
