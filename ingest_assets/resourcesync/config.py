"""Resource sets from the registry: every provider with a ``resourcesync:`` block is one set.

    myprovider:
      resourcesync:
        url_prefix: https://data.example.org/myprovider/   # optional, default <base_url>/<name>/resources/
        root: /srv/files/myprovider                          # optional: directory or storage URL of its files
        publish_outputs: true                                # optional: also its record activity outputs

A set without ``root`` keeps its files in the storage under ``_resourcesync/<name>/resources/``: a record
provider's set needs nothing more (``resourcesync: {}``), its item documents are written there (:mod:`.feed`).

Each capability publishing through a change feed (``INGEST_RESOURCESYNC_CAPABILITIES``, all by default)
adds one set, named so that no provider can be (the registry refuses these names): :data:`CAPABILITY_SETS`.

The base URL the documents are published under comes from ``INGEST_RESOURCESYNC_URL``
(default ``http://127.0.0.1:8080``, the server's default address).
"""

from __future__ import annotations

from collections.abc import Iterable

from ingest_assets.core.registry import Registry
from ingest_assets.resourcesync.model import ResourceSet

DEFAULT_BASE_URL = "http://127.0.0.1:8080"
CAPABILITY_SETS = {"repository": "repository-objects", "datasets": "dataset-files", "linked_data": "linked-data"}


def resource_sets(registry: Registry, base: str | None = None, capabilities: Iterable[str] = ()) -> list[ResourceSet]:
    """The record providers' sets, then the sets of ``capabilities`` (keys of :data:`CAPABILITY_SETS`)."""
    base = (base or DEFAULT_BASE_URL).rstrip("/")
    sets = []
    for entry in registry.providers_with("resourcesync"):
        block = entry.require("resourcesync")
        url_prefix = block.url_prefix or f"{base}/{entry.name}/resources/"
        sets.append(ResourceSet(entry.name, url_prefix, block.root, block.publish_outputs))
    return sets + [capability_set(capability, base) for capability in capabilities]


def capability_set(capability: str, base: str | None = None) -> ResourceSet:
    """The set a capability publishes its files in: ``<base>/<set>/resources/``, kept in the storage."""
    name = CAPABILITY_SETS[capability]
    return ResourceSet(name, f"{(base or DEFAULT_BASE_URL).rstrip('/')}/{name}/resources/")
