"""Provider partitions per capability: the UI only offers partitions that can run."""

import dagster as dg
import pytest

from ingest_assets.core.errors import ConfigError
from ingest_assets.defs.providers import registry_partitions_sensor
from ingest_assets.defs.resources import RegistryResource, StorageResource

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

        # a refused entry (a misspelt key) keeps its partitions; nothing else changes
        path.write_text(REGISTRY.replace(", void: http://b.org/void.ttl", "").replace("metadata_prefix", "metadataprefix", 1))
        refused = _tick(instance, path)
        assert isinstance(refused, dg.SkipReason) and "3 registry entries, no change; 1 refused" in refused.skip_message
        assert sorted(instance.get_dynamic_partitions("record_providers")) == ["alpha", "both"]

        # a file that does not load, with no last good copy kept: the tick fails (red in the UI), naming the file
        path.write_text("alpha: [unclosed\n")
        with pytest.raises(ConfigError, match="registry is not valid YAML") as failed:
            _tick(instance, path)
        assert failed.value.file == str(path)


def test_a_file_that_stops_loading_keeps_the_last_good_registry_running(tmp_path):
    path = tmp_path / "registry.yaml"
    path.write_text(REGISTRY)
    registry = RegistryResource.keeping_copies_in(str(path), StorageResource(url=str(tmp_path / "storage")))
    with dg.instance_for_test() as instance:
        _apply(instance, registry_partitions_sensor(dg.build_sensor_context(instance=instance, resources={"registry": registry})))
        path.write_text("alpha: [unclosed\n")  # an edit that breaks the file
        kept = registry.load()
        assert sorted(kept) == ["alpha", "beta", "both", "gamma"] and "not valid YAML" in str(kept.stale)
        again = registry_partitions_sensor(dg.build_sensor_context(instance=instance, resources={"registry": registry}))
        assert isinstance(again, dg.SkipReason) and "4 registry entries, no change" in again.skip_message
