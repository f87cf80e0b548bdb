"""``ingest-assets snapshot`` as a command, on outputs made from Zenodo's recorded OAI-PMH page (7 records): a full
harvest on 2026-03-01 and an incremental one on 2026-03-02 (one record revised, one deleted), each mapped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date, datetime, timezone
from pathlib import Path

import pytest

from ingest_assets.core.http import HttpClient
from ingest_assets.core.registry import ProviderEntry
from ingest_assets.records.engines.steps import RecordActivity, in_process
from ingest_assets.records.harvest import StorageCheckpoint, harvest_records
from ingest_assets.records.mapping import mint_id
from ingest_assets.storage import LocalStorage, layout
from ingest_assets.storage.activities import RecordSource, RecordStream, write_activity
from ingest_assets.storage.avro import MAP_RECORD, ORIGINAL_RECORD

CLI = str(Path(sys.executable).parent / "ingest-assets")
DAY1, DAY2 = date(2026, 3, 1), date(2026, 3, 2)
REVISED, DELETED = "oai:zenodo.org:14165", "oai:zenodo.org:17183"
OAI = "http://www.openarchives.org/OAI/2.0/"


def write(storage, records, day, mode, activity="harvest", schema=ORIGINAL_RECORD, inputs=()):
    started = datetime(day.year, day.month, day.day, 6, tzinfo=timezone.utc)
    stream = records if isinstance(records, RecordStream) else RecordStream(records, summary=lambda: {"mode": mode})
    stream.inputs = list(inputs)
    return write_activity(storage, stream, provider="zenodo", activity=activity, day=day, started=started,
                          schema=schema, partition=f"{day}|zenodo")


@pytest.fixture
def hub(tmp_path, shared_fixtures):
    storage = LocalStorage(tmp_path / "storage")
    entry = ProviderEntry("zenodo", {"mapping": "oai_dc", "mapping_overrides": {"dataProvider": {"default": "Zenodo"}},
                                     "harvest": {
        "type": "file", "format": "xml", "path": str(shared_fixtures / "oai-pmh" / "zenodo-listrecords-oai_dc.xml"),
        "record_xpath": "//oai:record", "id_xpath": "oai:header/oai:identifier", "namespaces": {"oai": OAI}}})
    run = harvest_records(entry, started=datetime(2026, 3, 1, 6, tzinfo=timezone.utc), window=None,
                          http=HttpClient(), checkpoint=StorageCheckpoint(storage, "zenodo"))
    first = list(run)
    revised = next(r for r in first if r["id"] == REVISED)
    revised = {**revised, "document": revised["document"].replace("Quelques fourmis de Tokio.", "Fourmis de Tokio")}
    gone = next(r for r in first if r["id"] == DELETED)
    header = gone["document"].split("<metadata")[0].replace("<header>", '<header status="deleted">') + "</record>"
    day2 = [revised, {**gone, "document": header, "deleted": True}]
    for day, records, mode in ((DAY1, first, "full"), (DAY2, day2, "incremental")):
        harvest = write(storage, records, day, mode)
        source = RecordSource(storage, harvest.output)
        write(storage, in_process(RecordActivity("mapping", entry), [source]), day, None, "mapping", MAP_RECORD, [source])
    registry = tmp_path / "registry.yaml"
    registry.write_text("zenodo: {mapping: oai_dc}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("INGEST_")}
    env.update(INGEST_STORAGE=str(tmp_path / "storage"), INGEST_REGISTRY=str(registry), INGEST_HOME=str(tmp_path))
    return storage, env


def snapshot(env, *args):
    return subprocess.run([CLI, "snapshot", "zenodo", *args], env=env, capture_output=True, text=True, timeout=300)


def outputs(storage, activity, day):
    return [RecordSource(storage, o) for o in layout.complete_outputs(storage, "zenodo", activity, day)]


def titles(source) -> dict[str, str]:
    return {r["id"]: r["sourceResource"]["title"][0] for r in source}


def test_a_snapshot_from_mapping_enriches_and_indexes_the_mapped_records_as_of_the_day(hub):
    storage, env = hub
    done = snapshot(env, "--as-of", DAY2.isoformat(), "--activity", "mapping")
    assert done.returncode == 0, done.stderr
    [mapped1], [mapped2] = outputs(storage, "mapping", DAY1), outputs(storage, "mapping", DAY2)
    [enriched], [indexed] = outputs(storage, "enrichment", DAY2), outputs(storage, "indexing", DAY2)
    lines = done.stdout.splitlines()
    assert lines[0] == f"6 records as of {DAY2} from 2 mappings (newest: {storage.uri(mapped2.key)})"
    assert lines[1:] == [f"enrichment -> {enriched.uri}", f"indexing -> {indexed.uri}"]

    state = titles(enriched)
    assert len(state) == 6 and mint_id("zenodo", DELETED) not in state  # deleted by the 2nd harvest
    assert state[mint_id("zenodo", REVISED)] == "Fourmis de Tokio"  # its newest version
    manifest = enriched.manifest()
    assert manifest.inputs == [mapped2.key, mapped1.key] and manifest.extra["Summary mode"] == "snapshot"
    assert manifest.partition == f"snapshot as of {DAY2}"
    prov = json.loads(storage.read_bytes(enriched.output.prov))
    assert prov["generator"] == mapped2.output.relative  # the historical mapped-records output
    [harvest2] = outputs(storage, "harvest", DAY2)
    assert indexed.manifest().inputs == [enriched.key, harvest2.key]
    assert indexed.manifest().extra["Summary documents"] == "6" and indexed.manifest().extra["Summary deletions"] == "1"


def test_a_snapshot_from_mapping_of_an_earlier_day_reads_that_days_mapping_and_the_default_rebuilds_harvests(hub):
    storage, env = hub
    done = snapshot(env, "--as-of", DAY1.isoformat(), "--activity", "mapping")
    assert done.returncode == 0, done.stderr
    [mapped1], [enriched] = outputs(storage, "mapping", DAY1), outputs(storage, "enrichment", DAY1)
    assert len(titles(enriched)) == 7 and json.loads(storage.read_bytes(enriched.output.prov))["generator"] == \
        mapped1.output.relative
    missing = snapshot(env, "--as-of", "2026-02-01", "--activity", "mapping")
    assert missing.returncode == 1 and missing.stderr.startswith(
        "ingest-assets snapshot: no mapping of zenodo at or before 2026-02-01 in ")
    assert missing.stderr.rstrip().endswith("hint: providers with mapping outputs: zenodo")
    harvests = snapshot(env, "--as-of", DAY2.isoformat())
    assert harvests.returncode == 0 and harvests.stdout.startswith(f"6 records as of {DAY2} from 2 harvests")
