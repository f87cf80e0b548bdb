"""OpenSearch 2.19 and Elasticsearch 8.19 from their Maven Central test distributions (``integ-test-zip``: the
server and its transport module, no bundled JDK, no plugins), single-node on loopback, 512 MB heap, as
:data:`~.SERVICE_USER` (both refuse to run as root).

OpenSearch also gets ``analysis-common`` (the project's mapping uses its ``asciifolding`` filter): the module's
jar is published on Central and is laid in ``modules/`` with its descriptor. Elasticsearch publishes no such jar,
so its test distribution lacks ``asciifolding``: tests that create the project's index on it swap that one filter
(:func:`without_asciifolding`, used by the recording proxy in :mod:`..elasticsearch`).
"""

from __future__ import annotations

import shutil

import requests

from ingest_assets_tests.support.servers import (
    FAST_START,
    Server,
    hand_over,
    java_home,
    launch,
    locked,
    maven,
    ports,
    unpacked,
    wait_ready,
    workdir,
)

SEARCH_SERVERS = ("opensearch", "elasticsearch")  # the live search servers, as the ``search_backend`` fixture names them
OPENSEARCH_VERSION = "2.19.6"
ELASTICSEARCH_VERSION = "8.19.21"
HEAP = "-Xms512m -Xmx512m"
ANALYSIS_COMMON = f"""\
name=analysis-common
description=Adds "built in" analyzers to OpenSearch.
version={OPENSEARCH_VERSION}
opensearch.version={OPENSEARCH_VERSION}
java.version=11
classname=org.opensearch.analysis.common.CommonAnalysisPlugin
"""


def _opensearch_distribution():
    home = unpacked(maven(f"org.opensearch.distribution.integ-test-zip:opensearch:{OPENSEARCH_VERSION}:zip"))
    module = home / "modules" / "analysis-common"
    jar = maven(f"org.opensearch.plugin:analysis-common:{OPENSEARCH_VERSION}")
    with locked(home.parent / ".modules.lock"):
        if not (module / "plugin-descriptor.properties").exists():
            module.mkdir(mode=0o755, exist_ok=True)
            shutil.copy(jar, module / jar.name)
            (module / jar.name).chmod(0o644)
            (module / "plugin-descriptor.properties").write_text(ANALYSIS_COMMON)
    return home


def _start(name: str, home, conf_env: str, java_env: str, opts_env: str, tmp_env: str, settings: list[str], timeout: float) -> Server:
    work = workdir(name)
    shutil.copytree(home / "config", work / "config")
    options_file = work / "config" / "jvm.options"  # error file and heap dumps into the work folder; no G1, no GC log
    lines = options_file.read_text().replace("logs/", f"{work / 'logs'}/").replace("=data", f"={work / 'data'}")
    options_file.write_text("".join(f"{line}\n" for line in lines.splitlines()
                                    if "G1" not in line and "ReservePercent" not in line
                                    and "InitiatingHeapOccupancy" not in line and "-Xlog:gc" not in line))
    (work / "data").mkdir()
    (work / "logs").mkdir()
    (work / "tmp").mkdir()
    hand_over(work)
    http_port, transport_port = ports(2)
    options = [
        "-Ediscovery.type=single-node", "-Ehttp.host=127.0.0.1", f"-Ehttp.port={http_port}",
        "-Etransport.host=127.0.0.1", f"-Etransport.port={transport_port}",
        f"-Epath.data={work / 'data'}", f"-Epath.logs={work / 'logs'}", *settings,
    ]
    env = {conf_env: str(work / "config"), java_env: str(java_home()), opts_env: " ".join([HEAP, *FAST_START]),
           tmp_env: str(work / "tmp")}
    binary = home / "bin" / name
    pid, log = launch(name, [str(binary), *options], home=work, env=env, as_service=True)
    url = f"http://127.0.0.1:{http_port}"
    server = Server(name, url, pid, work, log)

    def ready() -> bool:
        return requests.get(f"{url}/_cluster/health", params={"wait_for_status": "yellow", "timeout": "1s"},
                            timeout=5).status_code == 200

    return wait_ready(server, ready, timeout)


def start_opensearch() -> Server:
    server = _start("opensearch", _opensearch_distribution(), "OPENSEARCH_PATH_CONF", "OPENSEARCH_JAVA_HOME",
                    "OPENSEARCH_JAVA_OPTS", "OPENSEARCH_TMPDIR", [], timeout=120)
    server.facts["version"] = OPENSEARCH_VERSION
    return server


def start_elasticsearch() -> Server:
    home = unpacked(maven(f"org.elasticsearch.distribution.integ-test-zip:elasticsearch:{ELASTICSEARCH_VERSION}:zip"))
    server = _start("elasticsearch", home, "ES_PATH_CONF", "ES_JAVA_HOME", "ES_JAVA_OPTS", "ES_TMPDIR",
                    ["-Expack.security.enabled=false"], timeout=180)
    server.facts["version"] = ELASTICSEARCH_VERSION
    return server


def without_asciifolding(body: dict) -> dict:
    """An index body with the ``asciifolding`` filter taken out of every custom analyzer: Elasticsearch's test
    distribution has no ``analysis-common`` module and refuses the project's mapping with it (the swap is the one
    difference between what the tests send to Elasticsearch and what the project sends)."""
    analyzers = body.get("settings", {}).get("index", {}).get("analysis", {}).get("analyzer", {})
    for analyzer in analyzers.values():
        if "asciifolding" in analyzer.get("filter", []):
            analyzer["filter"] = [f for f in analyzer["filter"] if f != "asciifolding"]
    return body
