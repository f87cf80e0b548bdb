import dagster as dg

from ingest_assets.defs.records.sensors import registry_partitions_sensor
from ingest_assets.defs.resources import RegistryResource


def test_registry_sensor_adds_and_removes_provider_partitions(tmp_path):
    path = tmp_path / "registry.yaml"
    path.write_text("alpha: {}\nbeta: {modified: 2020-01-01, void: http://example.org/void.ttl}\n")
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("providers", ["gone", "alpha"])
        context = dg.build_sensor_context(instance=instance, resources={"registry": RegistryResource(path=str(path))})
        result = registry_partitions_sensor(context)
        (add, delete) = result.dynamic_partitions_requests
        assert add.partition_keys == ["beta"] and delete.partition_keys == ["gone"]

        instance.add_dynamic_partitions("providers", ["beta"])
        instance.delete_dynamic_partition("providers", "gone")
        again = registry_partitions_sensor(dg.build_sensor_context(instance=instance, resources={"registry": RegistryResource(path=str(path))}))
        assert isinstance(again, dg.SkipReason) and "2 providers, no change" in again.skip_message

        path.write_text("Bad: {}\n")
        broken = registry_partitions_sensor(dg.build_sensor_context(instance=instance, resources={"registry": RegistryResource(path=str(path))}))
        assert isinstance(broken, dg.SkipReason) and "provider names must match" in broken.skip_message
