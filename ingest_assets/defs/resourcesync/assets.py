"""Publishing the ResourceSync documents, and the hook that feeds the resource index from index events."""

from collections.abc import Iterable
from datetime import datetime

import dagster as dg

from ingest_assets.defs.records.io_managers import BACKFILL, Part, run_parts
from ingest_assets.defs.records.publishing import PublishingResource
from ingest_assets.defs.resources import RegistryResource, StorageResource
from ingest_assets.defs.resourcesync.resources import ResourceSyncResource
from ingest_assets.records.publishing.candidates import without
from ingest_assets.resourcesync.feed import FeedReport, feed_index_records
from ingest_assets.resourcesync.outputs import feed_outputs
from ingest_assets.storage import layout
from ingest_assets.storage.activities import RecordSource

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
    summary = resourcesync.publisher(storage.get_client()).publish(sets)
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
    """After the partition's search index is published (a day held for review or refused publishes nothing)."""
    return dg.asset(partitions_def=partitions, group_name="records", kinds={"xml"}, backfill_policy=BACKFILL,
                    deps=["search_index"])(resourcesync_changes)


def resourcesync_changes(
    context: dg.AssetExecutionContext,
    resourcesync: ResourceSyncResource,
    storage: StorageResource,
    registry: RegistryResource,
    publishing: PublishingResource,
    indexed_records: dict[Part, RecordSource],
) -> dg.MaterializeResult:
    """Each partition's IndexRecords (oldest day first) as the item documents (files) and created/updated/
    deleted events of the provider's resource set; with ``publish_outputs``, also the files of its newest
    activity outputs.

    The event time is the start of the harvest that observed the change, not the time of publishing; a
    change recorded after a publish that ran during the harvest is listed after that publish's Resource List.
    """
    sets = {s.name: s for s in resourcesync.sets(registry.load())}
    ledger, takedowns = publishing.ledger(), publishing.takedowns()
    for key, (provider, day) in run_parts(context.partition_keys):
        blocked = ledger.blocked(provider, day)
        if blocked:
            raise dg.Failure(f"not published: {blocked}", allow_retries=False)
        source = indexed_records[provider, day]
        outputs = [layout.parse_output(k) for k in source.manifest().inputs]
        observed = next((o.started for o in outputs if o.activity == "harvest"), source.output.started)
        records = without(source, takedowns.suppressed(provider))  # a takedown is published as deleted, for good
        report = feed_indexed_records(resourcesync, registry, storage, provider, records, observed)
        if report is None:
            context.add_asset_metadata({"resource_set": "none (no resourcesync: block in the registry)"}, partition_key=key)
            continue
        metadata = {"event_time": observed.isoformat(), **report.metadata}
        if sets[provider].publish_outputs:
            files = feed_outputs(resourcesync.get_client(), storage.get_client(), sets[provider], day)
            metadata["output_files"] = dg.MetadataValue.json(files.counts)
        context.add_asset_metadata(metadata, partition_key=key)
    return dg.MaterializeResult()


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
    return feed_index_records(resourcesync.feed(storage.get_client(), sets[provider]), records, event_time)
