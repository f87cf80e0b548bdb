"""ResourceSync harvests of the specification's examples (v1.1), served on 127.0.0.1 with ``example.com``
rewritten to the server, read in place from ``../shared/fixtures/resourcesync/``."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from lxml import etree

from ingest_assets.core.errors import FetchError, IngestError, ValidationError
from ingest_assets.records.harvest import harvest_records

RECORD = b"<?xml version='1.0' encoding='UTF-8'?>\n<record xmlns='http://purl.org/dc/elements/1.1/'><title>Res 7</title></record>"
WINDOW = (datetime(2026, 11, 22, tzinfo=timezone.utc), datetime(2026, 11, 23, tzinfo=timezone.utc))


class SpecSource:
    """Answers ``path -> fixture file`` (``example.com`` rewritten) or ``path -> (content type, body)``."""

    def __init__(self, fixtures, routes: dict):
        self.fixtures, self.routes, self.paths, self.base = fixtures, routes, [], ""

    def __call__(self, environ, start_response):
        path = environ["PATH_INFO"]
        self.paths.append(path)
        route = self.routes.get(path)
        if route is None:
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"not found"]
        if isinstance(route, str):
            body = (self.fixtures / route).read_bytes().replace(b"http://example.com", self.base.encode())
            route = ("application/xml", body)
        start_response("200 OK", [("Content-Type", route[0]), ("Content-Length", str(len(route[1])))])
        return [route[1]]


@pytest.fixture
def spec_source(http_server, shared_fixtures):
    def start(routes: dict) -> SpecSource:
        app = SpecSource(shared_fixtures / "resourcesync", routes)
        app.base = http_server(app=app)
        return app

    return start


ROUTES = {
    "/dataset1/capabilitylist.xml": "spec-v1.1-ex13-capabilitylist.xml",
    "/dataset1/resourcelist.xml": "spec-v1.1-ex15-resourcelist-index-sitemapindex.xml",
    "/resourcelist1.xml": "spec-v1.1-ex14-resourcelist.xml",
    "/resourcelist2.xml": "spec-v1.1-ex14-resourcelist.xml",
    "/resourcelist3.xml": "spec-v1.1-ex14-resourcelist.xml",
    "/dataset1/changelist.xml": "spec-v1.1-ex20-changelist-index.xml",
    "/20130102-changelist.xml": "spec-v1.1-ex21-changelist-with-deleted.xml",
    "/20130103-changelist.xml": "spec-v1.1-ex21-changelist-with-deleted.xml",
    "/res7.html": ("text/xml; charset=utf-8", RECORD),
    "/res9.pdf": ("application/pdf", b"%PDF-1.4 not a record"),
}


def run(provider, url, http, checkpoint, started, window=None):
    block = {"type": "resourcesync", "url": url, "allow_private": True}
    return harvest_records(provider(block), started=started, window=window, http=http, checkpoint=checkpoint)


def test_baseline_reads_every_list_of_the_resource_list_index(spec_source, provider, http, checkpoint, started):
    source = spec_source(ROUTES)
    harvest = run(provider, f"{source.base}/dataset1/capabilitylist.xml", http, checkpoint, started)
    # the examples' resources are HTML and PDF: no record the mapping reads, so the harvest fails (final)
    with pytest.raises(IngestError, match="every one of the 6 resources of this harvest failed") as failed:
        list(harvest)
    assert not failed.value.retryable
    lists = ["/resourcelist1.xml", "/resourcelist2.xml", "/resourcelist3.xml"]
    assert source.paths == ["/dataset1/capabilitylist.xml", "/dataset1/resourcelist.xml", *lists, *["/res1", "/res2"] * 3]
    assert harvest.stats.failed == 6
    assert {error.record for error in harvest.stats.errors} == {f"{source.base}/res1", f"{source.base}/res2"}
    assert all("404" in str(error) or "not a record" in str(error) for error in harvest.stats.errors)
    state = checkpoint.load_state("resourcesync")
    assert state["capability_list"] == f"{source.base}/dataset1/capabilitylist.xml"
    assert state["since"] == "2013-01-03T09:00:00Z"  # the failures wait in the retry list, not behind since
    assert [(e["uri"], e["attempts"]) for e in state["retry"]] == [(f"{source.base}/res1", 1), (f"{source.base}/res2", 1)]


def test_increment_folds_the_change_lists_after_since(spec_source, provider, http, checkpoint, started):
    source = spec_source(ROUTES)
    capability_list = f"{source.base}/dataset1/capabilitylist.xml"
    checkpoint.save_state("resourcesync", {"capability_list": capability_list, "since": "2013-01-02T00:00:00Z"})
    harvest = run(provider, capability_list, http, checkpoint, started, window=WINDOW)
    records = list(harvest)

    # the list that ended at since is not fetched; res7's creation and update are one record
    assert "/20130101-changelist.xml" not in source.paths and "/20130102-changelist.xml" in source.paths
    assert [(r["id"], r["deleted"], r["mimetype"]) for r in records] == [
        (f"{source.base}/res5.tiff", True, "application_json"),
        (f"{source.base}/res7.html", False, "application_xml"),
    ]
    assert etree.fromstring(records[1]["document"].encode()).findtext("{http://purl.org/dc/elements/1.1/}title") == "Res 7"
    assert harvest.stats.failed == 1 and "application/pdf" in str(harvest.stats.errors[0])
    assert checkpoint.load_state("resourcesync")["since"] == "2013-01-02T20:00:00Z"
    assert "increment of 3 resources changed after 2013-01-02T00:00:00Z" in harvest.stats.log_text()


def test_source_description_with_several_capability_lists_is_refused(
    spec_source, provider, http, checkpoint, started
):
    source = spec_source({"/.well-known/resourcesync": "spec-v1.1-ex12-source-description.xml"})
    with pytest.raises(ValidationError, match="names 3 Capability Lists"):
        list(run(provider, f"{source.base}/.well-known/resourcesync", http, checkpoint, started))


def test_relative_capability_list_urls_are_resolved(spec_source, provider, http, checkpoint, started):
    source = spec_source({"/dir/source.xml": "resync-explore1-source-description-relative-urls.xml"})
    with pytest.raises(FetchError, match="404"):  # the one Capability List it names (caps2.xml) is not served
        list(run(provider, f"{source.base}/dir/source.xml", http, checkpoint, started))
    assert source.paths == ["/dir/source.xml", "/dir/caps2.xml"]
