"""Dagster wiring: the VoID sensor (build_sensor_context) and the assets (dagster.materialize)."""

import gzip
from datetime import datetime, timezone
import json
import uuid

import dagster as dg
import pytest
from dagster._core.test_utils import create_run_for_test
from pyoxigraph import RdfFormat, parse

from ingest_assets.defs.linked_data import sensors as sensor_module
from ingest_assets.defs.linked_data import assets as assets_module
from ingest_assets.defs.linked_data.assets import linked_data_export, provider_graph
from ingest_assets.defs.linked_data.resources import TripleStoreResource
from ingest_assets.defs.linked_data.sensors import PROVIDER_TAG, void_sensor
from ingest_assets.defs.operations.failures import failure_sensor
from ingest_assets.defs.resources import RegistryResource, SqlResource, StorageResource
from ingest_assets.defs.resourcesync.resources import ResourceSyncResource
from ingest_assets.linked_data.importer import ProviderSource, import_update
from ingest_assets.linked_data.status import read_status
from ingest_assets.operations.failures import last_failure
from ingest_assets_tests.support.linked_data import ORGS, bcodmo_archives, publish
from ingest_assets_tests.support.resync import Mirror, tree

BROKEN = "chembl-rdf-void-2012-10-broken.ttl"


@pytest.fixture
def wiring(tmp_path, site):
    """Registry of four providers: changed (a), unchanged (b), unreachable VoID (c), malformed VoID (d)."""
    site.void("/a/void.ttl", '"2015-11-05T09:00:00-08:00"^^xsd:dateTime', [site.fixture(ORGS)])
    site.void("/b/void.ttl", '"2015-11-05"^^xsd:date', [site.fixture(ORGS)])
    registry = tmp_path / "registry.yaml"
    registry.write_text(
        f"a: {{modified: 2015-10-01, void: '{site.base}/a/void.ttl', allow_private: true}}\n"
        f"b: {{modified: '2015-11-05 12:00:00', void: '{site.base}/b/void.ttl', allow_private: true}}\n"
        f"c: {{modified: 2015-10-01, void: '{site.base}/c/void.ttl', allow_private: true}}\n"
        f"d: {{modified: 2015-10-01, void: '{site.fixture(BROKEN)}', allow_private: true}}\n"
        "e: {harvest: {type: oai, endpoint: 'https://h.org/oai'}}\n"  # another capability's provider: not ours
    )
    storage = StorageResource(url=str(tmp_path / "storage"))
    sql = SqlResource(url=f"sqlite:///{tmp_path / 'ingest.sqlite3'}")
    return {
        "registry": RegistryResource(path=str(registry)),
        "triplestore": TripleStoreResource(location=str(tmp_path / "oxigraph")),
        "storage": storage,
        "resourcesync": ResourceSyncResource(search=str(tmp_path / "search"), sql=sql, base_url="http://127.0.0.1:8080"),
    }


@pytest.fixture
def instance():
    with dg.instance_for_test() as instance:
        yield instance


def _tick(instance, wiring, cursor=None):
    sensor_resources = {k: v for k, v in wiring.items() if k != "resourcesync"}
    context = dg.build_sensor_context(instance=instance, cursor=cursor, resources=sensor_resources)
    return void_sensor(context)


def test_sensor_requests_changed_provider_and_reports_bad_voids(instance, wiring):
    result = _tick(instance, wiring)
    assert [(r.partition_key, r.run_key, r.tags) for r in result.run_requests] == [
        ("a", "a@2015-11-05T17:00:00Z", {PROVIDER_TAG: "a"})
    ]
    assert result.dynamic_partitions_requests[0].partition_keys == ["a"]
    assert json.loads(result.cursor) == {"after": "d"}
    errors = {e.partition: e.metadata["last_error"].value for e in result.asset_events}
    assert errors["a"] == "" and errors["b"] == ""
    assert "HTTP 404" in errors["c"] and "line 35" in errors["d"]
    storage = wiring["storage"].get_client()
    assert "HTTP 404" in read_status(storage, "c")["last_error"]
    assert read_status(storage, "a")["modified_seen"] == "2015-11-05T17:00:00Z"


