"""Linked-data providers as recorded (``replays/void``), replayed whole on 127.0.0.1: the VoID worldbank.270a.info
publishes (no void:feature FullDump/PartialDump; its ``void`` subset has no dcterms:modified and is its own
dump) with its subsets' ``.tar.gz`` dumps packed from the recorded members, and the MBLWHOI Library's GeoLink
VoID (an ``rdf:nodeID`` dataset, four RDF/XML dumps)."""

from __future__ import annotations

import tarfile
from datetime import datetime, timezone

import dagster as dg
import pytest

from ingest_assets.core.errors import ParseError
from ingest_assets.core.http import HttpClient
from ingest_assets.core.registry import ProviderEntry
from ingest_assets.defs.linked_data.assets import provider_graph
from ingest_assets.defs.linked_data.resources import TripleStoreResource
from ingest_assets.defs.linked_data.sensors import void_sensor
from ingest_assets.defs.resources import RegistryResource, StorageResource
from ingest_assets.linked_data.graphs import ProviderGraphs
from ingest_assets.linked_data.importer import ProviderSource, import_update
from ingest_assets.linked_data.oxigraph import OxigraphStore
from ingest_assets.linked_data.status import read_status
from ingest_assets.linked_data.watch import check_provider
from ingest_assets.storage import LocalStorage
from ingest_assets_tests.support import tar_bytes

WB_DUMPS = {  # the VoID's dump (a .tar.gz) -> the recorded member packed into it
    "meta": "meta.ttl", "world-development-indicators.en": "indicators.ttl", "world-bank-finances": "finances.rdf",
    "world-bank-projects-and-operations": "projects.nt", "world-bank-climates": "climates.ttl",
}
MBL_DUMPS = ("affiliation", "authority", "award", "dataset")


def world_bank(replay, etag: str | None = None):
    """The 270a World Bank VoID at ``/wb/void.ttl`` (also its ``void`` subset's dump), every subset's dump."""
    replay.file("/wb/void.ttl", "wb-void.ttl", "text/turtle", etag=etag)
    for name, member in WB_DUMPS.items():
        replay.route(f"/wb/data/{name}.tar.gz",
                     lambda m=member: tar_bytes([(m, tarfile.REGTYPE, replay.read(f"wb-data/{m}"))]), "application/gzip")
    return replay.base + "/wb/void.ttl"


def mbl(replay, void: str = "mbl-void-v1.rdf"):
    replay.file("/mbl/void.rdf", void, "application/rdf+xml")
    for name in MBL_DUMPS:
        replay.file(f"/mbl/dumps/{name}.rdf", f"mbl-dumps/{name}.rdf", "application/rdf+xml")
    return replay.base + "/mbl/void.rdf"


def import_once(url, store, seen=None, provider="wb"):
    http = HttpClient(allow_private=True, retries=0, timeout=(2, 10))
    return import_update(ProviderSource(provider, url, allow_private=True), store, http, ProviderGraphs(provider),
                         seen=seen)


@pytest.fixture
def store(tmp_path):
    with OxigraphStore(tmp_path / "oxigraph", writable=True) as store:
        yield store


def test_the_270a_world_bank_void_is_imported_and_an_unchanged_dump_never_again(replay_source, store):
    replay = replay_source("void")
    url = world_bank(replay)
    first = import_once(url, store)
    assert first.strategy == "replace" and first.void.kind == "full"  # no FullDump/PartialDump: a full dump
    assert len(first.void.subsets) == 6 and first.void.modified_text == "2014-06-23"
    undated = {s.dataset: s.modified for s in first.void.subsets}["http://worldbank.270a.info/dataset/void"]
    assert undated is None and len(first.files) == 6
    void_dump = f"{replay.base}/wb/void.ttl"
    assert first.dumps[void_dump].sha256 and not first.dumps[void_dump].etag  # this server sends no validator
    version = first.state.current
    triples = store.count(version)

    again = import_once(url, store, seen=first.dumps)  # the undated subset's dump: same bytes
    assert again.strategy == "unchanged" and again.state.current == version and store.count(version) == triples
    assert again.dumps[void_dump].sha256 == first.dumps[void_dump].sha256
    assert replay.paths().count("/wb/data/world-bank-finances.tar.gz") == 1  # dated subsets: by their modified


def test_a_dump_whose_server_says_it_is_unchanged_is_not_even_downloaded(replay_source, store):
    replay = replay_source("void")
    url = world_bank(replay, etag='"v1"')
    first = import_once(url, store)
    assert first.dumps[f"{replay.base}/wb/void.ttl"].etag == '"v1"'
    again = import_once(url, store, seen=first.dumps)
    assert again.strategy == "unchanged"
    conditional = [h for (path, _), h in zip(replay.requests, replay.request_headers) if path == "/wb/void.ttl"][-1]
    assert conditional.get("if-none-match") == '"v1"'  # answered 304: no body


def test_the_sensor_asks_the_dumps_server_when_the_void_gives_no_modified(replay_source, tmp_path):
    replay = replay_source("void")
    url = world_bank(replay, etag='"v1"')
    registry = tmp_path / "registry.yaml"
    registry.write_text(f"wb: {{void: '{url}', allow_private: true}}\n")
    resources = {"registry": RegistryResource(path=str(registry)),
                 "triplestore": TripleStoreResource(location=str(tmp_path / "oxigraph")),
                 "storage": StorageResource(url=str(tmp_path / "storage"))}
    with dg.instance_for_test() as instance:
        def tick():
            return void_sensor(dg.build_sensor_context(instance=instance, resources=resources)).run_requests

        [first] = tick()
        instance.add_dynamic_partitions("linked_data_providers", ["wb"])
        assert dg.materialize([provider_graph], instance=instance, resources=resources, partition_key="wb").success
        dumps = read_status(resources["storage"].get_client(), "wb")["harvested"]["dumps"]
        assert dumps[url] == {"etag": '"v1"', "last_modified": None, "sha256": dumps[url]["sha256"]}
        assert tick() == []  # HEAD: the same ETag
        world_bank(replay, etag='"v2"')  # the server says the VoID changed
        [second] = tick()
        assert second.run_key != first.run_key


