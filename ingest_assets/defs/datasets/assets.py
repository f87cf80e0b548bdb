"""The dataset-ingest asset: one requests file -> results table rows, a JSON-lines stream, run metadata."""

import io
import tempfile
from datetime import datetime, timezone

import dagster as dg

from ingest_assets.defs.datasets.resources import DatasetIngestResource
from ingest_assets.defs.resources import RegistryResource, SqlResource, StorageResource
from ingest_assets.defs.resourcesync.resources import ResourceSyncResource
from ingest_assets.storage.layout import dataset_key

DATASETS = "datasets"


class RequestsFile(dg.Config):
    """Which requests file (a storage key below ``_datasets-requests``) this run processes."""

    requests_key: str


@dg.asset(group_name=DATASETS, kinds={"python", "sql"})
def dataset_ingest_results(
    context: dg.AssetExecutionContext,
    config: RequestsFile,
    dataset_ingest: DatasetIngestResource,
    storage: StorageResource,
    sql: SqlResource,
    resourcesync: ResourceSyncResource,
    registry: RegistryResource,
) -> dg.MaterializeResult:
    """Fetch, detect, verify and archive every dataset request of one file; counts per status/platform; the
    stored files are published through the ``datasets`` change feed."""
    from ingest_assets.datasets.ingest import run_requests  # the platform clients load with the first run

    feed = resourcesync.capability_feed("datasets", storage.get_client())
    ctx = dataset_ingest.context(storage.get_client(), sql.get_client(), feed, registry.load().values())
    started = datetime.now(timezone.utc)
    name = config.requests_key.rsplit("/", 1)[-1]
    results_key = dataset_key("results", name, started)
    with (
        storage.get_client().open_read(config.requests_key) as raw,
        tempfile.NamedTemporaryFile("w+", suffix=".jsonl") as out,
    ):
        summary = run_requests(io.TextIOWrapper(raw, encoding="utf-8"), ctx, config.requests_key, out)
        out.flush()
        storage.get_client().write_file(results_key, out.name)
    by_status, by_platform = dict(sorted(summary.by_status.items())), dict(sorted(summary.by_platform.items()))
    context.log.info(f"{summary.requests} dataset requests from {config.requests_key}: {by_status}")
    metadata: dict[str, dg.RawMetadataValue] = {
        "requests_key": config.requests_key,
        "results_key": results_key,
        "requests": summary.requests,
        "hits": summary.hits,
        "retryable": summary.retryable,
        "bytes": summary.bytes,
        "status_counts": dg.MetadataValue.json(by_status),
        "platform_counts": dg.MetadataValue.json(by_platform),
        "change_feed": dg.MetadataValue.json(feed.report.counts if feed else "off"),
    }
    metadata.update({f"status/{k}": v for k, v in by_status.items()})
    metadata.update({f"platform/{k}": v for k, v in by_platform.items()})
    return dg.MaterializeResult(metadata=metadata)
