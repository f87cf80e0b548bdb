"""Apache Jena Fuseki 5.6 (``jena-fuseki-server``, a runnable jar on Maven Central) with one persistent TDB2
dataset ``/ds`` open to updates (without ``--update`` a TDB2 dataset is read-only): SPARQL Query at
``/ds/query``, Update at ``/ds/update``, the Graph Store Protocol at ``/ds/data``.
"""

from __future__ import annotations

import requests

from ingest_assets_tests.support.servers import FAST_START, Server, java_home, launch, maven, ports, wait_ready, workdir

VERSION = "5.6.0"
DATASET = "ds"


def start_fuseki(heap: str = "512m") -> Server:
    """Fuseki with the dataset at ``<url>`` = ``http://127.0.0.1:<port>/ds``."""
    jar = maven(f"org.apache.jena:jena-fuseki-server:{VERSION}")
    work = workdir("fuseki")
    (work / "tdb2").mkdir()
    (port,) = ports(1)
    command = [str(java_home() / "bin" / "java"), f"-Xmx{heap}", *FAST_START, "-jar", str(jar), "--localhost", "--port", str(port),
               "--update", "--tdb2", "--loc", str(work / "tdb2"), f"/{DATASET}"]
    pid, log = launch("fuseki", command, home=work, env={"FUSEKI_BASE": str(work / "run")})
    url = f"http://127.0.0.1:{port}/{DATASET}"
    server = Server("fuseki", url, pid, work, log, {"version": VERSION})

    def ready() -> bool:
        return requests.get(f"http://127.0.0.1:{port}/$/ping", timeout=5).status_code == 200

    return wait_ready(server, ready, timeout=120)
