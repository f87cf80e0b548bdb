"""HarvestingInterval sensor (one ingest run per provider unless its watchdog is fresh) and the
verification sensor (daily garbage collection)."""

from datetime import datetime, timezone

import dagster as dg

from ingest_assets.defs.providers import repository_providers
from ingest_assets.defs.repository.assets import BLOCK, bookkeeping
from ingest_assets.defs.resources import RegistryResource, SqlResource
from ingest_assets.core.errors import ConfigError

VERIFICATION_INTERVAL = 24 * 3600


def harvesting_sensor(job: str, interval: int) -> dg.SensorDefinition:
    """``interval``: the HarvestingInterval in seconds (settings; the spec suggests 1-5 minutes)."""

    @dg.sensor(name="repository_harvesting_sensor", job_name=job, minimum_interval_seconds=interval,
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
            source = entry.require(BLOCK).source
            if bookkeeping(entry, sql).is_running(source):
                busy.append(entry.name)
                continue
            requests.append(dg.RunRequest(partition_key=entry.name, tags={"repository/source": source}))
        if not requests:
            return dg.SkipReason(f"nothing to start (running: {', '.join(busy) or 'none'})")
        known = set(context.instance.get_dynamic_partitions(repository_providers.name))
        missing = sorted({r.partition_key for r in requests} - known)
        additions = [repository_providers.build_add_request(missing)] if missing else []
        return dg.SensorResult(run_requests=requests, dynamic_partitions_requests=additions)

    return repository_harvesting_sensor


def verification_sensor(job: str) -> dg.SensorDefinition:
    @dg.sensor(name="repository_verification_sensor", job_name=job, minimum_interval_seconds=VERIFICATION_INTERVAL,
               default_status=dg.DefaultSensorStatus.RUNNING)
    def repository_verification_sensor(context: dg.SensorEvaluationContext, registry: RegistryResource):
        """Once a day: verify every collection's source (one run per day, keyed by the date); nothing to
        verify while no provider has a ``repository`` block."""
        try:
            if not registry.load().providers_with(BLOCK):
                return dg.SkipReason("no repository providers in the registry")
        except ConfigError as exc:
            return dg.SkipReason(f"registry not loaded: {exc}")
        return dg.RunRequest(run_key=f"verification-{datetime.now(timezone.utc).date().isoformat()}")

    return repository_verification_sensor
