"""File harvests: XML with a record XPath, JSON lines and zips of either, from real fixture files."""

from __future__ import annotations

import io
import json
import stat
import tarfile
import zipfile

import pytest
from lxml import etree

from ingest_assets.core.errors import ConfigError, ParseError
from ingest_assets.records.harvest import REQUEST_LOG, harvest_records

OAI_NS = {"oai": "http://www.openarchives.org/OAI/2.0/"}
MODS = "http://www.loc.gov/mods/v3"
HARVARD = "harvard-librarycloud-listrecords-mods-resumption.xml"
DATACITE = "datacite-oai-listrecords-resumption-final.xml"
OAI_RECORDS = {
    "record_xpath": "/oai:OAI-PMH/oai:ListRecords/oai:record",
    "id_xpath": "string(oai:header/oai:identifier)",
    "namespaces": OAI_NS,
}


def run(provider, http, checkpoint, started, **block):
    return harvest_records(
        provider({"type": "file", **block}), started=started, window=None, http=http, checkpoint=checkpoint
    )


def test_xml_file_records_selected_by_xpath(oai_fixtures, provider, http, checkpoint, started):
    harvest = run(provider, http, checkpoint, started, path=str(oai_fixtures / HARVARD), format="xml", **OAI_RECORDS)
    records = list(harvest)
    assert len(records) == 10 and records[0]["id"] == "arn00007c00001" and records[9]["id"] == "arn00007c00011"
    doc = etree.fromstring(records[0]["document"].encode())
    assert doc.findtext(f".//{{{MODS}}}title") == "Plate 1. Clematis cylindrica"
    assert doc.nsmap[None] == OAI_NS["oai"]
    assert harvest.stats.records == 10 and harvest.stats.pages == 1 and harvest.stats.failed == 0
    [request] = [json.loads(line) for line in harvest.logs()[REQUEST_LOG]]
    assert (request["url"], request["status"], request["records"]) == (str(oai_fixtures / HARVARD), None, [0, 10])


def test_xml_single_record_file_in_a_default_namespace(shared_fixtures, provider, http, checkpoint, started):
    nara = {"nara": "http://description.das.nara.gov/"}
    harvest = run(
        provider, http, checkpoint, started, path=str(shared_fixtures / "dpla" / "provider-nara-item.xml"),
        format="xml", record_xpath="/nara:item", id_xpath="nara:naId", namespaces=nara,
    )
    [record] = list(harvest)
    assert record["id"] == "2132862"
    assert etree.fromstring(record["document"].encode()).tag == "{http://description.das.nara.gov/}item"


def test_record_without_id_is_reported_and_the_others_kept(oai_fixtures, provider, http, checkpoint, started, tmp_path):
    damaged = tmp_path / "page.xml"
    damaged.write_bytes((oai_fixtures / HARVARD).read_bytes().replace(b"<identifier>arn00007c00003</identifier>", b""))
    harvest = run(provider, http, checkpoint, started, path=str(damaged), format="xml", **OAI_RECORDS)
    ids = [r["id"] for r in harvest]
    assert len(ids) == 9 and "arn00007c00003" not in ids
    [error] = harvest.stats.errors
    assert error.file == str(damaged) and error.record.startswith("record #3 (line ")
    assert "record has no id" in str(error) and "testprov" in str(error)


def test_broken_xml_file_fails_naming_the_file(oai_fixtures, provider, http, checkpoint, started, tmp_path):
    broken = tmp_path / "broken.xml"
    broken.write_bytes((oai_fixtures / HARVARD).read_bytes()[:-2000])
    harvest = run(provider, http, checkpoint, started, path=str(broken), format="xml", **OAI_RECORDS)
    with pytest.raises(ParseError, match=rf"not well-formed XML after record #9.*'{broken}'"):
        list(harvest)
    assert harvest.stats.records == 9


@pytest.fixture
def jsonl_lines(shared_fixtures) -> list[bytes]:
    es = json.loads((shared_fixtures / "dpla" / "dpla-api-es-item-search-list.json").read_text())
    mdl = json.loads((shared_fixtures / "dpla" / "provider-minnesota-mdl-json.json").read_text())
    docs = [hit["_source"] for hit in es["hits"]["hits"]] + [mdl]
    lines = [json.dumps(doc, ensure_ascii=False).encode() for doc in docs]
    return [lines[0], b"{not json", lines[1], b"", json.dumps({"title": "no id"}).encode(), lines[2]]


