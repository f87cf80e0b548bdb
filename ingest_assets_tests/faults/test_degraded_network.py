"""Providers behind a degraded link (support.netns: their own network namespace, 1 % loss each way, 4 Mbit/s, 40 ms
+- 15 ms) and a cut in the middle of the transfer: an OAI-PMH harvest resumes from its checkpoint to exact counts, a
linked-data dump download and a dataset's files are fetched again within the client's retry bound to exact digests.
Recovery times are figures."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from datetime import date, datetime, timezone

import pytest
from warcio.archiveiterator import ArchiveIterator

from ingest_assets.core.errors import FetchError
from ingest_assets.core.http import HttpClient
from ingest_assets.core.registry import load_registry
from ingest_assets.core.sql import make_engine
from ingest_assets.datasets.ingest import make_context, ingest_request
from ingest_assets.datasets.model import IngestRequest
from ingest_assets.demo.samples import sample_records
from ingest_assets.demo.site import DATASET_PID
from ingest_assets.linked_data.graphs import ProviderGraphs
from ingest_assets.linked_data.importer import ProviderSource, import_update
from ingest_assets.linked_data.oxigraph import OxigraphStore
from ingest_assets.records.harvest import StorageCheckpoint, harvest_records
from ingest_assets.storage import LocalStorage, layout
from ingest_assets.storage.activities import RecordSource, RecordStream, write_activity
from ingest_assets.storage.avro import ORIGINAL_RECORD
from ingest_assets_tests.support import wait_for
from ingest_assets_tests.support.netns import Impairment, ProviderLink

DAY = date(2026, 1, 15)
RECORDS = 600  # over three days: ~200 on DAY, 8 OAI-PMH pages of 25
DUMP_TRIPLES = 40_000  # ~3 MB of N-Triples: some 6 s at 4 Mbit/s
DATAFILE_BYTES = 2 * 1024 * 1024  # a dataset file of some 4 s at 4 Mbit/s

SITE = """
import hashlib, json, sys
from datetime import date
from urllib.parse import parse_qs
from ingest_assets.core.wsgi import WsgiServer
from ingest_assets.demo.samples import sample_records
from ingest_assets.demo.site import DATASET_PID, dataset_api, make_site

base = sys.argv[2]  # the URL the host reaches the provider at
site = make_site(sample_records(count=%(records)d, day=date(2026, 1, 15)), base)
dump = "".join(f"<http://x.example/s{n}> <http://x.example/p> \\"v{n}\\" .\\n" for n in range(%(triples)d)).encode()
void = (f"<#d> a <http://rdfs.org/ns/void#Dataset> ; <http://purl.org/dc/terms/modified> \\"2026-02-01\\" ; "
        f"<http://rdfs.org/ns/void#feature> <http://schema.geolink.org/dev/voc/harvester#FullDump> ; "
        f"<http://rdfs.org/ns/void#dataDump> <{base}/big/dump.nt> .\\n").encode()
# the demo dataset with a third, larger file (Dataverse file id 103), declared with its size and digests
datafile = b"".join(hashlib.sha256(str(n).encode()).digest() for n in range(%(datafile_blocks)d))
answer = json.loads(dataset_api())
answer["data"]["latestVersion"]["files"].append({"label": "scans.bin", "restricted": False, "dataFile": {
    "id": 103, "filename": "scans.bin", "filesize": len(datafile), "contentType": "application/octet-stream",
    "md5": hashlib.md5(datafile).hexdigest(), "checksum": {"type": "SHA-256", "value": hashlib.sha256(datafile).hexdigest()}}})
api = json.dumps(answer).encode()
served = {"/big/dump.nt": (dump, "application/n-triples"), "/big/void.ttl": (void, "text/turtle"),
          "/api/access/datafile/103": (datafile, "application/octet-stream")}

