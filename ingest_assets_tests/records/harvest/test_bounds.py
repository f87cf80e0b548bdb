"""Sources that never end their list (fresh tokens forever, the same records under new tokens, an endless
cursor) end the harvest with a LimitError at the block's bounds, against real local servers."""

from __future__ import annotations

import json
from itertools import count
from urllib.parse import parse_qs

import pytest

from ingest_assets.core.errors import LimitError, ParseError
from ingest_assets.records.harvest import harvest_records, progress

OAI_PAGE = """<?xml version="1.0" encoding="UTF-8"?>
<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><responseDate>2026-11-24T00:00:00Z</responseDate>
<request verb="ListRecords">http://example.org/oai</request><ListRecords>{records}
<resumptionToken>{token}</resumptionToken></ListRecords></OAI-PMH>"""
OAI_RECORD = """<record><header><identifier>oai:endless:{id}</identifier><datestamp>2026-11-20</datestamp></header>
<metadata><oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/"
xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Record {id}</dc:title></oai_dc:dc></metadata></record>"""


class EndlessOai:
    """Every page has a fresh token; ``records`` says what a page holds: new ids, the same ids, or none."""

    def __init__(self, records: str):
        self.records, self.pages, self.fresh = records, 0, count()

    def __call__(self, environ, start_response):
        self.pages += 1
        ids = {"new": [next(self.fresh), next(self.fresh)], "same": [0, 1], "none": []}[self.records]
        body = OAI_PAGE.format(records="".join(OAI_RECORD.format(id=i) for i in ids), token=f"t{self.pages}")
        start_response("200 OK", [("Content-Type", "text/xml")])
        return [body.encode()]


def endless_cursor(environ, start_response):
    after = int(parse_qs(environ["QUERY_STRING"]).get("after", ["0"])[0])
    body = {"data": [{"id": f"r{after}"}, {"id": f"r{after + 1}"}], "meta": {"next": str(after + 2)}}
    start_response("200 OK", [("Content-Type", "application/json")])
    return [json.dumps(body).encode()]


def oai_block(url: str, **bounds) -> dict:
    return {"type": "oai", "endpoint": url, "allow_private": True, "full": True, "bounds": bounds}


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("records", "bounds", "needle", "yielded", "pages"), [
    ("new", {"max_pages": 5}, "goes on past 5 pages", 10, 5),
    ("same", {}, "20 pages in a row brought no new record", 2, 21),  # the default bound
    ("none", {"max_stale_pages": 3}, "3 pages in a row brought no new record", 0, 3),
])
def test_oai_list_that_never_ends_stops_at_its_bound(
    http_server, provider, http, checkpoint, started, records, bounds, needle, yielded, pages
):
    server = EndlessOai(records)
    url = http_server(app=server) + "/oai"
    harvest = harvest_records(provider(oai_block(url, **bounds)), started=started, window=None, http=http,
                              checkpoint=checkpoint)
    got = []
    with pytest.raises(LimitError, match=needle) as caught:
        for record in harvest:
            got.append(record)
    assert len(got) == yielded and server.pages == pages
    assert caught.value.provider == "testprov" and caught.value.file.startswith(url) and not caught.value.retryable


@pytest.mark.timeout(60)
def test_api_cursor_that_never_ends_stops_at_max_pages_and_the_deadline(
    http_server, provider, http, checkpoint, started, monkeypatch
):
    block = {
        "type": "api", "endpoint": f"{http_server(app=endless_cursor)}/items", "records_path": "data",
        "id_path": "id", "allow_private": True,
        "paging": {"style": "cursor", "cursor_param": "after", "cursor_path": "meta.next"},
    }
    run = lambda **bounds: harvest_records(  # noqa: E731
        provider({**block, "bounds": bounds}), started=started, window=None, http=http, checkpoint=checkpoint
    )
    with pytest.raises(LimitError, match="goes on past 4 pages"):
        list(run(max_pages=4))
    checkpoint.clear()
    clock = count(start=0.0, step=30.0)  # each page "takes" 30 s
    monkeypatch.setattr(progress.time, "monotonic", lambda: next(clock))
    with pytest.raises(LimitError, match="goes on past 2 minutes"):
        list(run(max_minutes=2))


def test_a_page_of_records_in_a_foreign_namespace_is_an_error_naming_the_page(http_server, provider, http, checkpoint, started):
    """Records in another namespace are not 'no records': the list would end early and look complete."""
    foreign = OAI_RECORD.replace("<record>", '<record xmlns="http://www.openarchives.org/OAI/1.1/">').format(id=1)
    body = OAI_PAGE.format(records=foreign, token="").encode()

    def app(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/xml")])
        return [body]

    url = http_server(app=app) + "/oai"
    harvest = harvest_records(provider(oai_block(url)), started=started, window=None, http=http, checkpoint=checkpoint)
    with pytest.raises(ParseError, match="page 1 lists 1 element") as caught:
        list(harvest)
    assert "OAI/1.1/}record" in str(caught.value) and caught.value.file.startswith(url)
