"""The SPARQL endpoint store's naming of servers and its bounded loads, against the live Fuseki."""

from __future__ import annotations

import uuid
from urllib.parse import urlsplit

import pytest

from ingest_assets.core.errors import ConfigError
from ingest_assets.core.settings import Settings
from ingest_assets.defs.linked_data.resources import TripleStoreResource
from ingest_assets.linked_data.sparql_endpoint import SparqlEndpointStore, endpoint_urls
from ingest_assets.linked_data.triplestore import iri
from ingest_assets_tests.support.servers.proxy import RecordingProxy


def test_servers_are_named_by_product_and_base_url():
    assert endpoint_urls("http://127.0.0.1:7878") == (
        "http://127.0.0.1:7878/query", "http://127.0.0.1:7878/update", "http://127.0.0.1:7878/store")
    assert endpoint_urls("fuseki+https://triples.example.org/ds/") == (
        "https://triples.example.org/ds/query", "https://triples.example.org/ds/update", "https://triples.example.org/ds/data")
    assert endpoint_urls("graphdb+http://db:7200/repositories/geolink") == (
        "http://db:7200/repositories/geolink", "http://db:7200/repositories/geolink/statements",
        "http://db:7200/repositories/geolink/rdf-graphs/service")
    assert endpoint_urls("virtuoso+http://db:8890") == (
        "http://db:8890/sparql", "http://db:8890/sparql", "http://db:8890/sparql-graph-crud")
    with pytest.raises(ConfigError, match="not a SPARQL server URL.*fuseki"):
        endpoint_urls("blazegraph+http://db:9999")


def test_settings_name_a_server_by_its_three_urls_or_none():
    urls = {"INGEST_SPARQL_QUERY_URL": "http://db/sparql", "INGEST_SPARQL_UPDATE_URL": "http://db/update",
            "INGEST_SPARQL_GRAPH_STORE_URL": "http://db/gsp"}
    settings = Settings.from_env({"INGEST_TRIPLESTORE": "http://db", **urls, "INGEST_SPARQL_MAX_REQUEST_BYTES": "1000"})
    resource = TripleStoreResource.from_settings(settings)
    with resource.get_client(writable=True) as store:
        assert (store.query_url, store.update_url, store.graph_store_url, store.max_request_bytes) == (
            "http://db/sparql", "http://db/update", "http://db/gsp", 1000)
    with pytest.raises(ConfigError, match="INGEST_SPARQL_UPDATE_URL missing"):
        Settings.from_env({k: v for k, v in urls.items() if k != "INGEST_SPARQL_UPDATE_URL"})
    named = TripleStoreResource.from_settings(Settings.from_env({"INGEST_TRIPLESTORE": "fuseki+http://db:3030/ds"}))
    with named.get_client(writable=True) as store:
        assert store.graph_store_url == "http://db:3030/ds/data"


def _dump(path, people: int) -> int:
    """N-Triples of ``people`` subjects, each with a blank-node address (two triples) and a blank-node chain of
    two notes; blank-node lines come interleaved with the others, as a dump has them. Returns the line count."""
    lines = []
    for n in range(people):
        person = f"<http://example.org/person/{n}>"
        lines += [
            f'{person} <http://xmlns.com/foaf/0.1/name> "Person {n} with a long enough name to fill requests" .',
            f"{person} <http://schema.org/address> _:addr{n} .",
            f'_:addr{n} <http://schema.org/addressLocality> "Town {n % 7}" .',
            f'{person} <http://xmlns.com/foaf/0.1/mbox> <mailto:p{n}@example.org> .',
            f"_:note{n}a <http://example.org/next> _:note{n}b .",
            f'_:note{n}b <http://example.org/text> "_:not-a-blank-node {n}" .',
            f"{person} <http://example.org/notes> _:note{n}a .",
        ]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return len(lines)


def test_a_load_goes_in_bounded_requests_and_keeps_blank_nodes_whole(fuseki_server, tmp_path):
    proxy = RecordingProxy(fuseki_server.url)
    try:
        limit = 2048
        base = proxy.url + urlsplit(fuseki_server.url).path
        store = SparqlEndpointStore.for_server(f"fuseki+{base}", max_request_bytes=limit)
        dump = tmp_path / "dump.nt"
        lines = _dump(dump, 40)
        graph = f"urn:x-test:{uuid.uuid4().hex}"
        store.load(graph, dump)

        posts = proxy.calls("POST", r".*/ds/data")
        assert len(posts) > 5 and all(len(p.body) <= limit for p in posts) and all(p.status in (200, 201) for p in posts)
        sent = [line for p in posts for line in p.body.decode().splitlines()]
        assert sorted(sent) == sorted(dump.read_text().splitlines())  # every line once
        for group in [(f"_:addr{n} ",) for n in range(40)] + [(f"_:note{n}a ", f"_:note{n}b ") for n in range(40)]:
            holding = {i for i, p in enumerate(posts) for line in p.body.decode().splitlines()
                       if any(label in line for label in group)}
            assert len(holding) == 1  # the triples joined by blank nodes travel in one request
        assert store.count(graph) == lines
        rows = store.select(f"SELECT (COUNT(DISTINCT ?a) AS ?n) WHERE {{ GRAPH {iri(graph)} {{ "
                            "?p <http://schema.org/address> ?a . ?a <http://schema.org/addressLocality> ?t }}")
        assert int(rows[0]["n"].value) == 40  # each person still reaches their own address
        chained = store.select(f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH {iri(graph)} {{ ?p <http://example.org/notes> "
                               "?a . ?a <http://example.org/next> ?b . ?b <http://example.org/text> ?t }}")
        assert int(chained[0]["n"].value) == 40
        store.drop(graph)
    finally:
        proxy.close()


def test_a_plain_fuseki_dataset_url_is_recognised(fuseki_server, tmp_path):
    """INGEST_TRIPLESTORE=http://host:3030/ds (no ``fuseki+``): its server answers Fuseki's /$/ping, so the store
    takes Fuseki's paths; Oxigraph's Graph Store path answered the first import with HTTP 405."""
    resource = TripleStoreResource.from_settings(Settings.from_env({"INGEST_TRIPLESTORE": fuseki_server.url}))
    with resource.get_client(writable=True) as store:
        assert store.graph_store_url == f"{fuseki_server.url}/data"
        dump = tmp_path / "dump.nt"
        lines = _dump(dump, 3)
        graph = f"urn:x-test:{uuid.uuid4().hex}"
        store.load(graph, dump)
        assert store.count(graph) == lines
        store.drop(graph)
    with TripleStoreResource(location="http://127.0.0.1:9/ds").get_client(writable=True) as unanswered:
        assert unanswered.graph_store_url == "http://127.0.0.1:9/ds/store"  # not asked twice: Oxigraph's layout
