"""JSON API harvests (cursor, offset, next link) over real HTTP, paging through real DPLA records."""

from __future__ import annotations

import json
from datetime import timedelta
from urllib.parse import parse_qs

import pytest

from ingest_assets.core.errors import FetchError, ParseError
from ingest_assets.records.harvest import REQUEST_LOG, harvest_records

STYLES = {
    "cursor": {"style": "cursor", "cursor_param": "after", "cursor_path": "meta.next"},
    "offset-total": {"style": "offset", "page_size": 2, "total_path": "total"},
    "offset": {"style": "offset", "offset_param": "start", "limit_param": "rows", "page_size": 2},
    "next": {"style": "next", "next_path": "links.next"},
    "link": {"style": "next"},
}


class JsonApi:
    """A paged JSON API: ``/<style>`` answers with ``{"data": [...], ...}`` two items a page."""

    def __init__(self, items):
        self.items, self.size, self.requests, self.fail = items, 2, [], None

    def __call__(self, environ, start_response):
        style = environ["PATH_INFO"].strip("/")
        q = {k: v[0] for k, v in parse_qs(environ["QUERY_STRING"]).items()}
        self.requests.append((style, q))
        headers = [("Content-Type", "application/json")]
        if self.fail and self.fail(q):
            start_response("500 Server Error", headers)
            return [b"{}"]
        if style == "deep":  # nesting that ends Python's recursive JSON parser
            start_response("200 OK", headers)
            return [b"[" * 100_000 + b"]" * 100_000]
        if style == "broken":
            start_response("200 OK", [("Content-Type", "text/html")])
            return [b"<html><body>Service temporarily moved</body></html>"]
        if style == "cursor":
            start = int(q.get("after", "0"))
            end = start + self.size
            body = {"data": self.items[start:end], "meta": {"next": str(end) if end < len(self.items) else None}}
        elif style == "offset-total":
            start = int(q["offset"])
            body = {"data": self.items[start : start + int(q["limit"])], "total": len(self.items)}
        elif style == "offset":
            start = int(q["start"])
            body = {"data": self.items[start : start + int(q["rows"])]}
        elif style == "ignore-offset":  # answers every offset with the first page
            body = {"data": self.items[: int(q["limit"])]}
        elif style == "cycle":  # pages 1 -> 2 -> 3 -> 2 ..., by cursor (meta.next) and by link (links.next)
            page = int(q.get("page", q.get("after", "1")))
            nxt = page + 1 if page < 3 else 2
            body = {"data": self.items[(page - 1) * self.size : page * self.size],
                    "links": {"next": f"?page={nxt}"}, "meta": {"next": str(nxt)}}
        else:  # next / link / loop
            page = int(q.get("page", "1"))
            more = page * self.size < len(self.items)
            nxt = f"?page={page}" if style == "loop" else (f"?page={page + 1}" if more else None)
            body = {"data": self.items[(page - 1) * self.size : page * self.size], "links": {"next": nxt}}
            if style == "link" and more:
                headers.append(("Link", f'<{environ["PATH_INFO"]}?page={page + 1}>; rel="next"'))
        start_response("200 OK", headers)
        return [json.dumps(body).encode()]


@pytest.fixture
def api(http_server, shared_fixtures):
    es = json.loads((shared_fixtures / "dpla" / "dpla-api-es-item-search-list.json").read_text())
    mdl = json.loads((shared_fixtures / "dpla" / "provider-minnesota-mdl-json.json").read_text())
    sources = [hit["_source"] for hit in es["hits"]["hits"]]
    items = [sources[0], ["not", "an object"], sources[1], {"title": "a record without an id"}, mdl]
    app = JsonApi(items)
    app.url = http_server(app=app)
    app.good = [sources[0], sources[1], mdl]
    return app


def run(provider, api, style, http, checkpoint, started, paging=None, params=None):
    block = {
        "type": "api", "endpoint": f"{api.url}/{style}", "records_path": "data", "id_path": "id",
        "paging": paging or STYLES[style], "params": params or {"q": "*"}, "allow_private": True,
    }
    return harvest_records(provider(block), started=started, window=None, http=http, checkpoint=checkpoint)


