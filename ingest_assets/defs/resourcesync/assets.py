"""Publishing the ResourceSync documents, and the hook that feeds the resource index from index events."""

from collections.abc import Iterable
from datetime import datetime

import dagster as dg

from ingest_assets.defs.records.partitions import partition_parts
from ingest_assets.defs.resources import RegistryResource, StorageResource
from ingest_assets.defs.resourcesync.resources import ResourceSyncResource
from ingest_assets.resourcesync.feed import FeedReport, feed_index_records
from ingest_assets.resourcesync.outputs import feed_outputs
from ingest_assets.storage import layout
from ingest_assets.storage.activities import latest_source

RESOURCESYNC = "resourcesync"


@dg.asset(group_name=RESOURCESYNC, kinds={"xml"})
def resourcesync_documents(
    context: dg.AssetExecutionContext,
    resourcesync: ResourceSyncResource,
    storage: StorageResource,
    registry: RegistryResource,
) -> dg.MaterializeResult:
    """Source Description, Capability Lists, Resource Lists and Change Lists of every resource set
    (providers with a ``resourcesync:`` registry block), written into ``_resourcesync/`` of the storage."""
    sets = resourcesync.sets(registry.load())
    summary = resourcesync.publisher(storage.storage).publish(sets)
    context.log.info(f"published ResourceSync documents for {len(sets)} resource sets")
    return dg.MaterializeResult(
        metadata={
            "resource_sets": len(sets),
            "resources": sum(s["resources"] for s in summary.values()),
            "change_lists_written": sum(s["change_lists_written"] for s in summary.values()),
            "summary": dg.MetadataValue.json(summary),
        }
    )


def changes_asset(partitions: dg.PartitionsDefinition) -> dg.AssetsDefinition:
    return dg.asset(partitions_def=partitions, group_name="records", kinds={"xml"}, deps=["indexed_records"])(
        resourcesync_changes
    )


def resourcesync_changes(
    context: dg.AssetExecutionContext,
    resourcesync: ResourceSyncResource,
    storage: StorageResource,
    registry: RegistryResource,
) -> dg.MaterializeResult:
    """The partition's IndexRecords as the item documents (files) and created/updated/deleted events of
    the provider's resource set; with ``publish_outputs``, also the files of its newest activity outputs.

    The event time is the start of the harvest that observed the change, not the time of publishing; a
    change recorded after a publish that ran during the harvest is listed after that publish's Resource List.
    """
    provider, day = partition_parts(context.partition_key)
    source = latest_source(storage.storage, provider, "indexing", day)
    if source is None:
        raise dg.Failure(f"no indexing output for {provider} on {day}")
    outputs = [layout.parse_output(key) for key in source.manifest().inputs]
    observed = next((o.started for o in outputs if o.activity == "harvest"), source.output.started)
    report = feed_indexed_records(resourcesync, registry, storage, provider, source, observed)
    if report is None:
        return dg.MaterializeResult(metadata={"resource_set": "none (no resourcesync: block in the registry)"})
    metadata = {"event_time": observed.isoformat(), **report.metadata}
    [resource_set] = [s for s in resourcesync.sets(registry.load()) if s.name == provider]
    if resource_set.publish_outputs:
        outputs = feed_outputs(resourcesync.index(), storage.storage, resource_set, day)
        metadata["output_files"] = dg.MetadataValue.json(outputs.counts)
    return dg.MaterializeResult(metadata=metadata)


def feed_indexed_records(
    resourcesync: ResourceSyncResource,
    registry: RegistryResource,
    storage: StorageResource,
    provider: str,
    records: Iterable[dict],
    event_time: datetime,
) -> FeedReport | None:
    """IndexRecords of ``provider`` written at ``event_time`` become the files and the
    created/updated/deleted events of its resource set (None when the provider publishes no resource
    set). Returns the counts and the records refused."""
    sets = {s.name: s for s in resourcesync.sets(registry.load())}
    if provider not in sets:
        return None
    return feed_index_records(resourcesync.index(), storage.storage, sets[provider], records, event_time)