def test_sensor_notices_a_change_of_any_subset(instance, wiring, site, void_fixtures, http):
    archives = bcodmo_archives(site, void_fixtures, "s", "Cruise one")
    url = publish(site, "s", "2015-11-01", "2015-11-09", archives)
    with open(wiring["registry"].path, "a") as registry:
        registry.write(f"s: {{void: '{url}', allow_private: true}}\n")
    triplestore = wiring["triplestore"]
    with triplestore.get_client(writable=True) as store:
        import_update(ProviderSource("s", url, allow_private=True), store, http, triplestore.graphs("s"))
    assert [r.partition_key for r in _tick(instance, wiring).run_requests] == ["a"]
    publish(site, "s", "2015-11-02", "2015-11-09", archives)  # an older subset changed: the newest date stays
    [request] = [r for r in _tick(instance, wiring).run_requests if r.partition_key == "s"]
    assert request.run_key.startswith("s@2015-11-09T00:00:00Z+")


def test_sensor_observes_a_provider_only_when_its_void_or_error_changed(instance, wiring, site):
    assert sorted(e.partition for e in _tick(instance, wiring).asset_events) == ["a", "b", "c", "d"]  # first checks
    assert _tick(instance, wiring).asset_events == []  # the same answers a minute later
    site.void("/b/void.ttl", '"2015-12-01"^^xsd:date', [site.fixture(ORGS)])
    [changed] = _tick(instance, wiring).asset_events
    assert changed.partition == "b" and changed.metadata["modified_seen"].value == "2015-12-01T00:00:00Z"
    assert read_status(wiring["storage"].get_client(), "a")["last_check"]  # every check still updates the status


def test_sensor_spreads_providers_over_ticks(instance, wiring, monkeypatch):
    monkeypatch.setattr(sensor_module, "TICK_BUDGET_SECONDS", 0.0)
    cursor, seen = None, []
    for _ in range(5):
        result = _tick(instance, wiring, cursor)
        cursor = result.cursor
        seen.append(json.loads(cursor)["after"])
    assert seen == ["a", "b", "c", "d", "a"]


def test_sensor_skips_with_reason_when_nothing_changed(instance, wiring, site):
    site.void("/a/void.ttl", '"2015-09-01"^^xsd:date', [site.fixture(ORGS)])
    result = _tick(instance, wiring)
    assert result.run_requests == []
    assert "c: " in result.skip_reason.skip_message and "d: " in result.skip_reason.skip_message


@pytest.mark.parametrize(
    ("status", "requested"),
    [
        (dg.DagsterRunStatus.NOT_STARTED, False),  # (QUEUED needs a code location origin; same filter)
        (dg.DagsterRunStatus.STARTING, False),
        (dg.DagsterRunStatus.STARTED, True),
        (dg.DagsterRunStatus.SUCCESS, True),
    ],
)
def test_one_follow_up_while_an_import_waits_or_runs(instance, wiring, status, requested):
    create_run_for_test(instance, status=status, tags={PROVIDER_TAG: "a"})
    create_run_for_test(instance, status=dg.DagsterRunStatus.NOT_STARTED, tags={PROVIDER_TAG: "b"})
    result = _tick(instance, wiring)
    assert [r.partition_key for r in result.run_requests] == (["a"] if requested else [])


def _materialize(instance, wiring, assets, **kwargs):
    return dg.materialize(assets, instance=instance, resources=wiring, **kwargs)


