"""A file delivery read by worker processes: the same records in the same order as read in the harvest's process, a
file's records in bounded chunks, a failing or dying worker naming its file, and no worker left behind."""

from __future__ import annotations

import gzip
import json
import os
import re
import signal

import pytest

from ingest_assets.core.errors import ArchiveError, ConfigError, IngestError
from ingest_assets.core.registry import ProviderEntry
from ingest_assets.core.workers import RemoteTraceback
from ingest_assets.records.harvest import REQUEST_LOG, harvest_records
from ingest_assets.records.harvest.file_chunks import CHUNK_RECORDS, Chunk, FileRead, FileReader, FileTask
from ingest_assets_tests.support import alive, wait_for
from ingest_assets_tests.support.deliveries import nara_deletes, write, write_gz, write_zip
from ingest_assets_tests.support.workers import worker_pids

OAI = {"oai": "http://www.openarchives.org/OAI/2.0/"}
PAGES = ["harvard-librarycloud-listrecords-mods-resumption.xml", "datacite-oai-listrecords-resumption-final.xml",
         "zenodo-listrecords-oai_dc.xml", "ncar-esg-listrecords-dif.xml", "cyberleninka-listrecords-cyrillic-dcterms.xml",
         "scholarsportal-dvn-listrecords-deleted-page1.xml", "scholarsportal-dvn-listrecords-deleted-page2-final.xml"]
BLOCK = {"type": "file", "format": "xml", "include": ["*.xml.gz", "*.xml", "*.zip"], "record_xpath": "//oai:record",
         "id_xpath": "string(oai:header/oai:identifier)", "namespaces": OAI,
         "status": {"xpath": "string(oai:header/@status)", "values": ["deleted"], "action": "delete"},
         "deletes": {"include": "deletes/*.xml", "id_element": "//naId"}}


def delivery(folder, oai_fixtures):
    """Real OAI-PMH pages as a hub delivers them: gzipped, one again (its records duplicates), one with a record
    that has no id, a zip with a member that is not well-formed, and a delete list."""
    pages = [(oai_fixtures / name).read_bytes() for name in PAGES]
    for number, page in enumerate(pages):
        write_gz(folder / f"{number:02d}.xml.gz", page)
    write(folder / "10-again.xml", pages[0])
    write(folder / "11-no-id.xml", pages[0].replace(b"<identifier>arn00007c00005</identifier>", b""))
    write_zip(folder / "12-bundle.zip", {"a.xml": pages[2], "b.xml": pages[3][:-300]})
    write(folder / "deletes" / "2026-01.xml", nara_deletes(["arn00007c00003", "not-harvested"]))
    return folder


def harvested(folder, http, checkpoint, started, **block):
    """The harvest's records, counts, errors, request log and log text; with workers, every file after the first
    few (read here while the workers start) read by a worker."""
    entry = ProviderEntry("hub", {"harvest": {**BLOCK, "path": str(folder), **block}})
    run = harvest_records(entry, started=started, window=None, http=http, checkpoint=checkpoint)
    records = [next(run)]
    if block["workers"] > 1:
        wait_for("the workers' start", lambda: len(worker_pids()) == block["workers"])
    records += run
    errors = [(error.file, error.record, error.message) for error in run.stats.errors]
    return records, run.metadata(), errors, [json.loads(line) for line in run.logs()[REQUEST_LOG]], run.stats.log_text()


def test_workers_harvest_the_records_read_in_process_in_the_same_order(tmp_path, oai_fixtures, http, checkpoint, started):
    folder = delivery(tmp_path / "hub", oai_fixtures)
    alone = harvested(folder, http, checkpoint, started, workers=1)
    assert harvested(folder, http, checkpoint, started, workers=3) == alone
    records, counts, errors, requests, _ = alone
    assert records[:2] == [{**records[0], "id": "arn00007c00003", "deleted": True},
                           {**records[1], "id": "not-harvested", "deleted": True}]
    # duplicates: the page again (10), the page without one id (9), the zip's zenodo page (7), the harvard record
    # of an id the delete list had deleted (1); deleted: the delete list's 2, scholarsportal's 9 + 6
    assert counts["records"] == len(records) == 98 and counts["duplicates"] == 27 and counts["deleted"] == 17
    assert [(file.rsplit("/", 1)[1], record) for file, record, _ in errors] == [
        ("11-no-id.xml", "record #5 (line 579)"), ("12-bundle.zip!b.xml", None)]
    assert [request["url"].rsplit("/", 1)[1] for request in requests] == ["2026-01.xml", *(
        f"{n:02d}.xml.gz" for n in range(7)), "10-again.xml", "11-no-id.xml", "12-bundle.zip"]
    assert not worker_pids()