@pytest.mark.parametrize("style", list(STYLES))
def test_paging_styles_harvest_every_good_record(api, style, provider, http, checkpoint, started):
    harvest = run(provider, api, style, http, checkpoint, started)
    records = list(harvest)
    assert [r["id"] for r in records] == [
        "4d85a6bd965dde8352c8235c43fe1c44", "c340ca5de0e46b0538213c65c650c8c6", "00002e8fc21342f03889239b438edc3b28196031",
    ]
    assert [json.loads(r["document"]) for r in records] == api.good
    assert {(r["mimetype"], r["deleted"]) for r in records} == {("application_json", False)}
    assert harvest.stats.failed == 2
    assert [(e.record, e.file.split("?")[0]) for e in harvest.stats.errors] == [
        ("page 1 record #2", f"{api.url}/{style}"), ("page 2 record #2", f"{api.url}/{style}"),
    ]
    assert "JSON list, not an object" in str(harvest.stats.errors[0])
    assert harvest.metadata() == {
        "pages": 3 if style != "offset" else 4, "records": 3, "deleted": 0, "failed": 2, "duplicates": 0,
        "repaired_pages": 0, "restarts": 0, "resumed": False,
        **({"expected": 5} if style == "offset-total" else {}),  # the total the pages announce
    }
    csv_rows = harvest.stats.errors_csv().splitlines()
    assert csv_rows[0] == "provider,file,record,message" and len(csv_rows) == 3
    assert csv_rows[1].startswith(f"testprov,{api.url}/{style}")
    assert csv_rows[1].endswith(',page 1 record #2,"record is a JSON list, not an object"')
    assert "no usable id at 'id'" in str(harvest.stats.errors[1])
    assert len(api.requests) == (4 if style == "offset" else 3)  # without a total, an empty page ends the list
    assert all(q["q"] == "*" for _, q in api.requests[:1])
    assert checkpoint.load() is None
    assert harvest.mode == "full"  # an API list has no date filter: every run fetches the whole source


def test_an_api_harvest_is_full_whatever_day_it_runs_for(api, provider, http, checkpoint, started):
    block = {"type": "api", "endpoint": f"{api.url}/cursor", "records_path": "data", "id_path": "id",
             "paging": STYLES["cursor"], "allow_private": True}
    window = (started.replace(hour=0, minute=0, second=0), started.replace(hour=23, minute=59, second=59))
    harvest = harvest_records(provider(block), started=started, window=window, http=http, checkpoint=checkpoint)
    assert len(list(harvest)) == 3 and harvest.mode == "full"


def fails_on_page_3(q: dict) -> bool:
    return q.get("after") == "4" or q.get("offset") == "4" or q.get("start") == "4" or q.get("page") == "3"


@pytest.mark.parametrize("style", ["cursor", "offset", "link"])  # a cursor, an offset and a URL as the position
def test_rerun_after_a_failed_page_yields_every_record_once(api, style, provider, http, checkpoint, spool_files, started):
    api.fail = fails_on_page_3
    got = []
    with pytest.raises(FetchError, match="HTTP 500 fetching page 3"):
        for record in run(provider, api, style, http, checkpoint, started):
            got.append(record)
    state = checkpoint.load()
    assert len(got) == 2 and state["page"] == 2 and state["spooled"] == 2 and len(spool_files()) == 2

    api.fail, api.requests = None, []
    later = started + timedelta(hours=1)
    second = run(provider, api, style, http, checkpoint, later)
    records = list(second)
    assert [json.loads(r["document"]) for r in records] == api.good  # pages 1-2 from the spool, 3 from the API
    assert records[:2] == [{**r, "ingestDate": int(later.timestamp())} for r in got]
    assert len(api.requests) == (2 if style == "offset" else 1)  # the API is asked for page 3 on only
    assert fails_on_page_3(api.requests[0][1])
    assert second.stats.resumed and second.stats.records == 3 and second.stats.duplicates == 0
    assert checkpoint.load() is None and spool_files() == []


def test_rerun_with_other_params_ignores_and_clears_the_old_spool(api, provider, http, checkpoint, spool_files, started):
    api.fail = fails_on_page_3
    with pytest.raises(FetchError):
        list(run(provider, api, "cursor", http, checkpoint, started))
    assert len(spool_files()) == 2
    api.fail, api.requests = None, []
    second = run(provider, api, "cursor", http, checkpoint, started, params={"q": "title:herbarium"})
    first = next(second)
    assert spool_files() == [] and checkpoint.load() is None  # another request: cleared, not replayed
    records = [first, *second]
    assert [json.loads(r["document"]) for r in records] == api.good and not second.stats.resumed
    assert [q for _, q in api.requests] == [{"q": "title:herbarium"}, {"q": "title:herbarium", "after": "2"},
                                           {"q": "title:herbarium", "after": "4"}]
    assert checkpoint.load() is None and spool_files() == []


def test_page_that_is_not_json_names_page_and_url(api, provider, http, checkpoint, started):
    with pytest.raises(ParseError, match=r"page 1 is not JSON.*provider 'testprov', file 'http://127\.0\.0\.1:\d+/broken\?q="):
        list(run(provider, api, "broken", http, checkpoint, started, paging=STYLES["next"]))