@pytest.mark.parametrize("backend", ["embedded", "endpoint", "fuseki"])
def test_import_asset_status_document_and_export(instance, wiring, site, backend, request):
    if backend != "embedded":
        server = request.getfixturevalue("oxigraph_server") if backend == "endpoint" else \
            "fuseki+" + request.getfixturevalue("fuseki_server").url
        wiring["triplestore"] = TripleStoreResource(location=server, graph_base=f"urn:x-test:{uuid.uuid4().hex}:")
    instance.add_dynamic_partitions("linked_data_providers", ["a"])
    first = _materialize(instance, wiring, [provider_graph], partition_key="a")
    [event] = first.asset_materializations_for_node("linked_data__provider_graph")
    assert event.metadata["strategy"].value == "replace" and event.metadata["triples"].value == 387
    status = read_status(wiring["storage"].get_client(), "a")
    assert status["harvested"]["modified_text"] == "2015-11-05T09:00:00-08:00"  # the acknowledgement
    assert status["harvested"]["modified"] == "2015-11-05T17:00:00Z" and status["last_error"] is None

    again = _materialize(instance, wiring, [provider_graph], partition_key="a")
    assert again.success and again.asset_materializations_for_node("linked_data__provider_graph") == []
    assert _tick(instance, wiring).run_requests == []  # harvested: the sensor no longer asks for a

    exported = _materialize(instance, wiring, [provider_graph, linked_data_export], selection=[linked_data_export])
    [event] = exported.asset_materializations_for_node("linked_data__export")
    assert event.metadata["providers"].value == {"a": 387}
    storage = wiring["storage"].get_client()
    [folder] = [k.rsplit("/", 1)[0] for k in storage.list_keys("_linked_data") if k.endswith("graphs.nq.gz")]
    assert storage.is_complete(folder)
    quads = list(parse(input=gzip.decompress(storage.read_bytes(f"{folder}/graphs.nq.gz")), format=RdfFormat.N_QUADS))
    graph_name = wiring["triplestore"].graphs("a").name
    assert len(quads) == 387 and {q.graph_name.value for q in quads} == {graph_name}


def test_exports_in_the_same_second_each_keep_their_own_folder(instance, wiring, monkeypatch):
    """Exports are never overwritten: a second export within the same second takes the next one."""
    moment = datetime(2026, 1, 15, 12, 0, 0, tzinfo=timezone.utc)

    class Frozen(datetime):
        @classmethod
        def now(cls, tz=None):
            return moment

    monkeypatch.setattr(assets_module, "datetime", Frozen)
    for _ in range(2):
        assert _materialize(instance, wiring, [provider_graph, linked_data_export], selection=[linked_data_export]).success
    storage = wiring["storage"].get_client()
    folders = sorted({k.rsplit("/", 1)[0] for k in storage.list_keys("_linked_data") if k.endswith("/_MANIFEST")})
    assert [f.rsplit("/", 1)[1] for f in folders] == ["20260115_120000-export", "20260115_120001-export"]


def test_export_follows_any_provider_graph_change(instance, wiring):
    instance.add_dynamic_partitions("linked_data_providers", ["a", "b"])
    assets = dg.Definitions(assets=[provider_graph, linked_data_export], resources=wiring)
    first = dg.evaluate_automation_conditions(defs=assets, instance=instance)
    instance.report_runless_asset_event(dg.AssetMaterialization(linked_data_export.key))
    settled = dg.evaluate_automation_conditions(defs=assets, instance=instance, cursor=first.cursor)
    assert settled.get_num_requested(linked_data_export.key) == 0
    instance.report_runless_asset_event(dg.AssetMaterialization(provider_graph.key, partition="b"))
    changed = dg.evaluate_automation_conditions(defs=assets, instance=instance, cursor=settled.cursor)
    assert changed.get_num_requested(linked_data_export.key) == 1
    assert changed.get_num_requested(provider_graph.key) == 0  # imports come from the sensor only
    again = dg.evaluate_automation_conditions(defs=assets, instance=instance, cursor=changed.cursor)
    assert again.get_num_requested(linked_data_export.key) == 0  # one export per change


def test_failed_import_reports_and_keeps_graph(instance, wiring, site):
    instance.add_dynamic_partitions("linked_data_providers", ["a"])
    _materialize(instance, wiring, [provider_graph], partition_key="a")
    site.void("/a/void.ttl", '"2015-12-01"^^xsd:date', [site.fixture(ORGS), site.fixture(BROKEN, "2")])
    failed = _materialize(instance, wiring, [provider_graph], partition_key="a", raise_on_error=False)
    assert not failed.success
    status = read_status(wiring["storage"].get_client(), "a")
    assert "line 35" in status["last_error"] and status["harvested"]["triples"] == 387
    assert [r.partition_key for r in _tick(instance, wiring).run_requests] == ["a"]  # still due (new run key)


