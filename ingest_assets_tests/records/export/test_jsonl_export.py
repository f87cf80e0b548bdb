"""The JSON-L export on a published provider (Zenodo's recorded page, ``conftest.py``): what it holds, the line DPLA's
indexer reads, its folder as sparkindexer picks it, and when it is refused."""

from __future__ import annotations

import hashlib
from datetime import date, datetime, timezone

import pytest

from ingest_assets.core.errors import ConfigError, IngestError, ValidationError
from ingest_assets.core.registry import ReviewBlock, load_registry
from ingest_assets.core.settings import Settings
from ingest_assets.records.export.jsonl import (PublishedState, export_jsonl, export_stamp, jsonl_source,
                                                newest_export, refusal, s3_prefix)
from ingest_assets.records.indexing.documents import index_document
from ingest_assets.records.mapping import base_id_for
from ingest_assets.records.publishing.takedowns import Target
from ingest_assets.storage import LocalStorage, layout
from ingest_assets.storage.backends import S3Storage
from ingest_assets.storage.activities import latest_source
from ingest_assets.storage.manifest import Manifest
from ingest_assets_tests.support import Worker, wait_for
from ingest_assets_tests.support.jsonl import publish_day, read_export, run_day, sparkindexer_folder

DAY1, DAY2, DAY3 = date(2026, 3, 1), date(2026, 3, 2), date(2026, 3, 3)
REVISED, DELETED = "oai:zenodo.org:14165", "oai:zenodo.org:17183"
EXPORTED_AT = datetime(2026, 3, 4, 5, 6, 7, tzinfo=timezone.utc)


def mint(local_id: str) -> str:
    return hashlib.md5(f"zenodo--{local_id}".encode()).hexdigest()


def export(storage, target, entry, day, publisher, started=EXPORTED_AT, **options):
    """The export of ``entry``'s ``day`` as the asset makes it (prefix: the provider's name)."""
    ledger = publisher.ledger
    enriched = latest_source(storage, entry.name, "enrichment", day)
    assert refusal(storage, ledger, entry.name, day, enriched) == ""
    state = PublishedState(storage, entry, day, exclude=ledger.excluded_days(entry.name),
                           suppressed=publisher.takedowns.suppressed(entry.name))
    folder = layout.jsonl_export(entry.name, entry.name, export_stamp(target, entry.name, day, started))
    return export_jsonl(target, folder, state, base_id_for(entry), provider=entry.name, partition=f"{day}|zenodo",
                        started=started, inputs=[s.uri for s in state.sources],
                        summary=lambda: {"kept_out": state.kept_out}, **options)


@pytest.fixture
def published(storage, publisher, zenodo_entry, zenodo_records):
    """Day 1 a full harvest of the 7 records; day 2 an incremental one: one record revised, one deleted."""
    publish_day(storage, publisher, zenodo_entry, DAY1, run_day(storage, zenodo_entry, DAY1, zenodo_records, "full"))
    revised = next(r for r in zenodo_records if r["id"] == REVISED)
    revised = {**revised, "document": revised["document"].replace("Quelques fourmis de Tokio.", "Fourmis de Tokio")}
    gone = next(r for r in zenodo_records if r["id"] == DELETED)
    header = gone["document"].split("<metadata")[0].replace("<header>", '<header status="deleted">') + "</record>"
    day2 = [revised, {**gone, "document": header, "deleted": True}]
    publish_day(storage, publisher, zenodo_entry, DAY2, run_day(storage, zenodo_entry, DAY2, day2, "incremental"))
    return {r["id"]: r for r in zenodo_records} | {REVISED: revised}