def test_json_lines(jsonl_lines, provider, http, checkpoint, started, tmp_path):
    path = tmp_path / "records.jsonl"
    path.write_bytes(b"\n".join(jsonl_lines) + b"\n")
    harvest = run(provider, http, checkpoint, started, path=str(path), format="jsonl", id_path="id")
    records = list(harvest)
    assert [r["id"] for r in records] == [
        "4d85a6bd965dde8352c8235c43fe1c44", "c340ca5de0e46b0538213c65c650c8c6", "00002e8fc21342f03889239b438edc3b28196031",
    ]
    assert records[0]["document"] == jsonl_lines[0].decode() and records[0]["mimetype"] == "application_json"
    assert [e.record for e in harvest.stats.errors] == ["line 2", "line 5"]
    assert "not JSON" in str(harvest.stats.errors[0]) and str(path) in str(harvest.stats.errors[0])


def test_zip_members_are_treated_as_hostile(oai_fixtures, provider, http, checkpoint, started, tmp_path):
    archive = tmp_path / "dump.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("pages/harvard.xml", (oai_fixtures / HARVARD).read_bytes())
        zf.writestr("pages/datacite.xml", (oai_fixtures / DATACITE).read_bytes())
        zf.writestr("pages/truncated.xml", (oai_fixtures / DATACITE).read_bytes()[:6000])
        zf.writestr("../escape.xml", (oai_fixtures / DATACITE).read_bytes())
        zf.writestr("/etc/absolute.xml", (oai_fixtures / DATACITE).read_bytes())
        link = zipfile.ZipInfo("pages/link.xml")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(link, "/etc/passwd")
        zf.writestr("pages/bomb.xml", b"<a>" + b" " * (8 * 1024 * 1024) + b"</a>")
        zf.writestr("README.txt", "not selected by members")
    harvest = run(
        provider, http, checkpoint, started, path=str(archive), format="xml",
        members="pages/*.xml", **{**OAI_RECORDS, "record_xpath": "//oai:record"},
    )
    records = list(harvest)
    # truncated.xml still gives the record before the break, a duplicate of datacite.xml's first one
    assert len(records) == 10 + 6 and harvest.stats.duplicates == 1
    refused = {e.file.split("!")[1]: str(e) for e in harvest.stats.errors}
    assert set(refused) == {"pages/truncated.xml", "../escape.xml", "/etc/absolute.xml", "pages/link.xml", "pages/bomb.xml"}
    assert "not well-formed XML after record #1" in refused["pages/truncated.xml"]
    assert "path leaves the archive" in refused["../escape.xml"] and "symbolic link" in refused["pages/link.xml"]
    assert "zip bomb" in refused["pages/bomb.xml"]
    assert harvest.stats.pages == 3 and harvest.stats.records == 16


def test_zip_limits_and_jsonl_members(jsonl_lines, provider, http, checkpoint, started, tmp_path):
    archive = tmp_path / "lines.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("a.jsonl", b"\n".join(jsonl_lines[:3]))
        zf.writestr("b.jsonl", b"\n".join(jsonl_lines[3:]))
    block = {"path": str(archive), "format": "jsonl", "id_path": "id"}
    assert len(list(run(provider, http, checkpoint, started, **block))) == 3
    with pytest.raises(ParseError, match="zip has 2 members"):
        list(run(provider, http, checkpoint, started, **block, limits={"max_members": 1}))


def test_a_tar_gz_of_json_lines_is_read_with_the_same_checks(jsonl_lines, provider, http, checkpoint, started, tmp_path):
    archive = tmp_path / "lines.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        for name, data in (("a.jsonl", b"\n".join(jsonl_lines[:3])), ("../b.jsonl", b"\n".join(jsonl_lines[3:]))):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("c.jsonl")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tf.addfile(link)
    harvest = run(provider, http, checkpoint, started, path=str(archive), format="jsonl", id_path="id")
    assert len(list(harvest)) == 2 and harvest.stats.pages == 1  # a.jsonl: its second line is not JSON
    refused = {e.file.split("!")[1]: e.message for e in harvest.stats.errors}
    assert refused == {"a.jsonl": refused["a.jsonl"], "../b.jsonl": "unsafe entry name '../b.jsonl' (the path leaves the archive)",
                       "c.jsonl": "c.jsonl is a symbolic link (not followed)"}


