"""Dagster wiring: the HarvestingInterval sensor, the ingest asset and the verification asset."""

import dagster as dg
import yaml

from ingest_assets.defs.repository.assets import repository_collections, repository_verification
from ingest_assets.defs.repository.resources import RepositoryResource
from ingest_assets.defs.repository.sensors import harvesting_sensor, verification_sensor
from ingest_assets.defs.resources import RegistryResource, SqlResource, StorageResource
from ingest_assets.repository.bookkeeping import Bookkeeping
from ingest_assets.repository.ocfl_store import OcflRepository
from ingest_assets.sql import make_engine

repository_harvesting_sensor = harvesting_sensor("repository_ingest", 120)


def test_sensor_asset_and_watchdog(tmp_path, template_index, thalictrum):
    app, url = template_index
    app.records = [thalictrum]
    registry = tmp_path / "registry.yaml"
    registry.write_text(yaml.safe_dump({"k2n": {"repository": {"template_index": url, "default_language": "de"}},
                                        "other": {"harvest": {"type": "oai", "endpoint": "http://x.org/oai"}}}))
    database = f"sqlite:///{tmp_path / 'ingest.sqlite3'}"
    resources = {"registry": RegistryResource(path=str(registry)), "sql": SqlResource(url=database),
                 "storage": StorageResource(url=str(tmp_path / "storage")),
                 "repository": RepositoryResource(target=str(tmp_path / "ocfl"), allow_private_sources=True)}
    instance = dg.DagsterInstance.ephemeral()

    result = repository_harvesting_sensor(dg.build_sensor_context(instance=instance, resources=resources))
    assert [r.partition_key for r in result.run_requests] == ["k2n"]
    assert result.dynamic_partitions_requests[0].partition_keys == ["k2n"]
    instance.add_dynamic_partitions("repository_providers", ["k2n"])

    run = dg.materialize([repository_collections], partition_key="k2n", resources=resources, instance=instance)
    assert run.success
    (materialization,) = run.asset_materializations_for_node("repository_collections")
    meta = {k: v.value for k, v in materialization.metadata.items()}
    assert meta["units_ingested"] == 1 and meta["objects_ingested"] == 2 and meta["errors"] == 0
    (report,) = meta["reports"]
    assert report.startswith("k2n/repository-reports/") and (tmp_path / "storage" / report).exists()
    assert OcflRepository(tmp_path / "ocfl").exists("K2N:www.keytonature.eu_wiki_thalictrum_in_mitteleuropa")

    engine = make_engine(database)
    lease = Bookkeeping(engine).claim(url)  # an ingest of this source is running
    skipped = repository_harvesting_sensor(dg.build_sensor_context(instance=instance, resources=resources))
    assert isinstance(skipped, dg.SkipReason) and "running: k2n" in skipped.skip_message
    refused = dg.materialize([repository_collections], partition_key="k2n", resources=resources, instance=instance)
    (materialization,) = refused.asset_materializations_for_node("repository_collections")
    assert materialization.metadata["refused"].value is True
    Bookkeeping(engine).finish(lease, None)

    verified = dg.materialize([repository_verification], resources=resources, instance=instance,
                              selection=[repository_verification])
    (materialization,) = verified.asset_materializations_for_node("repository_verification")
    assert materialization.metadata["checked"].value == 1  # the key page's collection (unreachable here)
    engine.dispose()


def test_verification_waits_for_a_repository_provider(tmp_path):
    registry = tmp_path / "registry.yaml"
    registry.write_text("demo: {harvest: {type: oai, endpoint: https://x.org/oai, metadata_prefix: oai_dc}}\n")
    sensor = verification_sensor("repository_verification_run")
    context = dg.build_sensor_context(resources={"registry": RegistryResource(path=str(registry))})
    skipped = sensor(context)
    assert isinstance(skipped, dg.SkipReason) and "no repository providers" in skipped.skip_message
    registry.write_text("k2n: {repository: {template_index: https://example.org/TemplateParameterIndex}}\n")
    request = sensor(dg.build_sensor_context(resources={"registry": RegistryResource(path=str(registry))}))
    assert request.run_key.startswith("verification-")
