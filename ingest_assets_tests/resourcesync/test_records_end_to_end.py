"""A record provider's resource set end to end: the record pipeline harvests the demo OAI-PMH endpoint and
writes the item documents with their events, ``ingest-assets serve-resourcesync --publish`` publishes and
serves them, and the reference client (``resync-sync``) mirrors them, then follows a second harvest day.
With ``publish_outputs`` the files of the activity outputs are mirrored too, served straight from storage."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
from dataclasses import replace
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import urlsplit

import dagster as dg
import pytest

from ingest_assets.definitions import build_definitions
from ingest_assets.demo.oai_server import serve_in_thread
from ingest_assets.demo.samples import sample_records
from ingest_assets.core.settings import Settings
from ingest_assets.storage import LocalStorage, layout
from ingest_assets.storage.activities import RecordSource

DAY1, DAY2 = date(2026, 1, 15), date(2026, 1, 16)
INGEST_ASSETS = Path(sys.executable).with_name("ingest-assets")
AREA = "_resourcesync/demo/resources"


def on(day: date, records):
    return [r for r in records if r.datestamp.date() == day]


@pytest.fixture
def hub(tmp_path):
    """A registry whose ``demo`` provider harvests a demo endpoint and publishes a resource set."""
    home, registry = tmp_path / "home", tmp_path / "registry.yaml"
    servers = []

    def serve(records, block: str = "{}") -> None:
        server, url = serve_in_thread(records)
        servers.append(server)
        registry.write_text(
            f"demo:\n  harvest: {{type: oai, endpoint: '{url}', metadata_prefix: oai_dc, allow_private: true}}\n"
            f"  mapping: oai_dc\n  resourcesync: {block}\n"
        )

    env = {"INGEST_HOME": str(home), "INGEST_REGISTRY": str(registry)}
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("record_providers", ["demo"])
        yield serve, env, instance
    for server in servers:
        server.shutdown()


def run_pipeline(env: dict, instance, day: date, only_feed: bool = False) -> dict:
    """The record pipeline for ``day|demo`` (or only its ``resourcesync_changes``); returns the metadata
    of ``resourcesync_changes``."""
    job = build_definitions(Settings.from_env(env)).resolve_job_def("record_pipeline")
    if only_feed:
        job = job.get_subset(asset_selection={dg.AssetKey("resourcesync_changes")})
    partition = dg.MultiPartitionKey({"date": day.isoformat(), "provider": "demo"})
    result = job.execute_in_process(partition_key=str(partition), instance=instance, raise_on_error=False)
    assert result.success
    [changes] = result.asset_materializations_for_node("resourcesync_changes")
    return {k: v.value for k, v in changes.metadata.items()}


def index_documents(storage: LocalStorage, day: date) -> dict[str, bytes | None]:
    """The day's IndexRecords as ``items/<id>.jsonld`` -> document bytes (None for a deletion)."""
    output = layout.latest_output(storage, "demo", "indexing", day)
    records = RecordSource(storage, output)
    return {f"items/{r['id']}.jsonld": None if r["deleted"] else r["document"].encode() for r in records}