def test_provider_exports_reach_a_resync_destination(instance, wiring, site, tmp_path, http_server):
    """Each provider's N-Quads are published by the export: created, then updated when its graph changed,
    nothing when it did not, deleted when the provider left the registry."""
    mirror = Mirror(http_server, tmp_path / "client", "linked-data")
    resourcesync = ResourceSyncResource(search=str(tmp_path / "search"), sql=wiring["resourcesync"].sql,
                                        base_url=mirror.base)
    wiring["resourcesync"] = resourcesync
    storage = wiring["storage"].get_client()
    sets = resourcesync.sets(wiring["registry"].load())
    area = tmp_path / "storage" / "_resourcesync" / "linked-data" / "resources"
    site.void("/b/void.ttl", '"2015-11-06"^^xsd:date', [site.fixture("dumps/bcodmo-rvdata-cruise-links.nt")])
    instance.add_dynamic_partitions("linked_data_providers", ["a", "b"])

    def export() -> dict:
        exported = _materialize(instance, wiring, [provider_graph, linked_data_export], selection=[linked_data_export])
        [event] = exported.asset_materializations_for_node("linked_data__export")
        return event.metadata["change_feed"].value

    for provider in ("a", "b"):
        _materialize(instance, wiring, [provider_graph], partition_key=provider)
    assert export() == {"created": 2, "updated": 0, "deleted": 0, "unchanged": 0}
    quads = list(parse(input=(area / "a.nq").read_bytes(), format=RdfFormat.N_QUADS))
    assert len(quads) == 387 and {q.graph_name.value for q in quads} == {wiring["triplestore"].graphs("a").name}
    [baseline] = mirror.sync(resourcesync.get_client(), storage, sets)
    assert "created=2" in baseline and tree(mirror.folder) == tree(area)
    assert export()["unchanged"] == 2  # regenerated from the same graphs: nothing to tell

    site.void("/a/void.ttl", '"2015-12-01"^^xsd:date', [site.fixture("dumps/bcodmo-rvdata-cruise-links.nt", "2")])
    _materialize(instance, wiring, [provider_graph], partition_key="a")
    registry = wiring["registry"].path
    with open(registry) as handle:
        kept = [line for line in handle if not line.startswith("b:")]
    with open(registry, "w") as handle:
        handle.writelines(kept)
    assert export() == {"created": 0, "updated": 1, "deleted": 1, "unchanged": 0}
    outputs = mirror.sync(resourcesync.get_client(), storage, sets)
    assert any("updated=1, deleted=1" in output for output in outputs), outputs
    assert tree(mirror.folder) == tree(area) and set(tree(mirror.folder)) == {"a.nq"}
    assert (mirror.folder / "a.nq").read_bytes().count(b"\n") == len(
        list(parse(input=(area / "a.nq").read_bytes(), format=RdfFormat.N_QUADS))
    ) != 387


def test_a_malformed_void_fails_its_run_and_stays_the_providers_last_failure(instance, wiring):
    """A run failed by a VoID that is not well-formed: its error stays in the provider's status document until an
    import succeeds, whatever the checks meanwhile say, and the hub's record of the failure (the failure sensor's:
    hub_status, the status page, the notices) says the error itself, not Dagster's "Error occurred while executing
    op" around it."""
    instance.add_dynamic_partitions("linked_data_providers", ["d"])
    failed = _materialize(instance, wiring, [provider_graph], partition_key="d", raise_on_error=False)
    assert not failed.success
    storage = wiring["storage"].get_client()
    failure = read_status(storage, "d")["last_failure"]
    assert failure["message"].startswith("VoID is not valid turtle") and BROKEN in failure["message"]
    _tick(instance, wiring)
    assert read_status(storage, "d")["last_failure"] == failure

    sensor = failure_sensor([], "http://dagster.hub.example")
    sensor(dg.build_run_status_sensor_context(
        sensor_name=sensor.name, dagster_event=failed.get_run_failure_event(), dagster_instance=instance,
        dagster_run=failed.dagster_run, resources={"storage": wiring["storage"]}).for_run_failure())
    recorded = last_failure(storage, "d")
    assert (recorded.stage, recorded.message) == ("linked_data__provider_graph", " ".join(failure["message"].split()))
