"""OAI-PMH harvests of real captured pages (read in place from the shared fixtures), replayed over HTTP."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from lxml import etree

from ingest_assets.core.errors import ParseError
from ingest_assets.records.harvest import harvest_records

OAI = "http://www.openarchives.org/OAI/2.0/"
MODS = "http://www.loc.gov/mods/v3"
DC = "http://purl.org/dc/elements/1.1/"
HARVARD = "harvard-librarycloud-listrecords-mods-resumption.xml"
DATACITE = "datacite-oai-listrecords-resumption-final.xml"
HARVARD_TOKEN = "AoEuYXJuMDAwMDdjMDAwMTE=:botanicals:10:mods"
FIRST = {"verb": "ListRecords", "metadataPrefix": "mods", "set": "botanicals"}
WRONG_CHARSET = "text/html;charset=ISO-8859-1"  # what NCAR's server sent for its UTF-8 body


def harvest(provider, url, http, checkpoint, started, window=None, prefix="mods", set_="botanicals"):
    block = {"type": "oai", "endpoint": url, "metadata_prefix": prefix, "allow_private": True}
    if set_:
        block["set"] = set_
    return harvest_records(provider(block), started=started, window=window, http=http, checkpoint=checkpoint)


def title(record) -> str:
    return etree.fromstring(record["document"].encode()).findtext(f".//{{{MODS}}}title")


def test_resumption_from_harvard_page_to_datacite_final_page(replay, oai_fixtures, provider, http, checkpoint, started):
    app, url = replay()
    app.add(FIRST, oai_fixtures / HARVARD)
    app.add({"verb": "ListRecords", "resumptionToken": HARVARD_TOKEN}, oai_fixtures / DATACITE)
    run = harvest(provider, url, http, checkpoint, started)

    records = [next(run) for _ in range(11)]  # page 1 fully handed on, first record of page 2
    request = {"metadataPrefix": "mods", "sets": ["botanicals"]}
    position = {"set": "botanicals", "token": HARVARD_TOKEN}
    assert checkpoint.load() == {"kind": "oai", "request": request, "position": position, "page": 1, "spooled": 10}
    assert list(checkpoint.spooled(request, 1)) == records[:10]  # page 1 spooled before the checkpoint moved on
    records += list(run)
    assert len(records) == 16 and run.stats.pages == 2
    assert records[0]["id"] == "arn00007c00001" and records[10]["id"] == "oai:oai.datacite.org:1543900"
    assert run.stats.expected == 56  # completeListSize of the empty final token
    assert checkpoint.load() is None
    assert app.requests == [FIRST, {"verb": "ListRecords", "resumptionToken": HARVARD_TOKEN}]

    mods = etree.fromstring(records[0]["document"].encode())
    assert mods.nsmap == {None: OAI, "xsi": "http://www.w3.org/2001/XMLSchema-instance"}  # inherited from the page
    assert mods.findtext(f".//{{{MODS}}}abstract").startswith("Full color. Reproduced in Herbier Général")
    dc = etree.fromstring(records[10]["document"].encode())
    assert dc.findtext(f".//{{{DC}}}title").strip() == "Traditional transcutaneous approaches in head and neck surgery"


def test_self_closing_token_ends_the_list(replay, oai_fixtures, provider, http, checkpoint, started):
    app, url = replay()
    app.add(
        FIRST, oai_fixtures / DATACITE,
        transform=lambda body: body.replace(b' cursor="50"></resumptionToken>', b' cursor="50"/>'),
    )
    run = harvest(provider, url, http, checkpoint, started)
    assert len(list(run)) == 6 and len(app.requests) == 1


def test_deleted_record_and_window_at_identify_granularity(replay, oai_fixtures, provider, http, checkpoint, started):
    app, url = replay()
    app.add({"verb": "Identify"}, oai_fixtures / "erasmus-oaicat-identify.xml")
    window_query = {
        "verb": "ListRecords", "metadataPrefix": "oai_dc", "from": "2004-02-16T00:00:00Z", "until": "2004-02-16T23:59:59Z",
    }
    app.add(window_query, oai_fixtures / "erasmus-getrecord-deleted.xml")
    window = (datetime(2004, 2, 16, tzinfo=timezone.utc), datetime(2004, 2, 17, tzinfo=timezone.utc))
    run = harvest(provider, url, http, checkpoint, started, window=window, prefix="oai_dc", set_=None)
    [record] = list(run)
    assert record["id"] == "hdl:1765/1160" and record["deleted"] is True
    header = etree.fromstring(record["document"].encode())
    assert header.get("status") == "deleted"
    assert [s.text for s in header.iterfind(f"{{{OAI}}}setSpec")] == ["1:1", "1:1"]  # kept as sent
    assert run.stats.deleted == 1 and app.requests == [{"verb": "Identify"}, window_query]


def test_bad_resumption_token_from_checkpoint_restarts_from_its_request(
    replay, oai_fixtures, provider, http, checkpoint, started
):
    app, url = replay()
    app.add({"verb": "ListRecords", "resumptionToken": "stale"}, oai_fixtures / "spec-example-error-badresumptiontoken.xml")
    app.add(FIRST, oai_fixtures / HARVARD)
    app.add({"verb": "ListRecords", "resumptionToken": HARVARD_TOKEN}, oai_fixtures / DATACITE)
    checkpoint.save({"kind": "oai", "request": {"metadataPrefix": "mods", "sets": ["botanicals"]},
                     "position": {"set": "botanicals", "token": "stale"}, "page": 3, "spooled": 0})
    run = harvest(provider, url, http, checkpoint, started)
    assert len(list(run)) == 16
    assert run.stats.resumed and run.stats.restarts == 1 and run.stats.pages == 6
    assert app.requests[1] == FIRST and checkpoint.load() is None


def test_control_characters_are_removed_and_the_page_reparsed(replay, oai_fixtures, provider, http, checkpoint, started):
    app, url = replay()
    broken = b"Plate 1. Clematis\x0b cylindrica&#x1;"

    def inject(body):
        assert body.count(b"Plate 1. Clematis cylindrica") == 1
        return body.replace(b"Plate 1. Clematis cylindrica", broken)

    app.add(FIRST, oai_fixtures / HARVARD, transform=inject)
    app.add({"verb": "ListRecords", "resumptionToken": HARVARD_TOKEN}, oai_fixtures / DATACITE)
    with pytest.raises(etree.XMLSyntaxError):  # the page as served is really broken
        etree.fromstring(inject((oai_fixtures / HARVARD).read_bytes()))
    run = harvest(provider, url, http, checkpoint, started)
    records = list(run)
    assert len(records) == 16 and run.stats.repaired_pages == 1
    assert title(records[0]) == "Plate 1. Clematis cylindrica"
    assert "removed 2 characters XML 1.0 forbids: U+000B at line " in run.stats.log_text()
    assert "; the reference &#x1; at line " in run.stats.log_text()


def test_page_broken_beyond_repair_names_page_and_url(replay, oai_fixtures, provider, http, checkpoint, started):
    app, url = replay()
    app.add(FIRST, oai_fixtures / HARVARD)
    app.add(
        {"verb": "ListRecords", "resumptionToken": HARVARD_TOKEN}, oai_fixtures / DATACITE,
        transform=lambda body: body.replace(b"</dc:creator>", b"</dc:creatr>", 1),
    )
    run = harvest(provider, url, http, checkpoint, started)
    got = []
    with pytest.raises(ParseError) as failure:
        for record in run:
            got.append(record)
    message = str(failure.value)
    assert "page 2 is not well-formed XML" in message and "testprov" in message
    assert f"{url}?verb=ListRecords&resumptionToken=" in message
    assert len(got) == 10 and checkpoint.load()["position"]["token"] == HARVARD_TOKEN  # a rerun resumes at page 2

    app.routes[1] = ({"verb": "ListRecords", "resumptionToken": HARVARD_TOKEN}, oai_fixtures / DATACITE, "text/xml", None)
    app.requests.clear()
    rerun = harvest(provider, url, http, checkpoint, started)
    records = list(rerun)
    assert [r["id"] for r in records[:10]] == [r["id"] for r in got] and len(records) == 16
    assert records[:10] == got  # page 1 from the spool, as the failed run yielded it
    assert app.requests == [{"verb": "ListRecords", "resumptionToken": HARVARD_TOKEN}]
    assert rerun.stats.resumed and rerun.stats.records == 16 and checkpoint.load() is None


@pytest.mark.parametrize("content_type", ["text/xml; charset=utf-8", WRONG_CHARSET])
def test_cyrillic_page_decoded_from_the_xml_not_the_header(replay, oai_fixtures, provider, http, checkpoint, started, content_type):
    app, url = replay()
    query = {"verb": "ListRecords", "metadataPrefix": "oai_dc"}
    app.add(query, oai_fixtures / "cyberleninka-listrecords-cyrillic-dcterms.xml", content_type=content_type)
    records = list(harvest(provider, url, http, checkpoint, started, prefix="oai_dc", set_=None))
    assert len(records) == 54 and records[0]["id"] == "oai:cyberleninka.ru:article/14074026"
    doc = etree.fromstring(records[0]["document"].encode())
    assert doc.findtext(f".//{{{DC}}}title") == "О ВЫЧИСЛЕНИИ ПОСТОЯННЫХ, ВХОДЯЩИХ В ОЦЕНКИ ЛИНЕЙНЫХ ФОРМ"


def test_ncar_page_with_wrong_content_type_and_empty_token(replay, oai_fixtures, provider, http, checkpoint, started):
    app, url = replay()
    query = {"verb": "ListRecords", "metadataPrefix": "dif"}
    app.add(query, oai_fixtures / "ncar-esg-listrecords-dif.xml", content_type=WRONG_CHARSET)
    run = harvest(provider, url, http, checkpoint, started, prefix="dif", set_=None)
    [record] = list(run)
    assert record["id"] == "oai:ESG-NCAR:701c2719-481e-11e5-861f-00c0f03d5b7c"
    dif = "http://gcmd.gsfc.nasa.gov/Aboutus/xml/dif/"
    doc = etree.fromstring(record["document"].encode())
    assert doc.findtext(f".//{{{dif}}}Entry_Title") == "CCSM run b30.232mgch data"
    assert app.requests == [query] and checkpoint.load() is None


def test_record_without_identifier_is_reported_and_the_others_kept(replay, oai_fixtures, provider, http, checkpoint, started):
    app, url = replay()
    app.add(FIRST, oai_fixtures / HARVARD, transform=lambda b: b.replace(b"<identifier>arn00007c00003</identifier>", b""))
    app.add({"verb": "ListRecords", "resumptionToken": HARVARD_TOKEN}, oai_fixtures / DATACITE)
    run = harvest(provider, url, http, checkpoint, started)
    ids = [r["id"] for r in run]
    assert len(ids) == 15 and "arn00007c00003" not in ids and run.stats.failed == 1
    [error] = run.stats.errors
    assert error.record == "page 1 record #3" and error.file.startswith(f"{url}?verb=ListRecords")
    assert "record has no header identifier" in str(error) and "testprov" in str(error)


def test_page_declaring_entities_is_refused(replay, oai_fixtures, provider, http, checkpoint, started):
    app, url = replay()
    doctype = b'<!DOCTYPE OAI-PMH [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'

    def hostile(body):
        body = body.replace(b"<OAI-PMH ", doctype + b"<OAI-PMH ", 1)
        return body.replace(b"Plate 1. Clematis cylindrica", b"&xxe;")

    app.add(FIRST, oai_fixtures / HARVARD, transform=hostile)
    with pytest.raises(ParseError, match="page 1: the document declares entities"):
        list(harvest(provider, url, http, checkpoint, started))


def test_a_repaired_page_is_logged_with_what_was_removed_and_where(replay_source, provider, http, checkpoint, started):
    """PUC-Rio Maxwell's ListRecords page as recorded (replays/pucrio): a U+000B inside a description."""
    source = replay_source("pucrio")
    run = harvest(provider, f"{source.base}/oai", http, checkpoint, started, prefix="oai_dc", set_=None)
    assert len(list(run)) == 5 and run.stats.repaired_pages == 1
    log = run.logs()["harvest-log.txt"].decode()
    assert (f"repaired page 1 ({source.base}/oai?verb=ListRecords&metadataPrefix=oai_dc): removed 1 character XML "
            "1.0 forbids: U+000B at line 5, column 12") in log
