"""The search index: each partition's IndexRecords applied incrementally, and full rebuilds with an alias swap."""


from datetime import datetime, timezone
from itertools import chain

import dagster as dg
from pydantic import Field

from ingest_assets.defs.records.io_managers import BACKFILL, Part, run_parts
from ingest_assets.defs.records.resources import SearchIndexResource
from ingest_assets.defs.resources import RegistryResource, StorageResource
from ingest_assets.records.indexing import IndexStats
from ingest_assets.storage.activities import RecordSource
from ingest_assets.storage.snapshot import snapshot_records, snapshot_sources


def _report(stats: IndexStats) -> dict:
    figures = stats.to_dict()
    reconciliation = figures.get("reconciliation") or {}
    return {
        "index": stats.index or "",
        "indexed": stats.indexed,
        "deleted": stats.deleted,
        "failed": stats.failed,
        "reconciled": bool(reconciliation.get("ok", False)),
        "reconciliation": dg.MetadataValue.json(reconciliation),
        "failures": dg.MetadataValue.json(figures.get("failures", [])),
    }


def search_index(
    context: dg.AssetExecutionContext, search: SearchIndexResource, indexed_records: dict[Part, RecordSource]
) -> dg.MaterializeResult:
    """Apply each partition's IndexRecords (upserts and deletions) to the live index behind the alias, oldest
    day first, so the newest version of a record wins."""
    index = search.get_client()
    for key, part in run_parts(context.partition_keys):
        context.add_asset_metadata(_report(index.apply(search.alias, indexed_records[part])), partition_key=key)
    return dg.MaterializeResult()


class RebuildConfig(dg.Config):
    as_of: str | None = Field(default=None, description="YYYY-MM-DD; default today (UTC)")


def search_assets(partitions: dg.PartitionsDefinition, kind: str) -> list[dg.AssetsDefinition]:
    """``search_index`` on ``partitions`` and the rebuild; ``kind`` names the backend in the UI."""
    return [
        dg.asset(partitions_def=partitions, group_name="records", kinds={kind}, backfill_policy=BACKFILL)(search_index),
        dg.asset(group_name="search", kinds={kind}, deps=["search_index"])(search_index_rebuild),
    ]


def search_index_rebuild(
    config: RebuildConfig, search: SearchIndexResource, storage: StorageResource, registry: RegistryResource
) -> dg.MaterializeResult:
    """Rebuild the whole index from the layout (newest IndexRecord per id, deletions applied) into a new
    physical index, then swap the alias onto it."""
    as_of = datetime.fromisoformat(config.as_of).date() if config.as_of else datetime.now(timezone.utc).date()
    per_provider = [snapshot_records(snapshot_sources(storage.get_client(), name, as_of, "indexing")) for name in registry.load()]
    stats = search.get_client().full_build(search.alias, chain.from_iterable(per_provider))
    return dg.MaterializeResult(metadata=_report(stats))
