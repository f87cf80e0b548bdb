"""The provider registry: one YAML file, provider name -> settings, every key typed.

What keys an entry can have is :class:`EntrySettings` (:mod:`.settings`): the record pipeline's
(:class:`RecordSettings`, its ``harvest:`` one of :data:`HarvestBlock`: :mod:`.harvest`, :mod:`.file_harvest`),
linked data's (:class:`LinkedDataSettings`), ``repository:`` (:class:`RepositoryBlock`), ``resourcesync:``
(:class:`ResourceSyncBlock`) and ``datasets:`` (:class:`DatasetsBlock`). Every model is a :class:`Block`
(:mod:`.blocks`): strict types (a quoted ``"false"`` is not a boolean, ``lots`` is not a number) and unknown keys
refused. An entry is checked whole when it is made (:class:`ProviderEntry`, :mod:`.entries`); the first problem is a
ConfigError naming entry, key (``maryland.harvest.metadata_prefix``) and file. A refused entry stops only itself
(:attr:`Registry.problems`); a file that does not parse can fall back to its last good copy (:func:`load_registry`).
Capabilities read ``entry.settings`` (typed) and ``entry.require(key)`` for a key they cannot do without.
"""

from ingest_assets.core.registry.blocks import Block
from ingest_assets.core.registry.entries import (CAPABILITY_KEYS, NAME_PATTERN, NAME_RE, RESERVED_NAMES, ProviderEntry, Registry,
                                                 key_error, load_registry, parse_registry)
from ingest_assets.core.registry.file_harvest import FileHarvest, record_path_steps
from ingest_assets.core.registry.harvest import (SET_PLACEHOLDER, ApiHarvest, HarvestBlock, OaiHarvest, PageBounds, Paging,
                                                 ResourceSyncHarvest)
from ingest_assets.core.registry.secret_refs import SecretRef
from ingest_assets.core.registry.settings import (ENRICHMENT_STEPS, DatasetsBlock, EntrySettings, LinkedDataSettings, RecordSettings,
                                                  RepositoryBlock, ResourceSyncBlock, ReviewBlock)

__all__ = [
    "CAPABILITY_KEYS", "ENRICHMENT_STEPS", "NAME_PATTERN", "NAME_RE", "RESERVED_NAMES", "SET_PLACEHOLDER", "ApiHarvest", "Block",
    "DatasetsBlock", "EntrySettings", "FileHarvest", "HarvestBlock", "LinkedDataSettings", "OaiHarvest", "PageBounds", "Paging",
    "ProviderEntry", "RecordSettings", "Registry", "RepositoryBlock", "ResourceSyncBlock", "ResourceSyncHarvest", "ReviewBlock",
    "SecretRef", "key_error", "load_registry", "parse_registry", "record_path_steps",
]
