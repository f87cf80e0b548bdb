"""``ingest-assets lineage`` end to end: the demo runs once, then the command answers for its record, graph,
repository objects and dataset."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from datetime import date
from importlib.resources import files
from pathlib import Path

import pytest
from lxml import etree

from ingest_assets.demo.samples import sample_records
from ingest_assets.demo.site import dataset_api, dataset_files, lod_dump
from ingest_assets.records.mapping import mint_id
from ingest_assets.storage import LocalStorage, layout
from ingest_assets.storage.avro import part_keys, read_part
from ingest_assets.cli.main import READER_GONE
from ingest_assets_tests.support import run_with_reader_gone

pytestmark = pytest.mark.xdist_group("lineage")  # the module's demo home (`ingest-assets demo`) is built once, on one xdist worker

DAY = date(2026, 1, 15)
COMMAND = str(Path(sys.executable).parent / "ingest-assets")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """A home where ``ingest-assets demo`` has run: (run(*args) running a command there, its storage, its INGEST_HOME)."""
    home = tmp_path_factory.mktemp("lineage-demo")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INGEST_", "DAGSTER_"))}
    env.update(INGEST_HOME=str(home / ".ingest"), DAGSTER_HOME=str(home))

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([COMMAND, *args], cwd=home, env=env, capture_output=True, text=True, timeout=480)

    done = run("demo", "--port", "0")  # 8765 may be taken on a shared machine
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return run, LocalStorage(home / ".ingest" / "storage"), home / ".ingest"


def lineage(run, *args: str) -> dict:
    done = run("lineage", *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def in_window():
    return [r for r in sample_records(day=DAY) if r.datestamp.date() == DAY]


def test_a_record_is_traced_from_its_index_document_to_the_request_that_fetched_it(demo):
    run, storage, _ = demo
    wanted = next(r.identifier for r in in_window() if not r.deleted and r.fields["rights"])
    found = lineage(run, "demo", wanted)
    assert found["subject"] == f"record {wanted} of demo (DPLA id {mint_id('demo', wanted)})"
    steps = found["steps"]
    assert [s["what"] for s in steps] == ["index document", "enriched record", "mapped record", "original record",
                                         "harvest request"]
    for step, activity in zip(steps, ("indexing", "enrichment", "mapping", "harvest")):
        output = layout.latest_output(storage, "demo", activity, DAY)
        assert step["where"] == storage.uri(output.folder)
        part = f"{output.folder}/{step['facts']['part']}"
        assert part in part_keys(storage, output.folder)
        ids = [r["id"] for r in read_part(storage, part)]  # the named part holds the record at the named position
        assert ids[step["facts"]["position"]] == (wanted if activity == "harvest" else mint_id("demo", wanted))
        manifest = step["facts"]["manifest"]
        assert manifest["activity"] == activity and manifest["partition"] == f"{DAY.isoformat()}|demo"
        assert step["facts"]["software version"]
    request = steps[-1]["facts"]
    assert request["params"]["verb"] == "ListRecords" and request["params"]["metadataPrefix"] == "oai_dc"
    assert request["params"]["from"].startswith("2026-01-15") and request["params"]["until"].startswith("2026-01-15")
    assert request["page"] == 1 and request["status"] == 200 and request["response_date"].startswith("20")
    first, end = request["records"]
    assert first <= steps[3]["facts"]["position"] < end
    assert "/oai?verb=ListRecords" in steps[-1]["where"]

    assert lineage(run, "demo", mint_id("demo", wanted)) == found  # the DPLA id finds the same lineage
    text = run("lineage", "demo", wanted).stdout  # and the text form says the same for people
    assert "1. index document: " in text and "5. harvest request: " in text and "response_date: " in text


def test_a_deleted_record_and_a_record_that_failed_mapping_show_where_they_stop(demo):
    run, _, _ = demo
    deleted = next(r.identifier for r in in_window() if r.deleted)
    steps = lineage(run, "demo", deleted)["steps"]
    assert [s["what"] for s in steps] == ["index document", "original record", "harvest request"]
    assert steps[0]["facts"]["deleted"] and steps[1]["facts"]["deleted"]
    failed = next(r.identifier for r in in_window() if not r.fields["rights"] and not r.deleted)
    assert [s["what"] for s in lineage(run, "demo", failed)["steps"]] == ["original record", "harvest request"]


def test_lineage_ends_quietly_when_its_reader_goes_away(demo):
    """``ingest-assets lineage demo <id> | head -1``: head leaves once it has its line."""
    _, _, ingest_home = demo
    wanted = next(r.identifier for r in in_window() if not r.deleted)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INGEST_", "DAGSTER_"))}
    env.update(INGEST_HOME=str(ingest_home), DAGSTER_HOME=str(ingest_home.parent))
    done = run_with_reader_gone("lineage", "demo", wanted, cwd=ingest_home.parent, env=env)
    assert done.stderr == "" and done.returncode == READER_GONE


def test_an_unknown_record_is_a_one_line_error(demo):
    run, _, _ = demo
    done = run("lineage", "demo", "oai:demo.example.org:nothing")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "no output holds this record" in done.stderr and "'oai:demo.example.org:nothing'" in done.stderr
    bad = run("lineage", "Demo", "x")
    assert bad.returncode == 2 and "not a provider name" in bad.stderr and bad.stderr.count("\n") == 1  # a mistake


def test_a_graph_names_the_void_and_the_dumps_behind_its_version(demo):
    run, storage, _ = demo
    found = lineage(run, "--graph", "riverlod")
    assert found["subject"] == "graph urn:x-ingest-assets:graph:riverlod of riverlod"
    version, void, dump = found["steps"]
    status = json.loads(storage.read_bytes("riverlod/state/linked-data-status.json"))
    assert version["what"] == "graph version" and version["where"].startswith(status["graph"] + ":")
    assert version["facts"]["triples"] == status["harvested"]["triples"] == 29
    assert void["what"] == "replace import of the VoID" and void["where"].endswith("/lod/void.ttl")
    assert void["facts"]["modified"] == status["harvested"]["modified_text"] and void["facts"]["kind"] == "full"
    base = void["where"].removesuffix("/lod/void.ttl")
    expected = lod_dump(base)  # the bytes the demo site served
    assert dump["where"] == f"{base}/lod/dump.nt" and dump["facts"]["bytes"] == len(expected)
    assert dump["facts"]["sha256"] == hashlib.sha256(expected).hexdigest() and dump["facts"]["triples"] == 29


def test_an_object_names_the_wiki_page_revision_it_came_from(demo):
    run, _, ingest = demo
    export = etree.parse(str(files("ingest_assets.demo") / "wiki-export.xml"))
    title = "Glass plate 3"
    page = next(p for p in export.iterfind("{*}page") if p.findtext("{*}title") == title)
    revision = max(int(r.findtext("{*}id")) for r in page.iterfind("{*}revision"))
    pids = [json.loads(p.read_text())["id"] for p in (ingest / "ocfl").rglob("inventory.json")]
    for pid in pids:  # the member harvested from that page
        steps = lineage(run, "--object", pid)["steps"]
        if steps[1]["where"].endswith("/Glass_plate_3"):
            break
    else:
        pytest.fail(f"no object of {pids} came from {title}")
    obj, source_page, source = steps
    assert obj["what"] == "repository object" and obj["facts"]["kind"] == "member" and obj["facts"]["software version"]
    assert source_page["facts"]["revision"] == str(revision) and source_page["facts"]["template"] == "Metadata"
    assert source["where"].endswith("wiki-export.xml")
    collection = lineage(run, "--object", obj["facts"]["collection"])["steps"]
    assert collection[0]["facts"]["kind"] == "collection"


def test_a_dataset_names_its_request_platform_answers_and_manifest(demo):
    run, _, ingest = demo
    base_url = json.loads((ingest / "demo" / "dataset-requests.jsonl").read_text())["base_url"]
    steps = lineage(run, "--dataset", base_url)["steps"]
    assert [s["what"] for s in steps] == ["dataset result", "manifest", "platform API response", "terminal page", "request"]
    result, manifest, answer, terminal, request = steps
    assert result["facts"]["status"] == "success" and result["facts"]["platform"] == "dataverse"
    assert result["where"].endswith(".warc.gz") and Path(result["where"]).exists()
    served = {name: body for name, body in dataset_files().values()}
    assert {f["path"]: f["sha256"] for f in manifest["facts"]["files"]} == {
        name: hashlib.sha256(body).hexdigest() for name, body in served.items()}
    assert "/api/datasets/:persistentId/" in answer["where"] and answer["facts"]["status"] == 200
    assert answer["facts"]["sha1"] == hashlib.sha1(dataset_api()).hexdigest() and answer["facts"]["date"]
    assert terminal["where"] == base_url and terminal["facts"]["status"] == 200
    assert request["facts"] == {"ingest_type": "dataset", "base_url": base_url}


def test_the_command_refuses_a_subject_it_cannot_name(demo):
    run, _, _ = demo
    assert run("lineage", "demo").returncode == 2  # a provider without a record id
    assert run("lineage", "demo", "x", "--graph", "riverlod").returncode == 2
    missing = run("lineage", "--object", "K2N:nothing")
    assert missing.returncode == 1 and "no such object" in missing.stderr and "Traceback" not in missing.stderr


def test_the_demo_run_again_says_what_did_not_change(demo, tmp_path):
    """A second demo on a copy of this home: the linked-data graph and the wiki units are the ones imported before,
    and the demo says so (it printed `? import of []` and `0 units, 0 objects`); the demo provider's label does not
    repeat its name (`Riverside Historical Society (demo) (demo)`)."""
    _, _, ingest = demo
    home = tmp_path / "again"
    shutil.copytree(ingest.parent, home, symlinks=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INGEST_", "DAGSTER_"))}
    env.update(INGEST_HOME=str(home / ".ingest"), DAGSTER_HOME=str(home))
    again = subprocess.run([COMMAND, "demo", "--port", "0"], cwd=home, env=env, capture_output=True, text=True,
                           timeout=480)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    graph = again.stdout.split("2. linked data, riverlod (VoID -> named graph): success")[1].splitlines()[1]
    assert graph == ("  nothing changed: the VoID is the one imported before, so its graph (29 triples) stays as it "
                     f"is in {home / '.ingest' / 'oxigraph'}")
    wiki = again.stdout.split("3. repository, riverwiki")[1].splitlines()[1:3]
    assert wiki == [f"  0 units, 0 objects into {home / '.ingest' / 'ocfl'}; errors 0",
                    "  nothing changed: no unit of the wiki export changed since the last ingest, so the repository "
                    "keeps what it holds"]
    env["INGEST_REGISTRY"] = str(home / ".ingest" / "demo" / "registry.yaml")
    status = subprocess.run([COMMAND, "status", "demo"], cwd=home, env=env, capture_output=True, text=True, timeout=120)
    assert status.stdout.startswith("demo (Riverside Historical Society)\n"), status.stdout + status.stderr