@pytest.fixture
def resourcesync_server(tmp_path):
    """Start ``ingest-assets serve-resourcesync --port 0 --publish`` with ``env``; returns its base URL."""
    processes = []

    def start(env: dict) -> str:
        clean = {k: v for k, v in os.environ.items() if not k.startswith("INGEST_")}
        log = open(tmp_path / "server.log", "w")  # noqa: SIM115 - closed with the process
        process = subprocess.Popen(
            [str(INGEST_ASSETS), "serve-resourcesync", "--port", "0", "--publish"],
            env={**clean, **env},
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
        processes.append((process, log))
        line = process.stdout.readline()
        assert line.startswith("serving ResourceSync on http://127.0.0.1:"), (tmp_path / "server.log").read_text()
        return line.split()[-1].rsplit("/.well-known/", 1)[0]

    yield start
    for process, log in processes:
        process.terminate()
        process.wait(timeout=10)
        log.close()


def test_record_set_is_mirrored_by_resync_and_follows_a_second_harvest(
    hub, resourcesync_server, tmp_path, tree, resync
):
    serve, env, instance = hub
    samples = sample_records(day=DAY1)
    first = on(DAY1, samples)  # the endpoint holds only the first day's records at first
    serve(first)
    changes = run_pipeline(env, instance, DAY1)
    storage = LocalStorage(Path(env["INGEST_HOME"]) / "storage")
    day1 = index_documents(storage, DAY1)
    published = {path: data for path, data in day1.items() if data is not None}
    assert published and len(published) < len(day1)  # deletions and refused records are not published
    enriched = RecordSource(storage, layout.latest_output(storage, "demo", "enrichment", DAY1))
    assert {f"items/{r['id']}.jsonld" for r in enriched} == set(published)
    assert changes["created"] == len(published) and changes["errors"] == 0
    assert tree(storage.root / AREA) == published

    base = resourcesync_server(env)
    dst, client = tmp_path / "mirror", tmp_path / "client"
    # the capabilities' change feeds are sets of the Source Description too: name the set's Capability List
    output = resync(client, "-b", "--capabilitylist", f"{base}/demo/capabilitylist.xml", f"{base}/demo/resources={dst}")
    assert f"created={len(published)}" in output
    assert tree(dst) == published

    # the second day: one record changed, one deleted, one new
    kept = [r for r in first if not r.deleted and r.fields["rights"]]
    changed, gone = kept[0], kept[1]
    new = next(r for r in on(DAY2, samples) if not r.deleted and r.fields["rights"])
    noon = datetime.combine(DAY2, datetime.min.time(), tzinfo=timezone.utc) + timedelta(hours=12)
    second = [r for r in first if r not in (changed, gone)] + [
        replace(changed, datestamp=noon, fields={**changed.fields, "title": ["A corrected title"]}),
        replace(gone, datestamp=noon, deleted=True),
        new,
    ]
    serve(second)
    # harvests are stamped to the second, so this one may seem to start before the baseline's at: its
    # changes are listed at that at all the same
    state_key = "_resourcesync/demo/changelists.json"
    baseline_at = json.loads(storage.read_bytes(state_key))["resource_list_ats"][-1]
    changes = run_pipeline(env, instance, DAY2)
    assert {k: changes[k] for k in ("created", "updated", "deleted", "errors")} == {
        "created": 1,
        "updated": 1,
        "deleted": 1,
        "errors": 0,
    }
    day2 = index_documents(storage, DAY2)
    expected = {path: data for path, data in {**published, **day2}.items() if data is not None}
    assert len(expected) == len(published) and tree(storage.root / AREA) == expected
    [revised] = [path for path, data in day2.items() if data is not None and path in published]
    assert b"A corrected title" in expected[revised] and expected[revised] != published[revised]
    files = {p: p.stat().st_mtime_ns for p in (storage.root / AREA).rglob("*.jsonld")}
    again = run_pipeline(env, instance, DAY2, only_feed=True)  # the same IndexRecords again: nothing to do
    assert (again["unchanged"], again["created"] + again["updated"] + again["deleted"]) == (3, 0)
    assert {p: p.stat().st_mtime_ns for p in (storage.root / AREA).rglob("*.jsonld")} == files

    publish = build_definitions(Settings.from_env({**env, "INGEST_RESOURCESYNC_URL": base}))
    assert publish.resolve_job_def("resourcesync_publish").execute_in_process(instance=instance).success
    state = json.loads(storage.read_bytes(state_key))
    after_baseline = [p for p in state["parts"] if p["from"] >= baseline_at]
    outputs = [
        resync(client, "-i", "--delete", "--changelist-uri", p["url"], f"{base}/demo/resources={dst}")
        for p in after_baseline
    ]  # resync reads one Change List per run
    assert any("created=1, updated=1, deleted=1" in o for o in outputs), outputs
    assert tree(dst) == expected and b"A corrected title" in (dst / revised).read_bytes()
    gone_id = next(path for path, data in day2.items() if data is None)
    assert not (dst / gone_id).exists() and gone_id in published


def output_files(storage: LocalStorage, day: date) -> dict[str, bytes]:
    """``outputs/<key below demo/>`` -> bytes of every file of the day's newest outputs and their prov files."""
    files = {}
    for activity in layout.ACTIVITIES:
        output = layout.latest_output(storage, "demo", activity, day)
        for key in [*storage.list_keys(output.folder), output.prov]:
            files[f"outputs/{key.split('/', 1)[1]}"] = storage.read_bytes(key)
    return files


def get(base: str, path: str) -> tuple[int, str | None, bytes]:
    """GET ``path`` exactly as given (no client-side normalisation of '..')."""
    connection = http.client.HTTPConnection(urlsplit(base).netloc, timeout=10)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.getheader("Content-Type"), response.read()
    finally:
        connection.close()


def test_published_outputs_are_mirrored_from_storage_once_and_only_complete_ones_are_served(
    hub, resourcesync_server, tmp_path, tree, resync
):
    serve, env, instance = hub
    serve(on(DAY1, sample_records(day=DAY1)), block="{publish_outputs: true}")
    changes = run_pipeline(env, instance, DAY1)
    storage = LocalStorage(Path(env["INGEST_HOME"]) / "storage")
    outputs = output_files(storage, DAY1)
    assert {p.rsplit("/", 1)[1] for p in outputs} >= {"_MANIFEST", "part-00000.avro"}
    assert any("/_LOGS/" in p for p in outputs) and sum(p.endswith("-prov.json") for p in outputs) == 4
    assert changes["output_files"] == {"created": len(outputs), "updated": 0, "deleted": 0, "unchanged": 0}
    items = {p: d for p, d in index_documents(storage, DAY1).items() if d is not None}

    # an output that is still being written (no _MANIFEST) and a complete one of another provider
    partial = "demo/harvest/20260115/20260115_235959-demo-OriginalRecord.v1.avro"
    storage.write_bytes(f"{partial}/part-00000.avro", b"partial")
    storage.write_bytes(partial.replace(".avro", "-prov.json"), b"{}")
    other = "other/harvest/20260115/20260115_000000-other-OriginalRecord.v1.avro"
    storage.write_bytes(f"{other}/_MANIFEST", b"manifest of another provider")

    base = resourcesync_server(env)
    dst = tmp_path / "mirror"
    capabilities = f"{base}/demo/capabilitylist.xml"
    output = resync(tmp_path / "client", "-b", "--capabilitylist", capabilities, f"{base}/demo/resources={dst}")
    assert f"created={len(items) + len(outputs)}" in output
    assert tree(dst) == {**items, **outputs}  # byte-identical to the storage

    prefix = "/demo/resources/outputs/"
    part = next(p for p in outputs if p.endswith(".avro"))
    assert get(base, f"/demo/resources/{part}")[:2] == (200, "avro/binary")
    assert get(base, f"/demo/resources/{part.rsplit('/', 1)[0]}/_MANIFEST")[1] == "text/plain"
    prov = next(p for p in outputs if p.endswith("-prov.json"))
    assert get(base, f"/demo/resources/{prov}") == (200, "application/json", outputs[prov])
    plan = next(storage.list_keys("demo/plan"))
    for path in [
        f"{prefix}{partial.split('/', 1)[1]}/part-00000.avro",  # incomplete output
        f"{prefix}{partial.split('/', 1)[1].replace('.avro', '-prov.json')}",  # its prov file
        f"{prefix}{plan.split('/', 1)[1]}",  # in the provider folder, but not an output
        f"{prefix}../{other}/_MANIFEST",  # another provider's folder
        f"{prefix}%2e%2e/{other}/_MANIFEST",
        f"{prefix}..%2f..%2fregistry.yaml",
        f"{prefix}{part.split('/', 1)[1].rsplit('/', 1)[0]}",  # the folder itself
    ]:
        assert get(base, path)[0] == 404, path

    again = run_pipeline(env, instance, DAY1, only_feed=True)  # the same outputs again: nothing new
    assert again["output_files"] == {"created": 0, "updated": 0, "deleted": 0, "unchanged": len(outputs)}
