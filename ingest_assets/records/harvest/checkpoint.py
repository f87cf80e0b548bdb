"""Where a harvest keeps its place: the Checkpoint protocol and its storage-backed implementation.

A harvester saves a small JSON-able dict after each good page (for OAI-PMH: the request and the next
resumption token), loads it when it starts, and clears it when the list is complete.
"""

from __future__ import annotations

import json
import logging
from typing import Protocol, runtime_checkable

from ingest_assets.registry import ProviderEntry
from ingest_assets.storage import Storage
from ingest_assets.storage.layout import provider_state_key

log = logging.getLogger(__name__)
CHECKPOINT_NAME = "harvest-checkpoint.json"


@runtime_checkable
class Checkpoint(Protocol):
    def load(self) -> dict | None: ...

    def save(self, state: dict) -> None: ...

    def clear(self) -> None: ...


class StorageCheckpoint:
    """The checkpoint at ``<provider>/state/harvest-checkpoint.json``, replaced atomically on each save."""

    def __init__(self, storage: Storage, provider: str | ProviderEntry):
        self.storage = storage
        self.provider = provider if isinstance(provider, str) else provider.name
        self.key = provider_state_key(self.provider, CHECKPOINT_NAME)

    def load(self) -> dict | None:
        if not self.storage.exists(self.key):
            return None
        try:
            state = json.loads(self.storage.read_bytes(self.key))
        except ValueError as exc:
            log.warning("harvest: ignoring unreadable checkpoint %s (%s); starting afresh", self.key, exc)
            return None
        return state if isinstance(state, dict) else None

    def save(self, state: dict) -> None:
        self.storage.write_bytes(self.key, json.dumps(state, sort_keys=True).encode(), overwrite=True)

    def clear(self) -> None:
        if self.storage.exists(self.key):
            self.storage.delete(self.key)
