"""kill -9 in the middle of a harvest write, a linked-data import and a dataset download: readers see the old
state or the new one, never a mix, and a rerun completes with exact counts. Each worker is a real process
running the real entry point, killed while a local server holds its request open."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

from ingest_assets.demo.oai_server import make_app
from ingest_assets.demo.samples import sample_records
from ingest_assets.demo.site import DATASET_PID, dataset_files, lod_dump, lod_void, make_site
from ingest_assets.storage import LocalStorage, layout
from ingest_assets.storage.activities import RecordSource
from ingest_assets_tests.support import Worker, wait_for

DAY = date(2026, 1, 15)
CLI = str(Path(sys.executable).parent / "ingest-assets")


def test_a_harvest_killed_mid_write_leaves_the_last_complete_output_and_a_rerun_is_exact(serve, tmp_path):
    records = sample_records(day=DAY)
    gate, base = serve(lambda base: make_app(records, f"{base}/oai", batch_size=5))
    registry = tmp_path / "registry.yaml"
    registry.write_text(f"demo: {{harvest: {{type: oai, endpoint: '{base}/oai', metadata_prefix: oai_dc, allow_private: true}},"
                        " mapping: oai_dc, schedule: false}\n")
    (tmp_path / "dagster").mkdir()
    env = {"DAGSTER_HOME": str(tmp_path / "dagster"), "INGEST_HOME": str(tmp_path / "home"), "INGEST_REGISTRY": str(registry),
           "DAGSTER_TELEMETRY_DISABLED": "1"}
    harvest = [CLI, "harvest", "demo", "--date", DAY.isoformat()]
    assert subprocess.run(harvest, env={**os.environ, **env}, capture_output=True, timeout=300).returncode == 0
    storage = LocalStorage(tmp_path / "home" / "storage")
    [old] = layout.complete_outputs(storage, "demo", "harvest")
    expected = sorted(r.identifier for r in records if r.datestamp.date() == DAY)
    visible_before = sorted(storage.list_keys("demo/harvest"))

    gate.hang(lambda environ: "resumptionToken" in environ.get("QUERY_STRING", ""))  # page 2 never comes
    worker = Worker(f"import sys; from ingest_assets.cli.main import main; sys.exit(main({harvest[1:]!r}))", env)
    wait_for("the harvest to ask for page 2", gate.reached.is_set, 120)
    time.sleep(0.3)  # page 1's records are in the staged part file
    worker.kill()
    assert layout.complete_outputs(storage, "demo", "harvest") == [old]
    assert sorted(storage.list_keys("demo/harvest")) == visible_before  # nothing half-written is visible

    gate.open()
    rerun = subprocess.run(harvest, env={**os.environ, **env}, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    newest = max(layout.complete_outputs(storage, "demo", "harvest"), key=lambda o: o.started)
    assert newest != old and sorted(r["id"] for r in RecordSource(storage, newest)) == expected  # each record once


LD_WORKER = """
import sys
from ingest_assets.core.http import HttpClient
from ingest_assets.linked_data.graphs import ProviderGraphs
from ingest_assets.linked_data.importer import ProviderSource, cleanup, import_update
from ingest_assets.linked_data.oxigraph import OxigraphStore
store = OxigraphStore(sys.argv[1], writable=True)
graphs = ProviderGraphs("lod")
result = import_update(ProviderSource("lod", sys.argv[2], allow_private=True), store, HttpClient(allow_private=True), graphs)
cleanup(store, graphs)
print(result.strategy, flush=True)
"""


def _current_triples(path: Path) -> int:
    from ingest_assets.linked_data.graphs import ProviderGraphs
    from ingest_assets.linked_data.oxigraph import OxigraphStore

    store = OxigraphStore(path, writable=False)
    current = ProviderGraphs("lod").read_state(store).current
    return store.count(current) if current else 0


def test_a_linked_data_import_killed_mid_way_keeps_the_old_graph_whole(serve, tmp_path):
    versions = {"modified": "2026-01-10", "dump": b""}

    def site(base):
        versions["dump"] = lod_dump(base)

        def app(environ, start_response):
            if environ["PATH_INFO"] == "/lod/void.ttl":
                body = lod_void(base).replace(b"2026-01-10", versions["modified"].encode())
            else:
                body = versions["dump"]
            start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
            return [body]

        return app

    gate, base = serve(site)
    store = tmp_path / "oxigraph"
    code = LD_WORKER.replace("sys.argv[1]", repr(str(store))).replace("sys.argv[2]", repr(f"{base}/lod/void.ttl"))
    assert Worker(code, {}).finish()[0] == 0
    assert _current_triples(store) == 29

    big = 200_000  # a new version large enough to be killed while it is staged or loaded
    versions["modified"] = "2026-02-01"
    versions["dump"] = "".join(f"<http://x.example/s{n}> <http://x.example/p> \"v{n}\" .\n" for n in range(big)).encode()
    gate.hang(lambda environ: environ["PATH_INFO"] == "/lod/dump.nt", send_first=len(versions["dump"]))
    worker = Worker(code, {})
    wait_for("the new dump to be sent", gate.reached.is_set, 120)
    time.sleep(1.5)
    worker.kill()
    assert _current_triples(store) == 29  # the old version, whole

    gate.open()
    status, out, err = Worker(code, {}).finish()
    assert status == 0 and out.strip() == "replace", err[-2000:]
    assert _current_triples(store) == big


DATASET_WORKER = """
import sys
from ingest_assets.datasets.ingest import make_context, run_requests
from ingest_assets.core.sql import make_engine
from ingest_assets.storage import LocalStorage
ctx = make_context(LocalStorage(sys.argv[1]), make_engine(sys.argv[2]), allow_private=True)
with open(sys.argv[3]) as lines, open(sys.argv[4], "w") as out:
    run_requests(lines, ctx, sys.argv[3], out)
"""


def test_a_dataset_download_killed_mid_file_archives_nothing_and_a_rerun_is_exact(serve, tmp_path):
    gate, base = serve(lambda base: make_site(sample_records(day=DAY), base))
    url = f"{base}/dataset.xhtml?persistentId={DATASET_PID}"
    requests = tmp_path / "requests.jsonl"
    requests.write_text(json.dumps({"ingest_type": "dataset", "base_url": url}) + "\n")
    database = f"sqlite:///{tmp_path / 'results.sqlite3'}"
    args = [str(tmp_path / "storage"), database, str(requests), str(tmp_path / "results.jsonl")]
    code = DATASET_WORKER
    for n, value in enumerate(args, 1):
        code = code.replace(f"sys.argv[{n}]", repr(value))

    gate.hang(lambda environ: environ["PATH_INFO"] == "/api/access/datafile/102", send_first=10)  # the second file
    worker = Worker(code, {})
    wait_for("the second file's download to start", gate.reached.is_set, 120)
    worker.kill()
    storage = LocalStorage(tmp_path / "storage")
    assert [k for k in storage.list_keys("") if k.startswith(("_datasets-web", "_datasets-items"))] == []
    from ingest_assets.datasets.results import ResultStore
    from ingest_assets.core.sql import make_engine

    assert ResultStore(make_engine(database)).get("dataset", url) is None  # no result row, so it is retried

    gate.open()
    status, _out, err = Worker(code, {}).finish()
    assert status == 0, err[-2000:]
    result = ResultStore(make_engine(database)).get("dataset", url)
    assert result.status == "success" and result.file_count == len(dataset_files())
    stored = [k for k in storage.list_keys("") if k.startswith(("_datasets-web", "_datasets-items"))]
    assert stored and len({k.split("/")[1] for k in stored}) == 1  # one archive of the dataset, not two
