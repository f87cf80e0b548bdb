"""HarvestingInterval sensor (one ingest run per provider unless its watchdog is fresh) and the
verification sensor (daily garbage collection)."""

import os
from datetime import datetime, timezone

import dagster as dg

from ingest_assets.defs.partitions import provider_partitions
from ingest_assets.defs.repository.assets import (
    BLOCK,
    bookkeeping,
    ingest_settings,
    repository_collections,
    repository_verification,
)
from ingest_assets.defs.resources import RegistryResource, SqlResource
from ingest_assets.errors import ConfigError

HARVESTING_INTERVAL = int(os.environ.get("INGEST_REPOSITORY_HARVESTING_INTERVAL", "120"))  # spec: 1-5 min
VERIFICATION_INTERVAL = 24 * 3600

repository_ingest_job = dg.define_asset_job("repository_ingest", selection=[repository_collections])
repository_verification_job = dg.define_asset_job("repository_verification_run", selection=[repository_verification])


@dg.sensor(job=repository_ingest_job, minimum_interval_seconds=HARVESTING_INTERVAL,
           default_status=dg.DefaultSensorStatus.RUNNING)
def repository_harvesting_sensor(context: dg.SensorEvaluationContext, registry: RegistryResource, sql: SqlResource):
    """Every HarvestingInterval: an ingest run per provider with a ``repository`` block, skipped while a
    previous ingest of the same source still holds a fresh watchdog entry."""
    try:
        entries = registry.load().providers_with(BLOCK)
    except ConfigError as exc:
        return dg.SkipReason(f"registry not loaded: {exc}")
    requests, busy = [], []
    for entry in entries:
        try:
            source = ingest_settings(entry).source
        except ConfigError as exc:
            context.log.warning(str(exc))
            continue
        if bookkeeping(entry, sql).is_running(source):
            busy.append(entry.name)
            continue
        requests.append(dg.RunRequest(partition_key=entry.name, tags={"repository/source": source}))
    if not requests:
        return dg.SkipReason(f"nothing to start (running: {', '.join(busy) or 'none'})")
    known = set(context.instance.get_dynamic_partitions(provider_partitions.name))
    missing = sorted({r.partition_key for r in requests} - known)
    additions = [provider_partitions.build_add_request(missing)] if missing else []
    return dg.SensorResult(run_requests=requests, dynamic_partitions_requests=additions)


@dg.sensor(job=repository_verification_job, minimum_interval_seconds=VERIFICATION_INTERVAL,
           default_status=dg.DefaultSensorStatus.RUNNING)
def repository_verification_sensor(context: dg.SensorEvaluationContext):
    """Once a day: verify every collection's source (one run per day, keyed by the date)."""
    return dg.RunRequest(run_key=f"verification-{datetime.now(timezone.utc).date().isoformat()}")