def test_a_files_records_come_in_bounded_chunks_and_those_before_its_error_first(tmp_path, oai_fixtures):
    page = (oai_fixtures / PAGES[4]).read_text(encoding="utf-8")  # 54 records
    copies = [re.sub(r"(<identifier>[^<]+)</identifier>", rf"\1-{n}</identifier>", page) for n in range(12)]
    records = "".join(re.search(r"<ListRecords>(.*)</ListRecords>", text, re.S).group(1) for text in copies)
    big = write_gz(tmp_path / "big.xml.gz", page.split("<ListRecords>")[0].encode() + b"<ListRecords>" + records.encode()
                   + b"</ListRecords></OAI-PMH>")
    entry = ProviderEntry("hub", {"harvest": {**BLOCK, "path": str(tmp_path)}})
    reader = FileReader("hub", entry.require("harvest"), 1)
    items = list(reader(FileTask(str(big), "s3://hub/big.xml.gz", "big.xml.gz")))
    assert [len(item.records) for item in items[:-1]] == [CHUNK_RECORDS, CHUNK_RECORDS, 12 * 54 - 2 * CHUNK_RECORDS]
    assert items[-1] == FileRead(pages=1, skipped=0, dropped=0, notes=())
    truncated = write_gz(tmp_path / "cut.xml.gz", gzip.decompress(big.read_bytes())[:-4000])  # the XML cut short
    read, failure = [], None
    try:
        for item in reader(FileTask(str(truncated), "s3://hub/cut.xml.gz", "cut.xml.gz")):
            read.append(item)
    except IngestError as exc:
        failure = exc
    assert all(isinstance(item, Chunk) for item in read) and sum(len(item.records) for item in read) > 2 * CHUNK_RECORDS
    assert failure.file == "s3://hub/cut.xml.gz" and "not well-formed XML after record" in failure.message


def test_a_file_failing_in_a_worker_ends_the_harvest_naming_it_and_no_worker_is_left(tmp_path, oai_fixtures, http,
                                                                                   checkpoint, started):
    folder = delivery(tmp_path / "hub", oai_fixtures)
    corrupt = write(folder / "05.xml.gz", (folder / "05.xml.gz").read_bytes()[:-30])
    entry = ProviderEntry("hub", {"harvest": {**BLOCK, "path": str(folder), "workers": 2}})
    run = harvest_records(entry, started=started, window=None, http=http, checkpoint=checkpoint)
    first = next(run)  # read in this process while the workers start; the files after the next go to them
    wait_for("the workers' start", lambda: len(worker_pids()) == 2)
    workers = worker_pids()
    assert first["id"] == "arn00007c00003"
    with pytest.raises(ArchiveError, match="corrupt gzip stream") as raised:
        list(run)
    assert (raised.value.provider, raised.value.file) == ("hub", str(corrupt))
    assert isinstance(raised.value.__cause__, RemoteTraceback)  # raised in the worker that read the file
    assert not any(alive(pid) for pid in workers)


def test_a_worker_that_dies_is_an_error_naming_its_file(tmp_path, oai_fixtures, http, checkpoint, started):
    folder = delivery(tmp_path / "hub", oai_fixtures)
    entry = ProviderEntry("hub", {"harvest": {**BLOCK, "path": str(folder), "workers": 2}})
    run = harvest_records(entry, started=started, window=None, http=http, checkpoint=checkpoint)
    next(run)
    wait_for("the workers' start", lambda: len(worker_pids()) == 2)
    workers = worker_pids()
    for pid in workers:
        os.kill(pid, signal.SIGKILL)
    with pytest.raises(IngestError, match=r"a worker process \(pid \d+\) is gone \(exit code -9") as raised:
        list(run)
    assert raised.value.retryable and raised.value.file.startswith(str(folder))
    assert not any(alive(pid) for pid in workers)


def test_the_workers_key_is_a_positive_number():
    with pytest.raises(ConfigError, match="workers"):
        ProviderEntry("hub", {"harvest": {**BLOCK, "path": "/data/hub", "workers": 0}}).require("harvest")