def app(environ, start_response):
    body, kind = served.get(environ["PATH_INFO"], (None, None))
    if environ["PATH_INFO"] == "/api/datasets/:persistentId/" and \\
            parse_qs(environ.get("QUERY_STRING", "")).get("persistentId") == [DATASET_PID]:
        body, kind = api, "application/json"
    if body is None:
        return site(environ, start_response)
    start_response("200 OK", [("Content-Type", kind), ("Content-Length", str(len(body)))])
    return [body]

WsgiServer("127.0.0.1", int(sys.argv[1])).run(app)
""" % {"records": RECORDS, "triples": DUMP_TRIPLES, "datafile_blocks": DATAFILE_BYTES // 32}


@pytest.fixture(scope="module")
def provider():
    link = ProviderLink(SITE, Impairment())
    yield link
    link.close()


def _registry(tmp_path, url: str):
    path = tmp_path / "registry.yaml"
    path.write_text(f"demo: {{harvest: {{type: oai, endpoint: '{url}/oai', metadata_prefix: oai_dc, allow_private: true}},"
                    " mapping: oai_dc}\n")
    return load_registry(path)["demo"]


def _harvest(storage, entry, started):
    window = (datetime(2026, 1, 15, tzinfo=timezone.utc), datetime(2026, 1, 16, tzinfo=timezone.utc))
    run = harvest_records(entry, started=started, window=window, http=HttpClient(allow_private=True),
                          checkpoint=StorageCheckpoint(storage, "demo"))
    result = write_activity(storage, RecordStream(run, started=started, logs=run.logs, summary=run.metadata), provider="demo",
                            activity="harvest", day=DAY, started=started, schema=ORIGINAL_RECORD, partition="2026-01-15|demo")
    return result, run


def test_an_oai_harvest_cut_mid_list_resumes_from_its_checkpoint_to_exact_counts(provider, tmp_path, figures):
    storage, entry = LocalStorage(tmp_path / "storage"), _registry(tmp_path, provider.url)
    expected = sorted(r.identifier for r in sample_records(count=RECORDS, day=DAY) if r.datestamp.date() == DAY)
    checkpoint = StorageCheckpoint(storage, "demo")
    outcome = {}

    def first_run():
        try:
            _harvest(storage, entry, datetime(2026, 1, 15, 8, tzinfo=timezone.utc))
        except FetchError as exc:
            outcome["error"] = exc

    worker = threading.Thread(target=first_run)
    began = time.monotonic()
    worker.start()
    wait_for("the harvest's third page to be checkpointed", lambda: (checkpoint.load() or {}).get("page", 0) >= 3, 120)
    provider.cut()
    cut_at = time.monotonic()
    worker.join(120)
    error = outcome["error"]
    assert error.provider == "demo" and error.retryable and provider.url in str(error)
    assert layout.complete_outputs(storage, "demo", "harvest") == []  # the failed run's output is not visible
    pages_before = checkpoint.load()["page"]
    time.sleep(2)
    provider.restore()
    restored = time.monotonic()
    result, run = _harvest(storage, entry, datetime(2026, 1, 15, 9, tzinfo=timezone.utc))
    done = time.monotonic()
    ids = [record["id"] for record in RecordSource(storage, result.output)]
    assert sorted(ids) == expected and len(ids) == len(set(ids))  # every record once
    assert run.stats.resumed and checkpoint.load() is None  # resumed from the checkpoint, which is then cleared
    logged = storage.read_bytes(f"{result.output.folder}/{result.output.log('harvest-requests.jsonl')}")
    spooled = [line["spooled_pages"] for line in map(json.loads, logged.splitlines()) if "spooled_pages" in line]
    assert spooled == [pages_before]  # the pages before the cut came from the spool, not from the provider again
    figures(records=len(ids), pages_before_cut=pages_before, first_run_seconds=round(cut_at - began, 1),
            failed_after_cut_seconds=round(restored - cut_at - 2, 1), resumed_run_seconds=round(done - restored, 1))


def test_a_dump_download_cut_mid_body_is_fetched_again_to_an_exact_graph(provider, tmp_path, figures):
    store = OxigraphStore(tmp_path / "oxigraph", writable=True)
    source, graphs = ProviderSource("big", f"{provider.url}/big/void.ttl", allow_private=True), ProviderGraphs("big")
    http = HttpClient(allow_private=True)  # 3 retries, 0.5 s back-off doubling: the bound a cut must stay within
    outcome = {}

    def cut_for(seconds: float):
        provider.cut()
        time.sleep(seconds)
        provider.restore()

    def watch():  # the cut comes one second into the dump's body
        wait_for("the dump download to start", lambda: any(tmp_path.glob("linked-data-*/1.download")), 60)
        time.sleep(1)
        outcome["cut_at"] = time.monotonic()
        cut_for(1.5)

    watcher = threading.Thread(target=watch)
    watcher.start()
    began = time.monotonic()
    result = import_update(source, store, http, graphs, tmp_dir=tmp_path)
    done = time.monotonic()
    watcher.join(30)
    assert "cut_at" in outcome and result.strategy == "replace"
    assert store.count(graphs.read_state(store).current) == DUMP_TRIPLES
    dump = "".join(f"<http://x.example/s{n}> <http://x.example/p> \"v{n}\" .\n" for n in range(DUMP_TRIPLES)).encode()
    assert [f.sha256 for f in result.files] == [hashlib.sha256(dump).hexdigest()]
    figures(dump_bytes=len(dump), cut_seconds=1.5, import_seconds=round(done - began, 1),
            recovered_after_cut_seconds=round(done - outcome["cut_at"], 1))
    store.close()


def test_a_dataset_file_cut_mid_body_is_fetched_again_to_its_declared_digests(provider, tmp_path, figures):
    """The demo dataset's third file (2 MB at 4 Mbit/s) cut one second into its body for 1.5 s: the request ends
    ``success`` with every file verified against the sizes and digests the platform declared, stored once in its WARC."""
    datafile = b"".join(hashlib.sha256(str(n).encode()).digest() for n in range(DATAFILE_BYTES // 32))
    storage, engine = LocalStorage(tmp_path / "storage"), make_engine(f"sqlite:///{tmp_path / 'results.db'}")
    ctx = make_context(storage, engine, allow_private=True, workdir=tmp_path / "work")
    ctx.workdir.mkdir()
    outcome = {}

    def watch():  # index 2 of the manifest: the large file
        wait_for("the dataset file's download to start", lambda: any(ctx.workdir.glob("dataset-*/00002")), 60)
        time.sleep(1)
        outcome["cut_at"] = time.monotonic()
        provider.cut()
        time.sleep(1.5)
        provider.restore()

    watcher = threading.Thread(target=watch)
    watcher.start()
    request = IngestRequest(ingest_type="dataset", base_url=f"{provider.url}/dataset.xhtml?persistentId={DATASET_PID}")
    result = ingest_request(request, ctx)
    done = time.monotonic()
    watcher.join(30)
    assert "cut_at" in outcome and result.status == "success", (result.status, result.error_message)
    entry = next(f for f in result.manifest if f["path"] == "scans.bin")
    assert (entry["size"], entry["sha256"]) == (len(datafile), hashlib.sha256(datafile).hexdigest())
    [warc] = [k for k in storage.list_keys("") if k.endswith(".warc.gz")]  # the web-fileset strategy: one WARC
    with storage.open_read(warc) as stream:
        bodies = [r.content_stream().read() for r in ArchiveIterator(stream)
                  if r.rec_type == "response" and r.rec_headers.get_header("WARC-Target-URI").endswith("/datafile/103")]
    assert bodies == [datafile]  # stored once, whole
    figures(file_bytes=len(datafile), cut_seconds=1.5, recovered_after_cut_seconds=round(done - outcome["cut_at"], 1))
    engine.dispose()
