"""Where a harvest keeps its place: the Checkpoint protocol and its storage-backed implementation.

A harvester saves a small JSON-able dict after each good page (for OAI-PMH: the request and the next
resumption token), loads it when it starts, and clears it when the list is complete. Before each save it
spools the page's records: a failed run's output is discarded whole, so the run that resumes from the
checkpoint re-yields them first (see :mod:`.progress` for the policy). Spooled pages belong to one
request (the list's arguments); :meth:`Checkpoint.clear` removes the checkpoint and every spool.
What a provider's harvests learn and keep from run to run (an OAI-PMH repository's ``Identify`` answer, how
far a ResourceSync source's Change Lists were read) is a named state document (:meth:`Checkpoint.load_state`),
which ``clear()`` leaves alone.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
from collections.abc import Iterable, Iterator
from typing import Protocol, runtime_checkable

import fastavro

from ingest_assets.core.errors import IngestError
from ingest_assets.core.registry import ProviderEntry
from ingest_assets.storage import Storage
from ingest_assets.storage.avro import DAMAGED_AVRO, ORIGINAL_RECORD, default_codec, schema_with_doc
from ingest_assets.storage.layout import provider_state_key

log = logging.getLogger(__name__)
CHECKPOINT_NAME = "harvest-checkpoint.json"
SPOOL_NAME = "harvest-spool"
SPOOL_SUFFIX = ".avro"


@runtime_checkable
class Checkpoint(Protocol):
    def load(self) -> dict | None: ...

    def save(self, state: dict) -> None: ...

    def spool_page(self, request: dict, page: int, records: Iterable[dict]) -> None:
        """Keep page ``page``'s OriginalRecords of ``request`` (replacing an earlier spool of that page)."""

    def spooled(self, request: dict, pages: int) -> Iterator[dict]:
        """The spooled records of ``request``'s pages 1..``pages``, in page order."""

    def clear(self) -> None:
        """Remove the checkpoint, then every spool."""

    def load_state(self, name: str) -> dict | None:
        """The provider's harvest state document ``name`` (None if there is none or it is unreadable)."""

    def save_state(self, name: str, state: dict) -> None:
        """Replace the state document ``name``."""


def request_digest(request: dict) -> str:
    return hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()[:16]


class StorageCheckpoint:
    """The checkpoint at ``<provider>/state/harvest-checkpoint.json``, replaced atomically on each save, the
    state documents at ``<provider>/state/harvest-state-<name>.json``, and the spool: one Avro file
    (OriginalRecord schema) per page at
    ``<provider>/state/harvest-spool/<request digest>/<page:08d>.avro``, each written atomically."""

    def __init__(self, storage: Storage, provider: str | ProviderEntry):
        self.storage = storage
        self.provider = provider if isinstance(provider, str) else provider.name
        self.key = provider_state_key(self.provider, CHECKPOINT_NAME)
        self.spool = provider_state_key(self.provider, SPOOL_NAME)

    def load(self) -> dict | None:
        return self._load(self.key)

    def save(self, state: dict) -> None:
        self.storage.write_bytes(self.key, json.dumps(state, sort_keys=True).encode(), overwrite=True)

    def load_state(self, name: str) -> dict | None:
        return self._load(self._state_key(name))

    def save_state(self, name: str, state: dict) -> None:
        self.storage.write_bytes(self._state_key(name), json.dumps(state, sort_keys=True).encode(), overwrite=True)

    def _state_key(self, name: str) -> str:
        return provider_state_key(self.provider, f"harvest-state-{name}.json")

    def _load(self, key: str) -> dict | None:
        if not self.storage.exists(key):
            return None
        try:
            state = json.loads(self.storage.read_bytes(key))
        except ValueError as exc:
            log.warning("harvest: ignoring unreadable state %s (%s); starting afresh", key, exc)
            return None
        return state if isinstance(state, dict) else None

    def spool_page(self, request: dict, page: int, records: Iterable[dict]) -> None:
        doc = f"harvest spool of {self.provider}, page {page} of {json.dumps(request, sort_keys=True)}"
        codec, level = default_codec()
        buffer = io.BytesIO()
        fastavro.writer(buffer, schema_with_doc(ORIGINAL_RECORD, doc), records, codec=codec, codec_compression_level=level)
        key = provider_state_key(self.provider, SPOOL_NAME, request_digest(request), f"{page:08d}{SPOOL_SUFFIX}")
        self.storage.write_bytes(key, buffer.getvalue(), overwrite=True)

    def spooled(self, request: dict, pages: int) -> Iterator[dict]:
        for key in self.storage.list_keys(self._spool_folder(request)):
            name = key.rsplit("/", 1)[-1].removesuffix(SPOOL_SUFFIX)
            if name.isdigit() and int(name) <= pages:  # a later page was spooled, but not checkpointed
                with self.storage.open_read(key) as handle:
                    try:
                        yield from fastavro.reader(handle)
                    except DAMAGED_AVRO as exc:
                        raise IngestError(
                            f"unreadable harvest spool page ({exc}); clear the harvest checkpoint to restart the list",
                            provider=self.provider, file=self.storage.uri(key),
                        ) from exc

    def clear(self) -> None:
        # checkpoint first: a spool without its checkpoint is never read, the reverse would lose records
        if self.storage.exists(self.key):
            self.storage.delete(self.key)
        self.storage.delete(self.spool)

    def _spool_folder(self, request: dict) -> str:
        return provider_state_key(self.provider, SPOOL_NAME, request_digest(request))