def test_an_export_holds_the_published_state_of_its_day_one_api_document_a_line(storage, publisher, zenodo_entry,
                                                                                  published):
    taken = sorted(published)[0]
    publisher.takedowns.add([Target(mint(taken), "zenodo", taken)], "rights holder request", "test", EXPORTED_AT)
    done = export(storage, storage, zenodo_entry, DAY2, publisher)
    assert done.folder == "zenodo/jsonl/20260302_050607-zenodo-MAP3_1.IndexRecord.jsonl" and done.parts == ["part-00000.gz"]
    lines = read_export(storage, done.folder)
    expected = sorted(set(published) - {DELETED, taken})  # the whole state: day 1's records, day 2's revision
    assert sorted(line["_id"].removeprefix("zenodo--") for line in lines) == expected and done.records == 5
    live = publisher.index.documents("dpla-map4", [mint(i) for i in expected])
    for line in lines:
        source = line["_source"]
        local_id = line["_id"].removeprefix("zenodo--")
        assert line["_type"] == "item" and source["_id"] == line["_id"] and source["id"] == mint(local_id)
        assert source.pop("originalRecord") == {"stringValue": published[local_id]["document"]}  # as harvested
        del source["_id"]
        assert source == live[source["id"]]  # otherwise the document the search index serves
    revised = next(line for line in lines if line["_id"] == f"zenodo--{REVISED}")
    assert revised["_source"]["sourceResource"]["title"] == ["Fourmis de Tokio"]
    manifest = Manifest.from_bytes(storage.read_bytes(f"{done.folder}/_MANIFEST"))
    assert (manifest.activity, manifest.provider, manifest.schema, manifest.record_count) == (
        "JSON-L", "zenodo", "MAP3_1.IndexRecord.jsonl", 5)
    assert manifest.extra["Summary kept_out"] == "1" and manifest.extra["Summary failed"] == "0"
    assert [i.rsplit("/", 2)[-2] for i in manifest.inputs] == ["20260302", "20260301"]  # the enrichment outputs read
    assert storage.read_bytes(f"{done.folder}/_SUCCESS") == b""

    older = export(storage, storage, zenodo_entry, DAY1, publisher)  # exported after day 2, named before it
    assert older.folder.startswith("zenodo/jsonl/20260301_050607-") and older.records == len(published) - 1
    assert sparkindexer_folder(storage, "zenodo") == newest_export(storage, "zenodo") == done.folder
    assert sparkindexer_folder(storage, "zenodo", max_timestamp="20260302_000000") == older.folder


def test_a_day_is_exported_only_once_published_from_the_outputs_that_were(storage, publisher, zenodo_entry,
                                                                           zenodo_records):
    ledger = publisher.ledger
    indexing = run_day(storage, zenodo_entry, DAY1, zenodo_records, "full")
    enriched = latest_source(storage, "zenodo", "enrichment", DAY1)
    assert refusal(storage, ledger, "zenodo", DAY1, enriched) == (
        "zenodo 2026-03-01 was never reported for publishing: its run stopped at a failed check, or did not index the day")
    ledger.register("zenodo", DAY1, indexing.key, ReviewBlock(required=True), EXPORTED_AT)
    assert refusal(storage, ledger, "zenodo", DAY1, enriched) == "zenodo 2026-03-01 is pending, not published"
    ledger.decide("zenodo", DAY1, False, "curator", EXPORTED_AT, "wrong set")
    assert refusal(storage, ledger, "zenodo", DAY1, enriched) == "zenodo 2026-03-01 is rejected, not published"
    ledger.decide("zenodo", DAY1, True, "curator", EXPORTED_AT)
    outcome = publisher.publish({"zenodo": [(DAY1, indexing)]}, storage, tolerance={"zenodo": 1.0})
    assert outcome["zenodo"].promoted and refusal(storage, ledger, "zenodo", DAY1, enriched) == ""

    rerun = run_day(storage, zenodo_entry, DAY1, zenodo_records[:3], "full")  # a re-run whose check failed
    newest = latest_source(storage, "zenodo", "enrichment", DAY1)
    assert refusal(storage, ledger, "zenodo", DAY1, newest) == (
        f"zenodo 2026-03-01: the published indexing output is {indexing.key}, the day's newest is {rerun.key}")



