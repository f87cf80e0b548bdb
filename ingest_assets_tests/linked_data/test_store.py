"""The embedded store's single-writer rule, and the SPARQL each backend is sent."""

import threading

import pytest
from pyoxigraph import NamedNode

from ingest_assets.core.errors import IngestError
from ingest_assets.linked_data.oxigraph import OxigraphStore
from ingest_assets.linked_data.triplestore import delete_subjects_sparql, iri


def test_second_writer_waits_then_gets_the_store(tmp_path):
    first = OxigraphStore(tmp_path / "store", writable=True)
    with pytest.raises(IngestError, match="cannot open the triple store for writing") as caught:
        OxigraphStore(tmp_path / "store", writable=True, wait_seconds=0.2)
    assert caught.value.retryable
    timer = threading.Timer(0.3, first.close)
    timer.start()
    second = OxigraphStore(tmp_path / "store", writable=True, wait_seconds=10)  # waits for the release
    timer.join()
    second.update("INSERT DATA { GRAPH <urn:g> { <urn:s> <urn:p> 1 } }")
    with OxigraphStore(tmp_path / "store", writable=False) as snapshot:  # readers beside the writer
        assert snapshot.count("urn:g") == 1


def test_reader_of_a_store_never_written_sees_nothing(tmp_path):
    with OxigraphStore(tmp_path / "absent", writable=False) as snapshot:
        assert snapshot.count("urn:g") == 0
    assert not (tmp_path / "absent").exists()


def test_graph_names_cannot_inject_sparql():
    with pytest.raises(ValueError):
        iri("urn:g> } ; DROP ALL ; INSERT DATA { <urn:x")
    text = delete_subjects_sparql("urn:g", [NamedNode("https://example.org/a"), NamedNode("https://example.org/b")])
    assert "VALUES ?s { <https://example.org/a> <https://example.org/b> }" in text


def test_blank_subjects_are_dropped_with_their_graph(tmp_path):
    with OxigraphStore(tmp_path / "store", writable=True) as store:
        store.update("INSERT DATA { GRAPH <urn:g> { <urn:s> <urn:p> _:b . _:b <urn:q> 1 . _:c <urn:q> 2 } }")
        store.update("INSERT DATA { GRAPH <urn:other> { <urn:s> <urn:p> 3 } }")
        store.drop("urn:g")
        assert store.count("urn:g") == 0 and store.count("urn:other") == 1


def test_empty_store_folder_reads_as_an_empty_store(tmp_path):
    mount = tmp_path / "store"
    mount.mkdir()  # a freshly mounted volume: the folder exists, RocksDB's files do not
    reader = OxigraphStore(mount, writable=False)
    assert reader.select("SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }") == []
    reader.close()
    writer = OxigraphStore(mount, writable=True)
    writer.update('INSERT DATA { GRAPH <http://g> { <http://s> <http://p> "o" } }')
    writer.close()
    assert len(OxigraphStore(mount, writable=False).select("SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }")) == 1
