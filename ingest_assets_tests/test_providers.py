"""Provider partitions per capability: the UI only offers partitions that can run."""

import dagster as dg

from ingest_assets.defs.providers import registry_partitions_sensor
from ingest_assets.defs.resources import RegistryResource

REGISTRY = """
alpha: {harvest: {type: oai, endpoint: https://alpha.example.org/oai, metadata_prefix: oai_dc}, mapping: oai_dc}
beta: {modified: 2020-01-01, void: http://example.org/void.ttl}
gamma: {repository: {template_index: https://example.org/TemplateParameterIndex}}
both: {harvest: {type: oai, endpoint: https://both.example.org/oai, metadata_prefix: oai_dc}, void: http://b.org/void.ttl}
"""


def _tick(instance, path):
    return registry_partitions_sensor(dg.build_sensor_context(instance=instance, resources={"registry": RegistryResource(path=str(path))}))


def _apply(instance, result):
    for request in result.dynamic_partitions_requests:
        if isinstance(request, dg.AddDynamicPartitionsRequest):
            instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
        else:
            for key in request.partition_keys:
                instance.delete_dynamic_partition(request.partitions_def_name, key)


def test_each_capability_is_partitioned_only_by_its_own_providers(tmp_path):
    path = tmp_path / "registry.yaml"
    path.write_text(REGISTRY)
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("record_providers", ["gone", "alpha"])
        _apply(instance, _tick(instance, path))
        assert sorted(instance.get_dynamic_partitions("record_providers")) == ["alpha", "both"]
        assert sorted(instance.get_dynamic_partitions("linked_data_providers")) == ["beta", "both"]
        assert instance.get_dynamic_partitions("repository_providers") == ["gamma"]

        again = _tick(instance, path)
        assert isinstance(again, dg.SkipReason) and "4 registry entries, no change" in again.skip_message

        # an entry that loses its block leaves that capability's partitions, and only those
        path.write_text(REGISTRY.replace(", void: http://b.org/void.ttl", ""))
        _apply(instance, _tick(instance, path))
        assert instance.get_dynamic_partitions("linked_data_providers") == ["beta"]
        assert sorted(instance.get_dynamic_partitions("record_providers")) == ["alpha", "both"]

        path.write_text("Bad: {}\n")
        broken = _tick(instance, path)
        assert isinstance(broken, dg.SkipReason) and "provider names must match" in broken.skip_message