def test_file_from_url_and_missing_path(http_server, oai_fixtures, provider, http, checkpoint, started):
    base = http_server(directory=oai_fixtures)  # served in place
    harvest = run(provider, http, checkpoint, started, url=f"{base}/{DATACITE}", format="xml", allow_private=True, **OAI_RECORDS)
    assert [r["id"] for r in harvest] == [f"oai:oai.datacite.org:{n}" for n in (1543900, 1543901, 1543902, 1543903, 1543904, 1543914)]
    [request] = [json.loads(line) for line in harvest.logs()[REQUEST_LOG]]  # the file is the one request
    assert (request["url"], request["status"], request["records"]) == (f"{base}/{DATACITE}", 200, [0, 6])
    with pytest.raises(ConfigError, match="harvest.path: no such file or folder"):
        list(run(provider, http, checkpoint, started, path=str(oai_fixtures / "missing.xml"), format="xml", **OAI_RECORDS))


def test_xml_file_declaring_entities_is_refused(oai_fixtures, provider, http, checkpoint, started, tmp_path):
    hostile = tmp_path / "hostile.xml"
    body = (oai_fixtures / HARVARD).read_bytes().replace(b"Plate 1. Clematis cylindrica", b"&xxe;")
    hostile.write_bytes(body.replace(b"<OAI-PMH ", b'<!DOCTYPE OAI-PMH [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><OAI-PMH ', 1))
    with pytest.raises(ParseError, match="declares entities"):
        list(run(provider, http, checkpoint, started, path=str(hostile), format="xml", **OAI_RECORDS))


def test_json_line_nested_too_deeply_is_that_lines_error(jsonl_lines, provider, http, checkpoint, started, tmp_path):
    path = tmp_path / "records.jsonl"
    deep = b"[" * 100_000 + b"]" * 100_000  # RecursionError in json.loads
    path.write_bytes(b"\n".join([jsonl_lines[0], deep, jsonl_lines[2]]) + b"\n")
    harvest = run(provider, http, checkpoint, started, path=str(path), format="jsonl", id_path="id")
    assert [r["id"] for r in harvest] == ["4d85a6bd965dde8352c8235c43fe1c44", "c340ca5de0e46b0538213c65c650c8c6"]
    [error] = harvest.stats.errors
    assert isinstance(error, ParseError) and error.record == "line 2" and "nested too deeply" in str(error)


def test_json_line_whose_id_is_a_lone_surrogate_is_that_lines_error(jsonl_lines, provider, http, checkpoint, started, tmp_path):
    path = tmp_path / "records.jsonl"
    path.write_bytes(b"\n".join([jsonl_lines[0], b'{"id": "x\\udc00y"}', jsonl_lines[2]]) + b"\n")
    harvest = run(provider, http, checkpoint, started, path=str(path), format="jsonl", id_path="id")
    assert [r["id"] for r in harvest] == ["4d85a6bd965dde8352c8235c43fe1c44", "c340ca5de0e46b0538213c65c650c8c6"]
    [error] = harvest.stats.errors
    assert error.record == "line 2" and "id has an unpaired UTF-16 surrogate" in str(error)


def test_external_dtd_entity_references_are_resolved_or_that_records_error(provider, http, checkpoint, started, tmp_path):
    """Under an XHTML doctype '&nbsp;' is legal but undeclared here: kept as a reference, mapping could not parse
    the stored document. HTML's entities are resolved; an unknown one fails its record, not the file."""
    page = tmp_path / "records.xml"
    page.write_text(
        '<!DOCTYPE records SYSTEM "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">\n<records>'
        "<rec><id>a</id><title>Caf&eacute;&nbsp;Main</title></rec>"
        "<rec><id>b</id><title>&internal-only;</title></rec>"
        "<rec><id>c</id><title>plain</title></rec></records>"
    )
    harvest = run(provider, http, checkpoint, started, path=str(page), format="xml", record_xpath="/records/rec", id_xpath="id")
    records = list(harvest)
    assert [r["id"] for r in records] == ["a", "c"]
    assert etree.fromstring(records[0]["document"].encode()).findtext("title") == "Caf\u00e9\u00a0Main"
    [error] = harvest.stats.errors
    assert "&internal-only;" in str(error) and error.record.startswith("record #2") and error.file == str(page)
