"""One test per ingestion3 file harvester: the hub's delivery shape (built from ingestion3's own fixture records in
a temporary folder, a moto S3 bucket or a local HTTP server), harvested with the block docs/harvest-files.md gives
for that hub: record count, ids, deletions, and every record maps with the hub's profile."""

from __future__ import annotations

import json
from datetime import date

import boto3
import pytest
from lxml import etree

from ingest_assets.core.registry import ProviderEntry
from ingest_assets.records.harvest import REQUEST_LOG, harvest_records
from ingest_assets.records.mapping import mapper_for
from ingest_assets.storage.activities import RecordStream, write_activity
from ingest_assets.storage.avro import ORIGINAL_RECORD
from ingest_assets.storage.snapshot import snapshot_records, snapshot_sources
from ingest_assets_tests.support import deliveries
from ingest_assets_tests.support.deliveries import (
    OAI,
    json_variants,
    jsonl,
    nara_deletes,
    nara_export,
    upload_folder,
    write,
    write_gz,
    write_tar,
    write_zip,
)

# OAI-PMH records in the OAI namespace or none (ingestion3 reads them by local name)
OAI_BLOCK = {"format": "xml", "record_xpath": "//*:record",
             "id_xpath": "string(*[local-name()='header']/*[local-name()='identifier'])",
             "status": {"xpath": "string(*[local-name()='header']/@status)"}}


def harvest(name: str, profile: str, block: dict, http, checkpoint, started, s3_client=None):
    """The entry, its records and its run."""
    entry = ProviderEntry(name, {"harvest": {"type": "file", **block}, "mapping": profile})
    run = harvest_records(entry, started=started, window=None, http=http, checkpoint=checkpoint, s3_client=s3_client)
    return entry, list(run), run


def assert_every_record_maps(entry: ProviderEntry, records: list[dict]) -> None:
    mapper = mapper_for(entry)
    for record in records:
        if not record["deleted"]:
            result = mapper.map(record)
            assert result.record is not None, (record["id"], result.messages)


@pytest.fixture
def s3(s3_endpoint, monkeypatch):
    """A client of moto's S3 server; the harvest reaches it the way the platform does, through ``AWS_ENDPOINT_URL``."""
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_endpoint)
    return boto3.client("s3", endpoint_url=s3_endpoint)


# ---- JSON hubs ----------------------------------------------------------------------------------------------

def test_community_webs_zips_of_json_array_lines(tmp_path, http, checkpoint, started):
    """CommunityWebsHarvester: every .zip of the folder, each member a JSON array one record a line; records whose
    status is deleted are left out."""
    shape = deliveries.community_webs(tmp_path / "cw")
    write(tmp_path / "cw" / "README.txt", b"not a zip: not read")
    block = {"path": str(tmp_path / "cw"), "include": "*.zip", "format": "jsonl", "id_path": "id",
             "status": {"path": "status", "values": ["deleted"]}}
    entry, harvested, run = harvest("community-webs", "community-webs", block, http, checkpoint, started)
    assert [r["id"] for r in harvested] == shape.ids == [f"archive-it::seed:{n}" for n in range(1, 5)]
    assert run.harvester.reader.dropped == 1 and run.stats.failed == 0 and run.stats.pages == 2
    assert_every_record_maps(entry, harvested)


def test_georgia_jsonl_files_and_zips(tmp_path, http, checkpoint, started):
    """DlgFileHarvester: the folder's .jsonl files and the JSON lines in its .zip files; deleted status left out."""
    deliveries.georgia(tmp_path / "dlg")
    block = {"path": str(tmp_path / "dlg"), "include": ["*.jsonl", "*.zip"], "format": "jsonl", "id_path": "id",
             "status": {"path": "status"}}
    entry, harvested, run = harvest("georgia", "dlg", block, http, checkpoint, started)
    assert [r["id"] for r in harvested] == ["aaa_agpapers_1016", "aaa_agpapers_1017", "dlg_vang_1", "dlg_vang_2"]
    assert run.harvester.reader.dropped == 1 and run.stats.records == 4 and run.mode == "full"
    assert_every_record_maps(entry, harvested)


def test_lc_dpla_jsonl_ids_after_the_last_double_dash(tmp_path, http, checkpoint, started):
    """DplaJsonlFileHarvester: zips of DPLA JSON lines (index hits, mapped by ingestion3's LcRetconMapping) whose
    ``_id`` is ``lc--<id>``: the id is what follows the last ``--``."""
    shape = deliveries.lc(tmp_path / "lc")
    block = {"path": str(tmp_path / "lc"), "include": "*.zip", "format": "jsonl", "id_path": "_id",
             "id_pattern": "^(?:.*--)?(.+)$"}
    entry, harvested, _run = harvest("lc", "json-retcon", block, http, checkpoint, started)
    assert [r["id"] for r in harvested] == shape.ids and all(len(local_id) == 32 for local_id in shape.ids)
    assert_every_record_maps(entry, harvested)


