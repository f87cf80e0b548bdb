"""Linked-data assets: one provider graph per provider partition, and the export of their union. The domain
(pyoxigraph, rdflib) loads with the first run, not with the code location."""

from datetime import datetime, timezone
from functools import partial

import dagster as dg

from ingest_assets.defs.linked_data.resources import TripleStoreResource
from ingest_assets.defs.providers import linked_data_providers
from ingest_assets.defs.resources import RegistryResource, StorageResource
from ingest_assets.defs.resourcesync.resources import ResourceSyncResource
from ingest_assets.core.errors import IngestError
from ingest_assets.core.modified import format_modified
from ingest_assets.core.version import software_version

LINKED_DATA = "linked_data"
# after any provider graph changed, once no import is running (eager() would wait for every partition)
EXPORT_WHEN = (
    dg.AutomationCondition.any_deps_updated().since_last_handled()
    & ~dg.AutomationCondition.any_deps_in_progress()
    & ~dg.AutomationCondition.in_progress()
).with_label("after a provider graph changed")


def status_metadata(document: dict) -> dict[str, dg.MetadataValue]:
    """The status document as UI metadata (the same fields a provider can poll)."""
    harvested = document.get("harvested") or {}
    return {
        "last_check": dg.MetadataValue.text(str(document.get("last_check"))),
        "modified_seen": dg.MetadataValue.text(str(document.get("modified_seen"))),
        "harvested_modified": dg.MetadataValue.text(str(harvested.get("modified"))),
        "last_import": dg.MetadataValue.text(str(harvested.get("imported"))),
        "triples": dg.MetadataValue.int(int(harvested.get("triples") or 0)),
        "last_error": dg.MetadataValue.text(str(document.get("last_error") or "")),
        "last_failure": dg.MetadataValue.text(_failure(document.get("last_failure"))),
        "graph": dg.MetadataValue.text(str(document.get("graph"))),
    }


def _failure(failure: dict | None) -> str:
    return f"{failure['time']}: {failure['message']}" if failure else ""


@dg.asset(
    key=[LINKED_DATA, "provider_graph"],
    partitions_def=linked_data_providers,
    group_name=LINKED_DATA,
    output_required=False,
    kinds={"oxigraph"},
)
def provider_graph(
    context: dg.AssetExecutionContext,
    registry: RegistryResource,
    triplestore: TripleStoreResource,
    storage: StorageResource,
):
    """The provider's named graph, brought up to its VoID's ``dcterms:modified`` (delete-by-subject)."""
    from ingest_assets.linked_data.importer import ProviderSource, cleanup, import_update
    from ingest_assets.linked_data.dump_state import seen_dumps
    from ingest_assets.linked_data.status import (
        check_fields, failure_fields, harvest_fields, lineage_fields, read_status, update_status)

    provider = context.partition_key
    source = ProviderSource.of(registry.load()[provider])
    graphs = triplestore.graphs(provider)
    started = datetime.now(timezone.utc)
    seen = seen_dumps(read_status(storage.get_client(), provider))
    try:
        with triplestore.get_client(writable=False) as snapshot:
            writer = partial(triplestore.get_client, writable=True)
            result = import_update(source, snapshot, source.client(), graphs, now=started, writer=writer, seen=seen)
    except IngestError as exc:
        failed = update_status(storage.get_client(), provider, failure_fields(started, source.void_url, str(exc)))
        # recorded now (an event logged by a failing step is lost): the UI shows the failure on the partition
        context.instance.report_runless_asset_event(
            dg.AssetObservation(provider_graph.key, partition=provider, metadata=status_metadata(failed)))
        if exc.retryable:
            raise dg.RetryRequested(max_retries=3, seconds_to_wait=60) from exc
        raise
    with triplestore.get_client(writable=True) as store:
        triples = store.count(result.state.current) if result.state.current else 0
        lineage = {} if result.strategy == "unchanged" else lineage_fields(
            read_status(storage.get_client(), provider), source.void_url, result, software_version())
        document = update_status(
            storage.get_client(),
            provider,
            {
                **check_fields(started, source.void_url, result.void.modified, None),
                **harvest_fields(graphs.name, result.state, triples, {**seen, **result.dumps}),
                **lineage,
            },
        )
        dropped = cleanup(store, graphs)
    context.log.info(f"{provider}: {result.strategy}, {result.triples_loaded} triples loaded, dropped {dropped}")
    if result.strategy == "unchanged":
        return
    yield dg.MaterializeResult(
        metadata={
            **status_metadata(document),
            "strategy": dg.MetadataValue.text(result.strategy),
            "kind": dg.MetadataValue.text(result.void.kind),
            "dumps": dg.MetadataValue.json(
                [{"url": f.url, "format": f.rdf_format.name, "triples": f.triples} for f in result.files]
            ),
            "modified": dg.MetadataValue.text(format_modified(result.void.modified) if result.void.modified else ""),
        }
    )


@dg.asset(
    key=[LINKED_DATA, "export"],
    deps=[provider_graph],
    group_name=LINKED_DATA,
    automation_condition=EXPORT_WHEN,
    kinds={"oxigraph"},
)
def linked_data_export(
    context: dg.AssetExecutionContext,
    registry: RegistryResource,
    triplestore: TripleStoreResource,
    storage: StorageResource,
    resourcesync: ResourceSyncResource,
) -> dg.MaterializeResult:
    """All current provider graphs as gzip N-Quads (graph = provider) plus one combined N-Triples dump;
    each provider's N-Quads are published through the ``linked_data`` change feed."""
    from ingest_assets.linked_data.export import write_export

    feed = resourcesync.capability_feed("linked_data", storage.get_client())
    with triplestore.get_client(writable=False) as store:
        result = write_export(store, storage.get_client(), list(registry.load()), datetime.now(timezone.utc),
                              base=triplestore.graph_base, feed=feed)
    counts, key = result.counts, result.key
    context.log.info(f"exported {result.triples} triples of {len(counts)} providers to {key}")
    return dg.MaterializeResult(
        metadata={
            "path": dg.MetadataValue.path(storage.get_client().uri(key)),
            "triples": dg.MetadataValue.int(result.triples),
            "providers": dg.MetadataValue.json(counts),
            "change_feed": dg.MetadataValue.json(feed.report.counts if feed else "off"),
        }
    )
