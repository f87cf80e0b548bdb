"""``ingest-assets lineage`` end to end: the demo runs once, then the command answers for its records."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from ingest_assets.demo.samples import sample_records
from ingest_assets.records.mapping import mint_id
from ingest_assets.storage import LocalStorage, layout
from ingest_assets.storage.avro import part_keys, read_part

DAY = date(2026, 1, 15)
COMMAND = str(Path(sys.executable).parent / "ingest-assets")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """A home where ``ingest-assets demo`` has run: run(*args) runs a command there."""
    home = tmp_path_factory.mktemp("lineage-demo")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INGEST_", "DAGSTER_"))}
    env.update(INGEST_HOME=str(home / ".ingest"), DAGSTER_HOME=str(home))

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([COMMAND, *args], cwd=home, env=env, capture_output=True, text=True, timeout=480)

    done = run("demo")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return run, LocalStorage(home / ".ingest" / "storage")


def lineage(run, *args: str) -> dict:
    done = run("lineage", *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def in_window():
    return [r for r in sample_records(day=DAY) if r.datestamp.date() == DAY]


def test_a_record_is_traced_from_its_index_document_to_the_request_that_fetched_it(demo):
    run, storage = demo
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
    run, _ = demo
    deleted = next(r.identifier for r in in_window() if r.deleted)
    steps = lineage(run, "demo", deleted)["steps"]
    assert [s["what"] for s in steps] == ["index document", "original record", "harvest request"]
    assert steps[0]["facts"]["deleted"] and steps[1]["facts"]["deleted"]
    failed = next(r.identifier for r in in_window() if not r.fields["rights"] and not r.deleted)
    assert [s["what"] for s in lineage(run, "demo", failed)["steps"]] == ["original record", "harvest request"]


def test_an_unknown_record_is_a_one_line_error(demo):
    run, _ = demo
    done = run("lineage", "demo", "oai:demo.example.org:nothing")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "no output holds this record" in done.stderr and "'oai:demo.example.org:nothing'" in done.stderr
