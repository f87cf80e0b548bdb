"""One provider's VoID check, as the sensor runs it every minute: fetch the VoID, compare it with the graph's
state, record the outcome in the provider's status document, and say whether an import is due."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ingest_assets.core.errors import IngestError
from ingest_assets.core.modified import format_modified
from ingest_assets.core.registry import ProviderEntry
from ingest_assets.linked_data.graphs import ProviderGraphs
from ingest_assets.linked_data.importer import ProviderSource, check, fetch_void
from ingest_assets.linked_data.status import check_fields, read_status, update_status
from ingest_assets.linked_data.triplestore import TripleStore
from ingest_assets.linked_data.void import VoidDescription
from ingest_assets.storage.backends import Storage

OBSERVED = ("void", "modified_seen", "last_error")  # a check worth recording as an observation changed one of these


@dataclass(frozen=True)
class VoidCheck:
    provider: str
    document: dict[str, Any]  # the status document after the check
    changed: bool  # whether the VoID URL, its ``modified`` or the error changed (not every minute's check is news)
    error: IngestError | None = None
    void: VoidDescription | None = None
    due: bool = False  # an import is due

    @property
    def run_key(self) -> str:
        """The same VoID change gives the same key, whatever the spelling of its dates; a change of any subset's
        ``modified`` is a new change (the subsets' dates are hashed into the key)."""
        if self.void is None:
            raise ValueError(f"{self.provider}: no VoID was read")
        return run_key(self.provider, self.void)


def run_key(provider: str, void: VoidDescription) -> str:
    key = f"{provider}@{format_modified(void.modified)}"
    if not void.subsets:
        return key
    dates = "\n".join(f"{s.dataset} {format_modified(s.modified)}" for s in void.subsets)
    return f"{key}+{hashlib.sha256(dates.encode()).hexdigest()[:16]}"


def check_provider(entry: ProviderEntry, store: TripleStore, graphs: ProviderGraphs, storage: Storage, now: datetime,
                   *, timeout: tuple[float, float]) -> VoidCheck:
    """Check ``entry``'s VoID (one attempt within ``timeout``) against its graph's state in ``store``; a bad or
    unreachable VoID is recorded as the status's error and returned, never raised."""
    void, due, error = None, False, None
    try:
        source = ProviderSource.of(entry)
        void = fetch_void(source.client(timeout=timeout, retries=0), source)
        due = check(source, void, graphs.read_state(store)).due
        fields = check_fields(now, source.void_url, void.modified, None)
    except IngestError as exc:
        error = exc
        fields = check_fields(now, entry.settings.void, None, str(exc))
    before = read_status(storage, entry.name)
    document = update_status(storage, entry.name, fields)
    changed = any(before.get(k) != document.get(k) for k in OBSERVED)
    return VoidCheck(entry.name, document, changed, error, void, due and error is None)