def test_page_nested_too_deeply_is_a_parse_error_naming_the_page(api, provider, http, checkpoint, started):
    with pytest.raises(ParseError, match=r"page 1 is not JSON: nested too deeply.*provider 'testprov'"):
        list(run(provider, api, "deep", http, checkpoint, started, paging=STYLES["next"]))


def test_next_link_to_itself_is_an_error_not_a_loop(api, provider, http, checkpoint, started):
    with pytest.raises(ParseError, match="points to a page already requested"):
        list(run(provider, api, "loop", http, checkpoint, started, paging=STYLES["next"]))


@pytest.mark.timeout(20)
@pytest.mark.parametrize("paging", [STYLES["cursor"], STYLES["next"]], ids=["cursor", "next"])
def test_paging_that_cycles_back_is_an_error_naming_provider_and_url(api, paging, provider, http, checkpoint, started):
    got = []
    with pytest.raises(ParseError, match=r"page 3 points to a page already requested in this run: .*2.*"
                                         r"provider 'testprov', file 'http://127\.0\.0\.1:\d+/cycle\?"):
        for record in run(provider, api, "cycle", http, checkpoint, started, paging=paging):
            got.append(record)
    assert [json.loads(r["document"]) for r in got] == api.good
    assert len(api.requests) == 3  # page 2 is not fetched a second time


@pytest.mark.timeout(20)
def test_server_ignoring_the_offset_ends_the_list_once_its_ids_repeat(api, provider, http, checkpoint, started):
    harvest = run(provider, api, "ignore-offset", http, checkpoint, started, paging={"style": "offset", "page_size": 2})
    records = list(harvest)
    assert [json.loads(r["document"]) for r in records] == api.good[:1]
    assert [q["offset"] for _, q in api.requests] == ["0", "2"]
    assert harvest.stats.duplicates == 1 and checkpoint.load() is None


def test_page_of_records_without_ids_does_not_end_the_list(api, provider, http, checkpoint, started):
    api.items = [api.items[0], api.items[2], api.items[1], api.items[3], api.items[4]]  # page 2: no usable id
    records = list(run(provider, api, "offset", http, checkpoint, started))
    assert [json.loads(r["document"]) for r in records] == api.good


def test_a_lone_surrogate_is_one_counted_record_and_the_output_is_written(api, provider, http, checkpoint, started, tmp_path):
    """JSON escapes can carry unpaired UTF-16 surrogates, which UTF-8 (and so Avro) cannot store: the record is
    refused and reported, the others are written (before: the whole harvest output failed, on every re-run)."""
    from datetime import date

    from ingest_assets.storage import LocalStorage
    from ingest_assets.storage.activities import RecordSource, RecordStream, write_activity
    from ingest_assets.storage.avro import ORIGINAL_RECORD

    api.items = [api.good[0], {"id": "bad\ud800id"}, api.good[1], {"id": "fine-id", "title": "broken \udfff title"}, api.good[2]]
    harvest = run(provider, api, "offset", http, checkpoint, started)
    storage = LocalStorage(tmp_path / "s")
    result = write_activity(storage, RecordStream(harvest, started=started), provider="testprov", activity="harvest",
                            day=date(2026, 1, 15), started=started, schema=ORIGINAL_RECORD, partition="x")
    assert [json.loads(r["document"]) for r in RecordSource(storage, result.output)] == api.good
    assert harvest.stats.failed == 2
    [bad_id, bad_document] = harvest.stats.errors
    assert "id has an unpaired UTF-16 surrogate" in str(bad_id) and "bad\\ud800id" in bad_id.record
    assert bad_id.record.startswith("page 1 record #2")
    assert "document has an unpaired UTF-16 surrogate" in str(bad_document) and "fine-id" in bad_document.record


def test_request_log_names_each_page_its_position_and_the_records_it_brought(api, provider, http, checkpoint, started):
    harvest = run(provider, api, "cursor", http, checkpoint, started)
    list(harvest)
    log = [json.loads(line) for line in harvest.logs()[REQUEST_LOG]]
    # two items a page, the second of pages 1 and 2 unusable: one record each from output positions 0, 1, 2
    assert [(e["page"], e["params"], e["records"]) for e in log] == [
        (1, {"cursor": None}, [0, 1]), (2, {"cursor": "2"}, [1, 2]), (3, {"cursor": "4"}, [2, 3]),
    ]
    assert [e["url"] for e in log] == [f"{api.url}/cursor?q=%2A", f"{api.url}/cursor?q=%2A&after=2",
                                       f"{api.url}/cursor?q=%2A&after=4"]
    assert all(e["status"] == 200 and e["response_date"].endswith("GMT") for e in log)
