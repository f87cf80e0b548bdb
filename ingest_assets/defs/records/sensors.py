"""Keeps the provider partitions in step with the registry file."""


import dagster as dg

from ingest_assets.defs.partitions import provider_partitions
from ingest_assets.defs.resources import RegistryResource
from ingest_assets.errors import ConfigError


@dg.sensor(minimum_interval_seconds=60, default_status=dg.DefaultSensorStatus.RUNNING)
def registry_partitions_sensor(context: dg.SensorEvaluationContext, registry: RegistryResource):
    """Add a provider partition for each new registry entry; remove those whose entry is gone."""
    try:
        wanted = set(registry.load())
    except ConfigError as exc:
        return dg.SkipReason(f"registry not loaded: {exc}")
    existing = set(context.instance.get_dynamic_partitions(provider_partitions.name))
    added, removed = sorted(wanted - existing), sorted(existing - wanted)
    if not added and not removed:
        return dg.SkipReason(f"{len(wanted)} providers, no change")
    requests = []
    if added:
        requests.append(provider_partitions.build_add_request(added))
    if removed:
        requests.append(provider_partitions.build_delete_request(removed))
    return dg.SensorResult(dynamic_partitions_requests=requests)
