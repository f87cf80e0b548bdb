"""Provider partitions per capability, and the sensor keeping each set in step with the registry file.

An entry is a provider of a capability when it carries that capability's block (``CAPABILITY_KEYS``), so the
UI only offers partitions that can run: a linked-data entry is no record partition and vice versa.
"""

import dagster as dg

from ingest_assets.defs.resources import RegistryResource

record_providers = dg.DynamicPartitionsDefinition(name="record_providers")
linked_data_providers = dg.DynamicPartitionsDefinition(name="linked_data_providers")
repository_providers = dg.DynamicPartitionsDefinition(name="repository_providers")
PROVIDER_SETS = {"records": record_providers, "linked_data": linked_data_providers, "repository": repository_providers}


@dg.sensor(minimum_interval_seconds=30, default_status=dg.DefaultSensorStatus.RUNNING)
def registry_partitions_sensor(context: dg.SensorEvaluationContext, registry: RegistryResource):
    """Add a provider partition for each entry that carries a capability's block; remove those whose entry or
    block is gone. A refused entry's partitions stay as they were (a typo does not delete history); a registry
    that does not load at all, with no last good copy, fails the tick."""
    loaded = registry.load()
    requests, changes = [], []
    for capability, partitions in PROVIDER_SETS.items():
        wanted = set(loaded.providers_of(capability))
        existing = set(context.instance.get_dynamic_partitions(partitions.name))
        added, removed = sorted(wanted - existing), sorted(existing - wanted - set(loaded.problems))
        if added:
            requests.append(partitions.build_add_request(added))
            changes.append(f"{capability} +{','.join(added)}")
        if removed:
            requests.append(partitions.build_delete_request(removed))
            changes.append(f"{capability} -{','.join(removed)}")
    if not requests:
        return dg.SkipReason(f"{len(loaded)} registry entries, no change"
                             + (f"; {len(loaded.problems)} refused (see the provider_registry check)" if loaded.problems else ""))
    context.log.info("provider partitions: " + "; ".join(changes))
    return dg.SensorResult(dynamic_partitions_requests=requests)