def test_on_s3_the_parts_go_first_then_the_manifest_and_success_last(storage, publisher, zenodo_entry, published,
                                                                     recorded_s3, s3_bucket):
    target = S3Storage(s3_bucket, "master-dataset", endpoint_url=recorded_s3.url)
    done = export(storage, target, zenodo_entry, DAY2, publisher, part_bytes=1)  # a new part after each batch
    puts = [seen.path.split("?")[0].rsplit("/", 1)[1] for seen in recorded_s3.log if seen.method == "PUT"]
    assert puts == [*done.parts, "_MANIFEST", "_SUCCESS"] and len(done.parts) == 1  # 5 lines: one batch
    assert sparkindexer_folder(target, "zenodo") == done.folder
    assert target.uri(done.folder) == f"s3://{s3_bucket}/master-dataset/{done.folder}"
    assert sorted(line["_id"] for line in read_export(target, done.folder)) == sorted(
        line["_id"] for line in read_export(storage, export(storage, storage, zenodo_entry, DAY2, publisher).folder))


def test_parts_roll_over_at_their_size_and_every_line_is_read_back(storage, publisher, zenodo_entry, published):
    state = list(PublishedState(storage, zenodo_entry, DAY2, exclude=set(), suppressed=set()))
    many = [{**record, "originalId": f"{record['originalId']}/{n}"} for n in range(300) for record in state]
    done = export_jsonl(storage, "zenodo/jsonl/20260302_050607-zenodo-MAP3_1.IndexRecord.jsonl", many,
                        base_id_for(zenodo_entry), provider="zenodo", partition="x", started=EXPORTED_AT, inputs=[],
                        part_bytes=16 * 1024)
    assert done.records == len(many) == 1800 and done.parts == [f"part-{n:05d}.gz" for n in range(len(done.parts))]
    assert len(done.parts) > 1
    for part in done.parts[:-1]:  # each closed once it held part_bytes (checked after each batch of lines)
        assert storage.root.joinpath(done.folder, part).stat().st_size >= 16 * 1024
    assert [line["_id"] for line in read_export(storage, done.folder)] == [f"zenodo--{r['originalId']}" for r in many]


def test_a_record_that_cannot_be_rendered_is_counted_and_named_and_the_others_go_on(storage, publisher, zenodo_entry,
                                                                                     published):
    state = list(PublishedState(storage, zenodo_entry, DAY2, exclude=set(), suppressed=set()))
    broken = {**state[0], "originalId": None}
    done = export_jsonl(storage, "zenodo/jsonl/20260302_050607-zenodo-MAP3_1.IndexRecord.jsonl", [broken, *state[1:]],
                        base_id_for(zenodo_entry), provider="zenodo", partition="x", started=EXPORTED_AT, inputs=[])
    assert (done.records, done.failed) == (len(state) - 1, 1)
    assert done.failures == [f"{broken['id']}: MAPRecord has no originalId (the local id its _id is made of)"]
    assert Manifest.from_bytes(storage.read_bytes(f"{done.folder}/_MANIFEST")).extra["Summary failed"] == "1"
    with pytest.raises(ValidationError, match="an empty JSON-L export would take the hub out of DPLA's index"):
        export_jsonl(storage, "zenodo/jsonl/20260302_050608-zenodo-MAP3_1.IndexRecord.jsonl", [broken],
                     base_id_for(zenodo_entry), provider="zenodo", partition="x", started=EXPORTED_AT, inputs=[])
    assert not storage.exists("zenodo/jsonl/20260302_050608-zenodo-MAP3_1.IndexRecord.jsonl")


