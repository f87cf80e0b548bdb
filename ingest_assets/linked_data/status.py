"""The per-provider status document (JSON in the storage layout), also the acknowledgement of a harvest.

A provider polls it to learn which ``dcterms:modified`` was last harvested (``harvested.modified_text``
is the value exactly as its VoID published it) and, for datasets its VoID gives no ``modified``, what the
imports saw of each dump (``harvested.dumps``: ETag, Last-Modified, sha256; see :mod:`.dump_state`). The sensor
updates the check fields (``last_check``, ``last_error``: the latest check's outcome), an import the harvest
fields; each keeps the other's. ``last_failure`` (time and message of the last failed import) stays until an
import succeeds, whatever the checks in between say.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ingest_assets.linked_data.dump_state import DumpState
from ingest_assets.linked_data.graphs import GraphState
from ingest_assets.linked_data.importer import ImportResult
from ingest_assets.core.modified import format_modified
from ingest_assets.storage import Storage
from ingest_assets.storage.layout import provider_state_key

STATUS_NAME = "linked-data-status.json"


def status_key(provider: str) -> str:
    return provider_state_key(provider, STATUS_NAME)


def _time(moment: datetime | None) -> str | None:
    return format_modified(moment) if moment else None


def read_status(storage: Storage, provider: str) -> dict[str, Any]:
    key = status_key(provider)
    return json.loads(storage.read_bytes(key)) if storage.exists(key) else {"provider": provider}


def harvest_fields(graph: str, state: GraphState, triples: int | None,
                   dumps: Mapping[str, DumpState] | None = None) -> dict[str, Any]:
    """A successful import: the graph's state, what was seen of each dump, and no failure any more."""
    return {
        "graph": graph,
        "harvested": {
            "modified": _time(state.modified),
            "modified_text": state.modified_text,
            "imported": _time(state.imported),
            "triples": triples,
            "dumps": {url: seen.to_json() for url, seen in sorted((dumps or {}).items())},
        },
        "last_failure": None,
    }


def failure_fields(failed: datetime, void_url: str, error: str) -> dict[str, Any]:
    """A failed import: the check fields say it, and ``last_failure`` keeps it until an import succeeds."""
    return {**check_fields(failed, void_url, None, error), "last_failure": {"time": _time(failed), "message": error}}


def lineage_fields(previous: dict[str, Any], void_url: str, result: ImportResult, version: str) -> dict[str, Any]:
    """What produced the current graph version: this import (VoID, its ``modified``, each dump's URL, size and
    sha256) and, unless it replaced the graph, the imports the version was built on (``previous``: the status
    document before it), newest first."""
    this = {
        "strategy": result.strategy,
        "imported": _time(result.state.imported),
        "software_version": version,
        "void": {"url": void_url, "dataset": result.void.dataset, "modified": result.void.modified_text,
                 "kind": result.void.kind},
        "dumps": [{"url": f.url, "format": f.rdf_format.name, "triples": f.triples, "bytes": f.size,
                   "sha256": f.sha256} for f in result.files],
    }
    earlier = [] if result.strategy == "replace" else (previous.get("lineage") or {}).get("imports", [])
    return {"lineage": {"version": result.state.current, "imports": [this, *earlier]}}


def check_fields(checked: datetime, void_url: str, modified_seen: datetime | None, error: str | None) -> dict[str, Any]:
    """A check's outcome; a failed check (no ``modified_seen``) keeps the last value seen."""
    fields = {"void": void_url, "last_check": _time(checked), "last_error": error}
    return {**fields, "modified_seen": _time(modified_seen)} if modified_seen else fields


def update_status(storage: Storage, provider: str, fields: dict[str, Any]) -> dict[str, Any]:
    """Merge ``fields`` into the provider's document and publish it (atomic replace)."""
    document = {**read_status(storage, provider), **fields, "provider": provider}
    storage.write_bytes(status_key(provider), json.dumps(document, indent=2, sort_keys=True).encode(), overwrite=True)
    return document
