"""Dagster wiring: the HarvestingInterval sensor, the ingest asset and the verification asset."""

from datetime import datetime, timezone

import dagster as dg
import yaml

from ingest_assets.core.settings import Settings
from ingest_assets.defs.repository.assets import repository_assets
from ingest_assets.defs.repository.resources import RepositoryResource
from ingest_assets.defs.repository.sensors import harvesting_sensor, verification_sensor
from ingest_assets.defs.resources import RegistryResource, SqlResource, StorageResource
from ingest_assets.defs.resourcesync.resources import ResourceSyncResource
from ingest_assets.repository.bookkeeping import Bookkeeping
from ingest_assets.repository.ocfl import OcflRepository
from ingest_assets.core.sql import make_engine
from ingest_assets_tests.support import next_second
from ingest_assets_tests.support.resync import Mirror, tree

repository_harvesting_sensor = harvesting_sensor("repository_ingest", 120)
repository_collections, repository_verification = repository_assets(Settings.from_env({}))


def test_sensor_asset_and_watchdog(tmp_path, template_index, thalictrum):
    app, url = template_index
    app.records = [thalictrum]
    registry = tmp_path / "registry.yaml"
    registry.write_text(yaml.safe_dump({"k2n": {"repository": {"template_index": url, "default_language": "de"}},
                                        "other": {"harvest": {"type": "oai", "endpoint": "http://x.org/oai"}}}))
    database = f"sqlite:///{tmp_path / 'ingest.sqlite3'}"
    resources = {"registry": RegistryResource(path=str(registry)), "sql": SqlResource(url=database),
                 "storage": StorageResource(url=str(tmp_path / "storage")),
                 "resourcesync": ResourceSyncResource(search=str(tmp_path / "search"), sql=SqlResource(url=database),
                                                      base_url="http://127.0.0.1:8080"),
                 "repository": RepositoryResource(target=str(tmp_path / "ocfl"), allow_private_sources=True)}
    instance = dg.DagsterInstance.ephemeral()
    sensor_resources = {k: v for k, v in resources.items() if k != "resourcesync"}

    result = repository_harvesting_sensor(dg.build_sensor_context(instance=instance, resources=sensor_resources))
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
    skipped = repository_harvesting_sensor(dg.build_sensor_context(instance=instance, resources=sensor_resources))
    assert isinstance(skipped, dg.SkipReason) and "running: k2n" in skipped.skip_message
    refused = dg.materialize([repository_collections], partition_key="k2n", resources=resources, instance=instance)
    (materialization,) = refused.asset_materializations_for_node("repository_collections")
    assert materialization.metadata["refused"].value is True
    Bookkeeping(engine).finish(lease, None)

    verified = dg.materialize([repository_verification], resources=resources, instance=instance,
                              selection=[repository_verification])
    (materialization,) = verified.asset_materializations_for_node("repository_verification")
    # the key page's collection and the key itself, both harvested from that page (unreachable here, asked once)
    assert materialization.metadata["checked"].value == 2
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


def test_collection_reingest_reaches_a_resync_destination(tmp_path, template_index, thalictrum, http_server):
    """Objects of a re-ingested collection are published through the change feed: the destination gets
    the first ingest's objects, then the member that left the page as a deletion and its replacement."""
    app, url = template_index
    other = {**thalictrum, "title": "Thalictrum minus", "creators": "Ralf Hand, Carl Linnaeus"}
    app.records = [thalictrum, other]  # one key page with two keys: its collection has two members
    registry = tmp_path / "registry.yaml"
    registry.write_text(yaml.safe_dump({"k2n": {"repository": {"template_index": url, "default_language": "de"}}}))
    mirror = Mirror(http_server, tmp_path / "client", "repository-objects")
    database = f"sqlite:///{tmp_path / 'ingest.sqlite3'}"
    resourcesync = ResourceSyncResource(search=str(tmp_path / "search"), sql=SqlResource(url=database),
                                        base_url=mirror.base)
    storage = StorageResource(url=str(tmp_path / "storage"))
    resources = {"registry": RegistryResource(path=str(registry)), "sql": SqlResource(url=database),
                 "storage": storage, "resourcesync": resourcesync,
                 "repository": RepositoryResource(target=str(tmp_path / "ocfl"), allow_private_sources=True)}
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("repository_providers", ["k2n"])
    sets = resourcesync.sets(RegistryResource(path=str(registry)).load())
    area = tmp_path / "storage" / "_resourcesync" / "repository-objects" / "resources"

    def ingest() -> dict:
        run = dg.materialize([repository_collections], partition_key="k2n", resources=resources, instance=instance)
        (materialization,) = run.asset_materializations_for_node("repository_collections")
        return materialization.metadata["change_feed"].value

    assert ingest() == {"created": 4, "updated": 0, "deleted": 0, "unchanged": 0}  # wiki, collection, 2 keys
    repo = OcflRepository(tmp_path / "ocfl")
    objects = {path.name.removesuffix(".ttl"): path.read_bytes() for path in (area / "objects").iterdir()}
    assert all(repo.get(pid).to_turtle() == data for pid, data in objects.items())
    [baseline] = mirror.sync(resourcesync.get_client(), storage.get_client(), sets)
    assert "created=4" in baseline and tree(mirror.folder) == tree(area)
    assert "/repository-objects/capabilitylist.xml" in mirror.source_description(storage.get_client())

    # the page loses one key and the other is edited: the collection is re-ingested
    app.records = [{**thalictrum, "title": "Thalictrum (revised)", "Modified": next_second(datetime.now(timezone.utc))}]
    feed = ingest()
    assert feed["deleted"] == 2 and feed["created"] == 1  # both old members go (a member's PID hashes its record)
    left = {path.name.removesuffix(".ttl") for path in (area / "objects").iterdir()}
    assert len(left) == 3 and len(left - set(objects)) == 1 and all(repo.exists(pid) for pid in left)
    outputs = mirror.sync(resourcesync.get_client(), storage.get_client(), sets)
    assert any("deleted=2" in output and "created=1" in output for output in outputs), outputs
    assert tree(mirror.folder) == tree(area)
    assert b"Thalictrum (revised)" in (mirror.folder / "objects" / f"{(left - set(objects)).pop()}.ttl").read_bytes()
