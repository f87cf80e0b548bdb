"""PostgreSQL restarted or down in the middle of a repository ingest, a dataset batch and a Dagster run on the
PostgreSQL instance (a server of the test's own, ``pg_ctl restart -m fast`` / ``stop``: every connection dropped):
nothing ingested twice, nothing skipped, the watchdog and the results table consistent afterwards, and a failure
names the database (a DatabaseError), never a raw driver traceback."""

from __future__ import annotations

import io
import json
import os
import subprocess
import threading
import time
from datetime import datetime, timedelta, timezone

import dagster as dg
import pytest
from sqlalchemy import func, select

from ingest_assets.core.errors import DatabaseError
from ingest_assets.core.http import HttpClient
from ingest_assets.core.sql import make_engine
from ingest_assets.datasets.ingest import make_context, run_requests
from ingest_assets.datasets.results import ResultStore
from ingest_assets.demo.samples import sample_records
from ingest_assets.demo.site import DATASET_PID, make_site
from ingest_assets.repository.bookkeeping import Bookkeeping
from ingest_assets.repository.index import ObjectIndex
from ingest_assets.repository.ingest import IngestSettings, RepositoryIngest
from ingest_assets.repository.ocfl import OcflRepository
from ingest_assets.repository.pids import pid_from_uri
from ingest_assets.repository.tables import objects
from ingest_assets.repository.template_index import TemplateIndexClient
from ingest_assets.repository.validation import load_vocabularies
from ingest_assets.storage import LocalStorage, layout
from ingest_assets.storage.activities import RecordSource
from ingest_assets_tests.support import wait_for
from ingest_assets_tests.support.daemon import BIN, ROOT, DaemonProcess

WIKI = "http://www.keytonature.eu/wiki/"
COLLECTIONS = 8
MEMBERS = 3


def _collections(now: datetime) -> list[dict[str, str]]:
    stamp = (now - timedelta(minutes=30)).strftime("%Y-%m-%d %H:%M:%S")
    records = []
    for c in range(COLLECTIONS):
        name = f"Collection {c:02d}"
        common = {"TemplateName": "Metadata", "BaseURL": WIKI, "Modified": stamp, "Harvested": stamp, "Collection Page": name}
        records.append({**common, "PageName": name, "Type": "Collection", "Title": name})
        records += [{**common, "PageName": f"{name} item {m}", "Type": "Sound", "Title": f"Item {m}",
                     "Best Quality URI": f"http://snd.example.org/{c}/{m}.mp3"} for m in range(MEMBERS)]
    return records


def _service(url: str, engine, tmp_path) -> RepositoryIngest:
    return RepositoryIngest(IngestSettings(source=url, provider="k2n", default_language="de"),
                            source=TemplateIndexClient(url, HttpClient(allow_private=True, retries=0), provider="k2n"),
                            repository=OcflRepository(tmp_path / "ocfl"), index=ObjectIndex(engine),
                            bookkeeping=Bookkeeping(engine), vocabularies=load_vocabularies(),
                            storage=LocalStorage(tmp_path / "storage"))


def _check_exact(engine, tmp_path) -> None:
    """Every collection and member in the index once, live, written once (OCFL v1), the watchdog gone."""
    index, repository = ObjectIndex(engine), OcflRepository(tmp_path / "ocfl")
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(objects)).scalar() == COLLECTIONS * (MEMBERS + 1)
    for c in range(COLLECTIONS):
        pid = pid_from_uri(WIKI + f"Collection_{c:02d}")
        members = index.members(pid)
        assert len(members) == MEMBERS and all(index.get(p)["state"] == "live" for p in [pid, *members])
        assert all(repository.versions(p) == ["v1"] for p in [pid, *members])