def test_an_intermediate_provider_is_one_name_as_dplas_api_serves_it(storage, zenodo_entry, published):
    record = next(iter(PublishedState(storage, zenodo_entry, DAY2, exclude=set(), suppressed=set())))
    record = {**record, "intermediateProvider": ["Empire State Digital Network"]}
    assert index_document(record)["intermediateProvider"] == ["Empire State Digital Network"]  # the search index's
    source = jsonl_source(record, base_id_for(zenodo_entry))
    assert source["intermediateProvider"] == "Empire State Digital Network"  # ingestion3's jsonlRecord: one name


@pytest.mark.parametrize("backend", ["local", "s3"])
def test_a_failed_export_leaves_nothing_sparkindexer_would_pick(storage, publisher, zenodo_entry, published, backend,
                                                                request):
    if backend == "s3":
        endpoint, bucket = request.getfixturevalue("s3_endpoint"), request.getfixturevalue("s3_bucket")
        target = S3Storage(bucket, "", endpoint_url=endpoint)
    else:
        target = LocalStorage(storage.root.parent / "master-dataset")
    before = export(storage, target, zenodo_entry, DAY1, publisher).folder
    state = list(PublishedState(storage, zenodo_entry, DAY2, exclude=set(), suppressed=set()))

    def dies_midway():
        yield from (state * 200)  # a part is written and closed (uploaded) before the source fails
        raise OSError("the enrichment output's disk went away")

    folder = "zenodo/jsonl/20260302_050607-zenodo-MAP3_1.IndexRecord.jsonl"
    with pytest.raises(OSError):
        export_jsonl(target, folder, dies_midway(), base_id_for(zenodo_entry), provider="zenodo", partition="x",
                     started=EXPORTED_AT, inputs=[], part_bytes=1)
    assert sparkindexer_folder(target, "zenodo") == newest_export(target, "zenodo") == before
    assert list(target.list_keys(folder)) == []  # no part left behind either


def test_an_export_killed_mid_upload_is_never_picked(storage, publisher, zenodo_entry, published, s3_endpoint,
                                                     s3_bucket):
    import boto3

    target = S3Storage(s3_bucket, "", endpoint_url=s3_endpoint)
    before = export(storage, target, zenodo_entry, DAY1, publisher).folder
    folder = "zenodo/jsonl/20260302_050607-zenodo-MAP3_1.IndexRecord.jsonl"
    worker = Worker(KILLED_EXPORT.format(storage=str(storage.root), bucket=s3_bucket, endpoint=s3_endpoint,
                                         folder=folder), {})
    client = boto3.client("s3", endpoint_url=s3_endpoint)
    def uploading() -> bool:
        assert worker.process.poll() is None, worker.finish()
        return client.list_objects_v2(Bucket=s3_bucket, Prefix=folder).get("KeyCount", 0) > 0

    try:
        wait_for("a part of the export to be uploaded", uploading, 120)
    finally:
        if worker.process.poll() is None:
            worker.kill()
    assert [k for k in target.list_keys(folder)] and not target.exists(f"{folder}/_SUCCESS")
    assert sparkindexer_folder(target, "zenodo") == newest_export(target, "zenodo") == before


KILLED_EXPORT = """
import time
from datetime import date, datetime, timezone
from ingest_assets.core.registry import ProviderEntry
from ingest_assets.records.export.jsonl import PublishedState, export_jsonl
from ingest_assets.records.mapping import base_id_for
from ingest_assets.storage import LocalStorage
from ingest_assets.storage.backends import S3Storage

entry = ProviderEntry("zenodo", {{"mapping": "oai_dc"}})  # what the DPLA ids and _ids are made with
state = list(PublishedState(LocalStorage({storage!r}), entry, date(2026, 3, 2), exclude=set(), suppressed=set()))

def records():
    yield from state * 200
    time.sleep(600)  # killed here: parts uploaded, no _MANIFEST, no _SUCCESS

export_jsonl(S3Storage({bucket!r}, "", endpoint_url={endpoint!r}), {folder!r}, records(), base_id_for(entry),
             provider="zenodo", partition="x", started=datetime.now(timezone.utc), inputs=[], part_bytes=1)
"""