def test_florida_s3_prefix_and_one_object(tmp_path, s3, http, checkpoint, started):
    """FlFileHarvester: an S3 prefix of .jsonl and .zip files (synced), or one object (copied); the id is
    sourceResource.identifier; deleted status left out."""
    shape = deliveries.florida(tmp_path / "fl")
    upload_folder(s3, "dpla-hub-fl", "deliveries", tmp_path / "fl")
    block = {"format": "jsonl", "id_path": "sourceResource.identifier", "status": {"path": "status"}}
    entry, harvested, run = harvest("florida", "fl", {**block, "path": "s3://dpla-hub-fl/deliveries"}, http, checkpoint,
                                    started)
    assert [r["id"] for r in harvested] == shape.ids == [f"http://purl.flvc.org/fsu/fd/FSU_{n}" for n in range(4)]
    requests = [json.loads(line) for line in run.logs()[REQUEST_LOG]]
    assert [(r["url"], r["records"]) for r in requests] == [
        ("s3://dpla-hub-fl/deliveries/SSDN-2026-05-24.jsonl", [0, 2]), ("s3://dpla-hub-fl/deliveries/SSDN-2026-05-25.zip", [2, 4])]
    assert_every_record_maps(entry, harvested)
    _entry, one, _run = harvest("florida", "fl", {**block, "path": "s3://dpla-hub-fl/deliveries/SSDN-2026-05-24.jsonl"},
                                http, checkpoint, started)
    assert [r["id"] for r in one] == [r["id"] for r in harvested[:2]]


def test_heartland_jsonl_and_zips_with_at_ids(tmp_path, http, checkpoint, started):
    """HeartlandFileHarvester (Missouri + Iowa): .jsonl files and zips of JSON lines; the id is ``@id``."""
    deliveries.heartland(tmp_path / "heartland")
    block = {"path": str(tmp_path / "heartland"), "include": ["*.jsonl", "*.zip"], "format": "jsonl", "id_path": "@id",
             "status": {"path": "status", "action": "delete"}}
    entry, harvested, run = harvest("heartland", "heartland", block, http, checkpoint, started)
    assert [(r["id"], r["deleted"]) for r in harvested] == [  # files in name order: ia.zip, then mo.jsonl
        (f"missouri--urn:data.mohistory.org:msu_all:{n}", n == 3) for n in (2, 3, 0, 1)]
    assert run.stats.deleted == 1  # kept as a deletion (action: delete), status compared case aside
    assert_every_record_maps(entry, harvested)


def test_nypl_s3_zip_of_json_lines_with_embedded_mods(tmp_path, s3, http, checkpoint, started):
    """NYPLFileHarvester: one zip on S3 (copied) of JSON lines whose ``uuid`` is the id; MODS inside."""
    shape = deliveries.nypl(tmp_path / "nypl")
    upload_folder(s3, "nypl-deliveries", "2026", tmp_path / "nypl")
    block = {"path": "s3://nypl-deliveries/2026/nypl-export.zip", "format": "jsonl", "id_path": "uuid"}
    entry, harvested, _run = harvest("nypl", "nypl", block, http, checkpoint, started)
    assert [r["id"] for r in harvested] == shape.ids and len(shape.ids) == 3
    assert_every_record_maps(entry, harvested)


# ---- XML hubs -----------------------------------------------------------------------------------------------

def test_hathi_tar_gz_of_marc_collections(tmp_path, http, checkpoint, started):
    """HathiFileHarvester: .tar.gz files of MARC XML collections (only .xml members); the id is the 001 field."""
    deliveries.hathi(tmp_path / "hathi")
    block = {"path": str(tmp_path / "hathi"), "include": "*.gz", "members": ["*.xml", "!._*"], "format": "xml",
             "namespaces": {"marc": "http://www.loc.gov/MARC21/slim"}, "record_xpath": "//marc:record",
             "id_xpath": "string(marc:controlfield[@tag='001'])"}
    entry, harvested, run = harvest("hathi", "hathi", block, http, checkpoint, started)
    assert [r["id"] for r in harvested] == ["009420214", "009420215", "009420216"]
    assert run.stats.pages == 2 and run.stats.failed == 0
    assert_every_record_maps(entry, harvested)


NARA_BLOCK = {"format": "xml", "namespaces": {"nara": "http://description.das.nara.gov/"},
              "record_xpath": "//*:item | //*:itemAv | //*:fileUnit",
              "filter_xpath": "nara:digitalObjectArray/nara:digitalObject", "id_xpath": "string(nara:naId)",
              "order": "descending"}