def test_a_database_restart_mid_ingest_loses_and_repeats_nothing(postgres, template_index, tmp_path, figures):
    app, url = template_index
    app.records = _collections(datetime.now(timezone.utc))
    engine = make_engine(postgres.url)
    app.hold_value = "Collection 04"  # the ingest waits for the fifth collection's records while the server restarts
    outcome = {}
    worker = threading.Thread(target=lambda: outcome.setdefault("result", _service(url, engine, tmp_path).run()))
    worker.start()
    assert app.reached.wait(60)
    began = time.monotonic()
    postgres.restart()
    restarted = time.monotonic() - began
    app.release.set()
    worker.join(120)
    result = outcome["result"]
    assert not result.refused and not result.failed, [o.error for o in result.failed]
    _check_exact(engine, tmp_path)
    books = Bookkeeping(engine)
    assert books.watchdog_entry(url) is None and books.last_success(url) == result.until
    figures(restart_seconds=round(restarted, 2), units=len(result.outcomes), failed_units=0)
    engine.dispose()


def test_a_database_down_mid_ingest_stops_the_cycle_by_name_and_the_next_cycle_is_exact(postgres, template_index, tmp_path,
                                                                                       figures):
    """The server stopped while the ingest waits on the fifth collection, back 3 s later: the cycle stops with a
    DatabaseError naming the database, releases its watchdog once the database is back (else the provider's next
    ingests would be refused for MaximumIngestDuration), and the next cycle does exactly the collections not done."""
    app, url = template_index
    app.records = _collections(datetime.now(timezone.utc))
    engine = make_engine(postgres.url)
    app.hold_value = "Collection 04"
    outcome = {}

    def cycle():
        try:
            outcome["result"] = _service(url, engine, tmp_path).run()
        except DatabaseError as exc:
            outcome["error"] = exc

    worker = threading.Thread(target=cycle)
    worker.start()
    assert app.reached.wait(60)
    postgres.stop()
    began = time.monotonic()
    app.release.set()  # the ingest goes on against a database that is away for 3 s
    threading.Timer(3, postgres.start).start()
    worker.join(120)
    released = time.monotonic() - began
    error = outcome["error"]
    assert error.retryable and "database unavailable" in str(error) and postgres.url.split("@")[1] in str(error)
    books = Bookkeeping(engine)
    assert books.watchdog_entry(url) is None  # released once the database was back: the next cycle is not refused
    assert books.last_success(url) is None  # not advanced past the collections not done
    done = {f"{WIKI}Collection_{c:02d}" for c in range(COLLECTIONS) if books.last_success(url, f"{WIKI}Collection_{c:02d}")}

    second = _service(url, engine, tmp_path).run()
    assert not second.refused and not second.failed
    redone = {o.uri for o in second.outcomes if not o.skipped}
    assert len(done) == 4 and redone == {f"{WIKI}Collection_{c:02d}" for c in range(COLLECTIONS)} - done
    _check_exact(engine, tmp_path)
    assert books.watchdog_entry(url) is None and books.last_success(url) == second.until
    figures(outage_seconds=3, watchdog_released_after_seconds=round(released, 1), done_before=len(done), redone=len(redone))
    engine.dispose()


@pytest.mark.parametrize("fault", ["restart", "down"])
def test_a_database_fault_mid_dataset_batch_stores_each_dataset_once(postgres, http_server, tmp_path, fault, figures):
    """A batch of dataset requests (the demo dataset, the same again, a missing one) with the results table's server
    restarted, or away for 3 s, while the first request's second file downloads: the batch either completes or stops
    with a DatabaseError naming the database; rerun, every request has its one row and the dataset is stored once."""
    began = {}

    def site(environ, start_response):
        if environ["PATH_INFO"] == "/api/access/datafile/102" and "at" not in began:
            began["at"] = time.monotonic()
            if fault == "restart":
                postgres.restart()
            else:
                postgres.stop()
                threading.Timer(3, postgres.start).start()
        return began["app"](environ, start_response)

    base = http_server(app=site)
    began["app"] = make_site(sample_records(), base)
    dataset = f"{base}/dataset.xhtml?persistentId={DATASET_PID}"
    missing = f"{base}/dataset.xhtml?persistentId=doi:10.5072/FK2/NOTHERE"
    lines = [json.dumps({"ingest_type": "dataset", "base_url": url}) for url in (dataset, dataset, missing)]
    engine = make_engine(postgres.url)
    storage = LocalStorage(tmp_path / "storage")

    def batch():
        return run_requests(lines, make_context(storage, engine, allow_private=True), "batch.jsonl", io.StringIO())

    try:
        first = batch()
        failure = None
    except DatabaseError as exc:
        failure = exc
        assert postgres.url.split("@")[1] in str(exc) and exc.retryable
        wait_for("the database to be back", lambda: _answers(engine), 30)
        first = batch()
    results = ResultStore(engine)
    assert results.get("dataset", dataset).status == "success" and results.get("dataset", missing).status != "success"
    assert first.requests == 3 and first.by_status["success"] == 1 and first.by_status["success-existing"] == 1
    rerun = batch()
    assert rerun.by_status["success-existing"] == 2 and results.get("dataset", dataset).status == "success"
    stored = [k for k in storage.list_keys("") if k.startswith(("_datasets-web", "_datasets-items"))]
    assert stored and len({k.split("/")[1] for k in stored}) == 1  # one archive of the dataset, not two
    figures(fault=fault, batch_failed=failure is not None, requests=len(lines))
    engine.dispose()


