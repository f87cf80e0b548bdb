"""``ingest-assets demo`` against the production backends a hub runs: OpenSearch (``INGEST_SEARCH``), Fedora 6.1
(``INGEST_REPOSITORY``, ``FEDORA_USER``/``FEDORA_PASSWORD``) and Fuseki (``INGEST_TRIPLESTORE``), all live, with
every outbound HTTP request of the platform sent to a proxy that does not exist (only loopback is reachable)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import requests

from ingest_assets_tests.support import free_port

COMMAND = str(Path(sys.executable).parent / "ingest-assets")


def _indices(url: str) -> set[str]:
    return {row["index"] for row in requests.get(f"{url}/_cat/indices", params={"format": "json"}, timeout=30).json()}


@pytest.mark.timeout(900)  # three servers to start, then the whole demo
def test_the_demo_fills_opensearch_fedora_and_fuseki(tmp_path, opensearch_server, fedora_server, fuseki_server,
                                                     live_servers):
    search, fuseki = opensearch_server.url, fuseki_server.url
    repository = f"{fedora_server.url}/demo-{uuid.uuid4().hex[:8]}"  # a container below the REST root
    nowhere = f"http://127.0.0.1:{free_port()}"  # no network beyond this machine: any other host fails
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INGEST_", "DAGSTER_", "FEDORA_"))}
    env.update(INGEST_HOME=str(tmp_path / ".ingest"), DAGSTER_HOME=str(tmp_path), INGEST_SEARCH=search,
               INGEST_REPOSITORY=repository, FEDORA_USER=fedora_server.facts["user"],
               FEDORA_PASSWORD=fedora_server.facts["password"], INGEST_TRIPLESTORE=f"fuseki+{fuseki}",
               HTTP_PROXY=nowhere, HTTPS_PROXY=nowhere, NO_PROXY="127.0.0.1,localhost")
    with live_servers.exclusive("opensearch-fixed-names"):  # the demo's indices have fixed names
        _run_demo(env, tmp_path, search, fedora_server, fuseki, repository)


def _run_demo(env, tmp_path, search, fedora_server, fuseki, repository) -> None:
    before = _indices(search)
    try:
        done = subprocess.run([COMMAND, "demo"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
        assert "FAILED" not in done.stdout

        # the search index: the demo's records behind the alias, found by a word of their titles
        count = requests.get(f"{search}/dpla-map4/_count", timeout=30).json()["count"]
        assert count > 0
        found = requests.post(f"{search}/dpla-map4/_search", timeout=30,
                              json={"query": {"simple_query_string": {"query": "millbrook"}}}).json()
        assert found["hits"]["hits"]
        searched = subprocess.run([COMMAND, "search", "Millbrook"], cwd=tmp_path, env=env, capture_output=True,
                                  text=True, timeout=120)
        assert searched.returncode == 0 and "Millbrook" in searched.stdout
        # the ResourceSync index on the same server: the demo provider's item documents and changes
        assert requests.get(f"{search}/resourcesync-change/_count", timeout=30).json()["count"] >= count

        # Fedora: the wiki's objects in the repository container, with their Best_Quality_URI as a triple
        auth = (fedora_server.facts["user"], fedora_server.facts["password"])
        listing = requests.get(repository, auth=auth, headers={"Accept": "application/n-triples"}, timeout=30)
        members = [line.split()[2].strip("<>") for line in listing.text.splitlines()
                   if "<http://www.w3.org/ns/ldp#contains>" in line]
        assert members
        member = requests.get(members[0], auth=auth, headers={"Accept": "text/turtle"}, timeout=30).text
        assert "http://www.keytonature.eu/k2n#Best_Quality_URI" in member or "k2n:Best_Quality_URI" in member

        # Fuseki: the provider graph and its pointer in the metadata graph
        rows = requests.get(f"{fuseki}/query", timeout=30, headers={"Accept": "application/sparql-results+json"},
                            params={"query": "SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g"})
        graphs = {b["g"]["value"]: int(b["n"]["value"]) for b in rows.json()["results"]["bindings"]}
        assert any("riverlod" in g and n > 10 for g, n in graphs.items()), graphs
    finally:
        for name in _indices(search) - before:
            requests.delete(f"{search}/{name}", timeout=30)