def test_nara_full_export_tars_with_deletes(tmp_path, http, checkpoint, started):
    """NaraFileHarvester: every .tar.gz (or .tar.bz2) of the folder, items, itemAvs and fileUnits with digital
    objects only, the newest file's version of a record first, the naIds of deletes/*.xml removed; the itemAv and
    the file unit map as NaraMapping maps them."""
    shape = deliveries.nara(tmp_path / "nara")
    block = {**NARA_BLOCK, "path": str(shape.folder), "include": ["*.tar.gz", "*.tar.bz2"], "members": "*.xml",
             "deletes": {"include": "deletes/*.xml"}}
    entry, harvested, run = harvest("nara", "nara", block, http, checkpoint, started)
    assert [(r["id"], r["deleted"]) for r in harvested] == [
        ("1002", True), ("1003", False), ("1004", False), ("1005", False), ("1006", False), ("1001", False)]
    assert run.stats.duplicates == 2 and run.harvester.reader.skipped == 3  # 1003 and 1002 again; 1009, 2 file units
    assert [etree.fromstring(r["document"].encode()).tag.split("}")[1] for r in harvested[1:5]] == [
        "item", "item", "itemAv", "fileUnit"]
    assert_every_record_maps(entry, harvested)


def test_nara_delta_raw_delivery_applied_onto_the_last_full_harvest(tmp_path, tmp_storage, http, checkpoint, started):
    """NaraDeltaHarvester + NaraMergeUtil: the month's raw delivery (export-group zips, delete lists at the top and
    inside a zip, NaidsList rosters that are no delete lists) is an incremental harvest of the day whose output has
    the deletions; the provider's state as of that day (ingest-assets snapshot) is NaraMergeUtil's merged output."""
    base_day, delta_day = date(2026, 1, 1), date(2026, 2, 9)
    full = {**NARA_BLOCK, "path": str(write_tar(tmp_path / "base" / "nara.tar.gz", {"x.xml": nara_export(["1", "2", "3", "4"])}))}
    delivery = tmp_path / "202602"
    write_zip(delivery / "2026-02-07_17.115_DESC_0001.zip", {"17.115/a.xml": nara_export(["2", "5"])})
    write_zip(delivery / "2026-02-07_17.115_DESC_0002.zip", {"17.115/b.xml": nara_export(["6"]),
                                                             "NAC_DESC_Deletes_002.xml": nara_deletes(["6"])})
    write(delivery / "2026-02-07_17.115_DESC_NaidsList.xml", b"<NaidsList><Naid>2</Naid><Naid>5</Naid></NaidsList>")
    write(delivery / "NAC_DESC_Deletes_001.xml", nara_deletes(["3", "404"]))
    delta = {**NARA_BLOCK, "path": str(delivery), "include": "*_DESC_*.zip", "members": ["*.xml", "!*NaidsList*"],
             "deletes": {"include": "NAC_DESC_Deletes_*.xml"}, "delta": True}
    outputs = []
    for day, block in ((base_day, full), (delta_day, delta)):
        entry, harvested, run = harvest("nara", "nara", block, http, checkpoint, started)
        stream = RecordStream(iter(harvested), started=started, summary=lambda run=run: {"mode": run.mode})
        write_activity(tmp_storage, stream, provider="nara", activity="harvest", day=day, started=started,
                       schema=ORIGINAL_RECORD, partition=f"{day}|nara")
        outputs.append((harvested, run))
    (_, base_run), (delta_records, delta_run) = outputs
    assert base_run.mode == "full" and delta_run.mode == "incremental"
    # the delete lists first (404 is in no harvest: an index deletion of nothing), then the zips newest first;
    # the zip's own delete list deletes 6, which its records had brought already (counted, noted)
    assert [(r["id"], r["deleted"]) for r in delta_records] == [("3", True), ("404", True), ("6", False), ("2", False),
                                                              ("5", False)]
    assert delta_run.harvester.late_deletes == 1 and "came after a record" in delta_run.stats.log_text()
    assert_every_record_maps(entry, delta_records)
    merged = {r["id"]: r for r in snapshot_records(snapshot_sources(tmp_storage, "nara", delta_day))}
    assert sorted(merged, key=int) == ["1", "2", "4", "5", "6"]
    assert merged["2"]["ingestDate"] == merged["1"]["ingestDate"]  # one start here; the delta's version is the one kept
    assert snapshot_sources(tmp_storage, "nara", delta_day)[0].output.day == delta_day


@pytest.mark.parametrize(("hub", "fixture", "namespace"), [
    ("ohio", "ohio.xml", OAI), ("northwest-heritage", "northwest-heritage.xml", OAI), ("txdl", "txdl.xml", None)])