def _answers(engine) -> bool:
    try:
        with engine.connect() as conn:
            conn.execute(select(1))
        return True
    except DatabaseError:
        return False


def test_a_database_restart_mid_dagster_run_completes_the_day_once(postgres, http_server, tmp_path, figures):
    """A run of ``record_pipeline`` on the PostgreSQL Dagster instance (the shipped deploy/postgres/dagster.yaml), its
    run storage's server restarted while the harvest step waits on the provider's first OAI-PMH page: the run ends
    SUCCESS (Dagster's storage reconnects), each activity's output of the day is there once, with every record once."""
    day = datetime.now(timezone.utc).date() - timedelta(days=1)
    restarted = {}

    def provider(environ, start_response):
        if "seconds" not in restarted:  # the first request: the run is in its harvest step
            began = time.monotonic()
            postgres.restart()
            restarted["seconds"] = time.monotonic() - began
        return restarted["app"](environ, start_response)

    base = http_server(app=provider)
    records = sample_records(count=120, day=day)
    restarted["app"] = make_site(records, base)
    registry = tmp_path / "registry.yaml"
    registry.write_text(f"demo: {{harvest: {{type: oai, endpoint: '{base}/oai', metadata_prefix: oai_dc, allow_private: true}},"
                        " mapping: oai_dc, schedule: false}\n")
    hub = DaemonProcess(tmp_path, postgres.url, registry, (day - timedelta(days=3)).isoformat())  # its instance, not started
    os.environ["DAGSTER_POSTGRES_URL"] = hub.env["DAGSTER_POSTGRES_URL"]  # what the instance's dagster.yaml reads
    try:
        with dg.DagsterInstance.from_config(str(hub.home)) as instance:
            instance.add_dynamic_partitions("record_providers", ["demo"])
            began = time.monotonic()
            run = subprocess.run([str(BIN / "dagster"), "job", "execute", "-m", "ingest_assets.definitions", "-j", "record_pipeline",
                                  "--tags", json.dumps({"dagster/partition": f"{day.isoformat()}|demo"})],
                                 cwd=ROOT, env=hub.env, capture_output=True, text=True, timeout=600)
            took = time.monotonic() - began
            assert "seconds" in restarted and run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
            runs = instance.get_run_records(dg.RunsFilter(job_name="record_pipeline"))
    finally:
        os.environ.pop("DAGSTER_POSTGRES_URL")
    assert [r.dagster_run.status for r in runs] == [dg.DagsterRunStatus.SUCCESS]
    storage = LocalStorage(tmp_path / "ingest" / "storage")
    assert all(len(layout.complete_outputs(storage, "demo", a, day)) == 1 for a in layout.ACTIVITIES)
    harvested = [r["id"] for r in RecordSource(storage, layout.complete_outputs(storage, "demo", "harvest", day)[0])]
    expected = [r.identifier for r in records if r.datestamp.date() == day]
    assert sorted(harvested) == sorted(expected) and expected
    figures(restart_seconds=round(restarted["seconds"], 2), run_seconds=round(took, 1), records=len(harvested))
