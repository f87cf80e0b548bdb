"""Linked-data providers as recorded (``replays/void``), replayed whole on 127.0.0.1: the MBLWHOI Library's GeoLink
VoID (an ``rdf:nodeID`` dataset, four RDF/XML dumps)."""

from __future__ import annotations

import pytest

from ingest_assets.core.errors import ParseError
from ingest_assets.core.http import HttpClient
from ingest_assets.linked_data.graphs import ProviderGraphs
from ingest_assets.linked_data.importer import ProviderSource, import_update
from ingest_assets.linked_data.oxigraph import OxigraphStore

MBL_DUMPS = ("affiliation", "authority", "award", "dataset")


def mbl(replay, void: str = "mbl-void-v1.rdf"):
    replay.file("/mbl/void.rdf", void, "application/rdf+xml")
    for name in MBL_DUMPS:
        replay.file(f"/mbl/dumps/{name}.rdf", f"mbl-dumps/{name}.rdf", "application/rdf+xml")
    return replay.base + "/mbl/void.rdf"


def import_once(url, store, provider="mbl"):
    http = HttpClient(allow_private=True, retries=0, timeout=(2, 10))
    return import_update(ProviderSource(provider, url, allow_private=True), store, http, ProviderGraphs(provider))


@pytest.fixture
def store(tmp_path):
    with OxigraphStore(tmp_path / "oxigraph", writable=True) as store:
        yield store


def test_a_void_dataset_is_named_by_its_rdf_node_id(replay_source, store):
    replay = replay_source("void")
    result = import_once(mbl(replay), store)
    assert result.strategy == "replace" and result.void.dataset == "_:MBLWHOILibrary_Repository_VoID_Document"


def test_a_truncated_rdfxml_dump_is_a_parse_error_not_the_triples_before_the_cut(replay_source, store):
    replay = replay_source("void")
    url = mbl(replay)
    award = replay.read("mbl-dumps/award.rdf")
    replay.cut("/mbl/dumps/award.rdf", award.index(b"</rdf:Description>"))  # injected: cut inside the document
    with pytest.raises(ParseError, match="truncated") as caught:
        import_once(url, store)
    assert caught.value.provider == "mbl" and caught.value.file == f"{replay.base}/mbl/dumps/award.rdf"
    assert ProviderGraphs("mbl").read_state(store).current is None