def test_a_reexport_of_a_day_sorts_after_that_days_exports_and_an_older_day_before_newer_ones(tmp_path):
    target = LocalStorage(tmp_path / "master-dataset")
    for name in ("20260302_235000-zenodo-MAP3_1.IndexRecord.jsonl", "20260301_010000-zenodo-MAP3_1.IndexRecord.jsonl",
                 "20260302_000000-other-MAP3_1.IndexRecord.jsonl"):
        target.write_bytes(f"zenodo/jsonl/{name}/_SUCCESS", b"")
    early_in_the_day = datetime(2026, 3, 9, 1, 0, 0, tzinfo=timezone.utc)
    assert export_stamp(target, "zenodo", DAY2, early_in_the_day) == datetime(2026, 3, 2, 23, 50, 1, tzinfo=timezone.utc)
    assert export_stamp(target, "zenodo", DAY3, early_in_the_day) == datetime(2026, 3, 3, 1, 0, 0, tzinfo=timezone.utc)
    assert export_stamp(target, "elsewhere", DAY2, early_in_the_day) == datetime(2026, 3, 2, 1, 0, tzinfo=timezone.utc)
    target.write_bytes("zenodo/jsonl/20260303_235959-zenodo-MAP3_1.IndexRecord.jsonl/_SUCCESS", b"")
    with pytest.raises(IngestError, match="no second of 2026-03-03 is left for another JSON-L export"):
        export_stamp(target, "zenodo", DAY3, early_in_the_day)


def test_the_s3_prefix_is_the_registry_entrys_else_the_providers_name(tmp_path):
    path = tmp_path / "registry.yaml"
    oai = "harvest: {type: oai, endpoint: 'https://hub.example.org/oai'}"
    path.write_text(f"hathi: {{mapping: hathi, s3_prefix: hathitrust, {oai}}}\ntn: {{mapping: qdc, s3_prefix: tennessee, "
                    f"{oai}}}\ngeorgia: {{mapping: dlg, {oai}}}\n")
    registry = load_registry(path)
    assert [s3_prefix(registry, name) for name in ("hathi", "tn", "georgia")] == ["hathitrust", "tennessee", "georgia"]
    path.write_text(f"hathi: {{mapping: hathi, s3_prefix: hathitrust, {oai}}}\nhathitrust: {{mapping: marc, {oai}}}\n")
    with pytest.raises(ConfigError, match="'hathi.s3_prefix': 'hathitrust' is also the JSON-L folder of 'hathitrust'"):
        s3_prefix(load_registry(path), "hathi")
    path.write_text("hathi: {mapping: hathi, s3_prefix: ../hathitrust}\n")
    with pytest.raises(ConfigError, match="hathi.s3_prefix"):
        load_registry(path)["hathi"]


def test_the_export_root_is_a_setting_defaulting_to_the_storage(tmp_path):
    home = {"INGEST_HOME": str(tmp_path)}
    assert Settings.from_env(home).jsonl_export_root == str(tmp_path / "storage")
    assert Settings.from_env({**home, "INGEST_STORAGE": "s3://hub-data/ingest"}).jsonl_export_root == "s3://hub-data/ingest"
    given = Settings.from_env({**home, "INGEST_JSONL_ROOT": "s3://dpla-master-dataset"})
    assert given.jsonl_export_root == "s3://dpla-master-dataset" and given.storage_url == str(tmp_path / "storage")
    for wrong in ("https://dpla-master-dataset.s3.amazonaws.com", "s3:///no-bucket"):
        with pytest.raises(ConfigError, match="INGEST_JSONL_ROOT must be a directory or s3://bucket/prefix"):
            Settings.from_env({**home, "INGEST_JSONL_ROOT": wrong})