def test_a_truncated_dump_fails_naming_it_the_failure_stays_until_an_import_succeeds(replay_source, tmp_path):
    replay = replay_source("void")
    url = mbl(replay)
    registry = tmp_path / "registry.yaml"
    registry.write_text(f"mbl: {{void: '{url}', allow_private: true}}\n")
    resources = {"registry": RegistryResource(path=str(registry)),
                 "triplestore": TripleStoreResource(location=str(tmp_path / "oxigraph")),
                 "storage": StorageResource(url=str(tmp_path / "storage"))}
    storage = resources["storage"].get_client()
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("linked_data_providers", ["mbl"])

        def materialize():
            return dg.materialize([provider_graph], instance=instance, resources=resources, partition_key="mbl",
                                  raise_on_error=False)

        assert materialize().success
        status = read_status(storage, "mbl")
        [imported] = status["lineage"]["imports"]
        assert imported["void"]["dataset"] == "_:MBLWHOILibrary_Repository_VoID_Document"  # its rdf:nodeID
        triples, version = status["harvested"]["triples"], status["lineage"]["version"]

        mbl(replay, "mbl-void-v1-newer.rdf")  # modified 2016-05-01: a new full dump
        award = replay.read("mbl-dumps/award.rdf")
        replay.cut("/mbl/dumps/award.rdf", award.index(b"</rdf:RDF>"))  # injected: the transfer ends early
        failed = materialize()
        assert not failed.success
        error = failed.get_step_failure_events()[0].step_failure_data.error.cause
        assert error.cls_name == "ParseError" and "truncated" in error.message
        assert f"{replay.base}/mbl/dumps/award.rdf" in error.message and "'mbl'" in error.message
        status = read_status(storage, "mbl")
        assert status["harvested"]["triples"] == triples and status["lineage"]["version"] == version  # kept
        failure = status["last_failure"]
        assert "truncated" in failure["message"] and failure["time"] == status["last_check"]
        observed = instance.fetch_observations(provider_graph.key, limit=1).records[0].asset_observation
        assert observed.partition == "mbl" and "truncated" in observed.metadata["last_failure"].value

        checked = void_sensor(dg.build_sensor_context(instance=instance, resources=resources))
        status = read_status(storage, "mbl")
        assert status["last_error"] is None and status["last_failure"] == failure  # a good check keeps it
        assert [r.partition_key for r in checked.run_requests] == ["mbl"]
        assert "truncated" in checked.asset_events[0].metadata["last_failure"].value  # shown in the UI

        del replay.cuts["/mbl/dumps/award.rdf"]
        assert materialize().success
        assert read_status(storage, "mbl")["last_failure"] is None


def test_a_void_dataset_is_named_by_its_rdf_node_id(replay_source, store):
    replay = replay_source("void")
    result = import_once(mbl(replay), store, provider="mbl")
    assert result.strategy == "replace" and result.void.dataset == "_:MBLWHOILibrary_Repository_VoID_Document"


def test_a_truncated_rdfxml_dump_is_a_parse_error_not_the_triples_before_the_cut(replay_source, store):
    replay = replay_source("void")
    url = mbl(replay)
    award = replay.read("mbl-dumps/award.rdf")
    replay.cut("/mbl/dumps/award.rdf", award.index(b"</rdf:Description>"))  # injected: cut inside the document
    with pytest.raises(ParseError, match="truncated") as caught:
        import_once(url, store, provider="mbl")
    assert caught.value.provider == "mbl" and caught.value.file == f"{replay.base}/mbl/dumps/award.rdf"
    assert ProviderGraphs("mbl").read_state(store).current is None


def test_the_sensors_questions_about_undated_dumps_stop_at_their_time_budget(replay_source, shared_fixtures, store,
                                                                             tmp_path):
    # the BCO-DMO VoID: no dcterms:modified, 13 dumps; their host is slow to answer (injected: 0.3 s each), so
    # asking all 13 would take 4 s of a sensor tick meant for every provider
    replay = replay_source("void")
    void = (shared_fixtures / "void" / "bcodmo-nerc-parameter-vocab-void.rdf").read_bytes()
    replay.route("/bcodmo/void.rdf", void.replace(b"http://www.bco-dmo.org/", f"{replay.base}/".encode()),
                 "application/rdf+xml")
    dumps = [f"/NERC/{name}.rdf" for name in ("P01", "P02", "S01", "S02", "S03", "S04", "S05", "S06", "S07", "S25",
                                               "S26", "S27", "S29")]
    for path in dumps:
        replay.route(path, b"", "application/rdf+xml", etag='"1"')
        replay.stall(path, 0.3)
    entry = ProviderEntry("bcodmo", {"void": f"{replay.base}/bcodmo/void.rdf", "allow_private": True})
    found = check_provider(entry, store, ProviderGraphs("bcodmo"), LocalStorage(tmp_path / "storage"),
                           datetime.now(timezone.utc), timeout=(2, 10), probe_seconds=0.5)
    asked = [path for path in replay.paths() if path in dumps]
    assert 1 <= len(asked) <= 2  # none started after the budget: the others cannot say
    assert found.error is None and found.due  # never imported: due, and a dump not asked may have changed
    assert found.run_key.startswith("bcodmo@undated+")