def test_oai_dumps_on_s3_zips_and_gz(tmp_path, s3, http, checkpoint, started, hub, fixture, namespace):
    """OaiFileHarvester (ohio, northwest-heritage, txdl): an S3 prefix of .zip files (OAI-PMH responses as members)
    and .gz files (one response each); header status deleted left out. txdl's records carry no OAI namespace
    (unprefixed fields of its own): its dump is reconstructed without one."""
    shape = deliveries.oai_dump(tmp_path / hub, fixture, namespace)
    upload_folder(s3, f"{hub}-oai", "dumps", tmp_path / hub)
    entry, harvested, run = harvest(hub, hub, {**OAI_BLOCK, "path": f"s3://{hub}-oai/dumps"}, http, checkpoint, started)
    assert [r["id"] for r in harvested] == shape.ids and run.harvester.reader.dropped == len(shape.statused) == 1
    assert_every_record_maps(entry, harvested)


def test_jh3_xmll_lines_from_urls(tmp_path, http_server, http, checkpoint, started):
    """OaiXmllHarvester: pyoaiharvester's output broken into lines by xmll, one OAI record a line, here from a list
    of URLs (ingestion3 reads a path; ``path:`` reads the same files from a folder); prefixes left undeclared."""
    shape = deliveries.jh3(tmp_path / "jh3")
    write_gz(tmp_path / "jh3" / "part-00002.xml.gz", b"\n\n<record><header>broken\n")
    base = http_server(directory=tmp_path / "jh3")
    urls = [f"{base}/part-00000.xml", f"{base}/part-00001.xml.gz", f"{base}/part-00002.xml.gz"]
    block = {"urls": urls, "allow_private": True, "format": "xml-lines", "record_xpath": "/record",
             "id_xpath": "string(header/identifier)"}
    entry, harvested, run = harvest("jh3", "jh3", block, http, checkpoint, started)
    assert [r["id"] for r in harvested] == shape.ids and len(shape.ids) == 3
    [error] = run.stats.errors
    assert error.file == f"{base}/part-00002.xml.gz" and error.record == "line 3" and "not well-formed" in error.message
    assert [json.loads(line)["status"] for line in run.logs()[REQUEST_LOG]] == [200, 200, 200]
    assert_every_record_maps(entry, harvested)


def test_smithsonian_gzipped_xmll_docs(tmp_path, http, checkpoint, started):
    """SiFileHarvester: .xml.gz files of one ``<doc>`` a line (xmll, no root), beside the expected-counts .txt."""
    shape = deliveries.smithsonian(tmp_path / "si")
    block = {"path": str(tmp_path / "si"), "include": "*.xml.gz", "format": "xml-lines", "record_xpath": "//doc",
             "id_xpath": "string(descriptiveNonRepeating/record_ID)"}
    entry, harvested, _run = harvest("smithsonian", "si", block, http, checkpoint, started)
    assert [r["id"] for r in harvested] == shape.ids and len(shape.ids) == 5
    assert_every_record_maps(entry, harvested)


@pytest.mark.parametrize("hub", ["virginias", "ct", "vt"])
def test_zips_of_one_record_files_named_by_member(tmp_path, http, checkpoint, started, hub):
    """VaFileHarvester (virginias, ct) and VtFileHarvester (vt): zips whose every member is one XML record, the
    member's name its id."""
    shape = deliveries.one_record_zips(tmp_path / hub, hub)
    write_zip(tmp_path / hub / "batch-3.zip", {"records/broken.xml": b"<record><title>cut short"})
    block = {"path": str(tmp_path / hub), "include": "*.zip", "format": "xml", "record_xpath": "/*", "id_from": "name"}
    entry, harvested, run = harvest(hub, hub, block, http, checkpoint, started)
    assert [r["id"] for r in harvested] == shape.ids == [f"records/{hub}-{n}.xml" for n in range(4)]
    [error] = run.stats.errors  # a member that does not parse is counted, naming it; the others are read
    assert error.file == f"{tmp_path / hub / 'batch-3.zip'}!records/broken.xml"
    assert_every_record_maps(entry, harvested)


def test_the_platform_s3_settings_reach_the_hub_bucket(tmp_path, s3_endpoint, http, checkpoint, started):
    """The Dagster layer hands the harvest dagster-aws's client of the storage's S3 settings (defs/s3.py)."""
    from functools import partial

    from ingest_assets.defs.s3 import s3_client

    write(tmp_path / "d" / "a.jsonl", jsonl(json_variants("dlg.json", ["x1", "x2"], deliveries.set_at("id"))))
    client = partial(s3_client, {"endpoint_url": s3_endpoint})
    upload_folder(client(), "georgia-files", "in", tmp_path / "d")
    block = {"path": "s3://georgia-files/in", "format": "jsonl", "id_path": "id"}
    _entry, harvested, _run = harvest("georgia", "dlg", block, http, checkpoint, started, s3_client=client)
    assert [r["id"] for r in harvested] == ["x1", "x2"]

