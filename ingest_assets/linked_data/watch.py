"""One provider's VoID check, as the sensor runs it every minute: fetch the VoID, compare it with the graph's
state (and, for parts without ``modified``, ask the server about their dumps: :mod:`.dump_state`), record the
outcome in the provider's status document, and say whether an import is due."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ingest_assets.core.errors import IngestError
from ingest_assets.core.modified import format_modified
from ingest_assets.core.registry import ProviderEntry
from ingest_assets.linked_data import dump_state
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
    dump_tokens: tuple[str, ...] = ()  # what the undated parts' dumps showed (:func:`dump_state.run_token`)

    @property
    def run_key(self) -> str:
        if self.void is None:
            raise ValueError(f"{self.provider}: no VoID was read")
        return run_key(self.provider, self.void, self.dump_tokens)


def run_key(provider: str, void: VoidDescription, dump_tokens: Sequence[str] = ()) -> str:
    """The same VoID change gives the same key, whatever the spelling of its dates; a change of any subset's
    ``modified``, or of an undated part's dumps (``dump_tokens``), is a new change (hashed into the key)."""
    key = f"{provider}@{format_modified(void.modified) if void.modified else 'undated'}"
    if not void.subsets and not dump_tokens:
        return key
    dates = [f"{s.dataset} {format_modified(s.modified)}" for s in void.subsets if s.modified is not None]
    return f"{key}+{hashlib.sha256(chr(10).join([*dates, *dump_tokens]).encode()).hexdigest()[:16]}"


def check_provider(entry: ProviderEntry, store: TripleStore, graphs: ProviderGraphs, storage: Storage, now: datetime,
                   *, timeout: tuple[float, float], probe_seconds: float = dump_state.PROBE_SECONDS) -> VoidCheck:
    """Check ``entry``'s VoID (one attempt within ``timeout``) against its graph's state in ``store``, asking about
    the dumps of its undated parts for ``probe_seconds`` at most; a bad or unreachable VoID is recorded as the
    status's error and returned, never raised."""
    void, due, error, tokens = None, False, None, ()
    before = read_status(storage, entry.name)
    try:
        source = ProviderSource.of(entry)
        client = source.client(timeout=timeout, retries=0)
        void = fetch_void(client, source)
        undated = dump_state.undated_dumps(void)
        probes = dump_state.probe_all(client, undated, probe_seconds)
        changed = dump_state.changed_by_probes(probes, dump_state.seen_dumps(before))
        due = check(source, void, graphs.read_state(store), changed).due
        tokens = tuple(dump_state.run_token(url, probes[url], now) for url in undated)
        fields = check_fields(now, source.void_url, void.modified, None)
    except IngestError as exc:
        error = exc
        fields = check_fields(now, entry.settings.void, None, str(exc))
    document = update_status(storage, entry.name, fields)
    changed = any(before.get(k) != document.get(k) for k in OBSERVED)
    return VoidCheck(entry.name, document, changed, error, void, due and error is None, tokens)
