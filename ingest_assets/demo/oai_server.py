"""A real OAI-PMH 2.0 endpoint (the ``oaipmh`` package's server) over the sample records, as WSGI."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from urllib.parse import parse_qsl

from oaipmh import common, error
from oaipmh.metadata import MetadataRegistry
from oaipmh.server import BatchingServer, oai_dc_writer

from ingest_assets.core.wsgi import WsgiServer
from ingest_assets.demo.samples import SampleRecord

DC_FIELDS = ("title", "creator", "subject", "description", "publisher", "contributor", "date", "type",
             "format", "identifier", "source", "language", "relation", "coverage", "rights")


class SampleRepository:
    """The IBatchingOAI interface over a list of sample records."""

    def __init__(self, records: Sequence[SampleRecord], base_url: str):
        self.records = sorted(records, key=lambda r: r.datestamp)
        self.base_url = base_url

    def identify(self):
        return common.Identify(
            repositoryName="Riverside Historical Society (demo)",
            baseURL=self.base_url,
            protocolVersion="2.0",
            adminEmails=["demo@example.org"],
            earliestDatestamp=self.records[0].datestamp.replace(tzinfo=None) if self.records else datetime(2000, 1, 1),
            deletedRecord="persistent",
            granularity="YYYY-MM-DDThh:mm:ssZ",
            compression=["identity"],
        )

    def listMetadataFormats(self, identifier=None):
        return [("oai_dc", "http://www.openarchives.org/OAI/2.0/oai_dc.xsd", "http://www.openarchives.org/OAI/2.0/oai_dc/")]

    def listSets(self, cursor=0, batch_size=10):
        raise error.NoSetHierarchyError("this repository has no sets")

    def _select(self, metadataPrefix, set=None, from_=None, until=None):
        if metadataPrefix != "oai_dc":
            raise error.CannotDisseminateFormatError(metadataPrefix)
        if set is not None:
            raise error.NoSetHierarchyError("this repository has no sets")
        selected = [
            r for r in self.records
            if (from_ is None or r.datestamp.replace(tzinfo=None) >= from_)
            and (until is None or r.datestamp.replace(tzinfo=None) <= until)
        ]
        if not selected:
            raise error.NoRecordsMatchError("no records in that interval")
        return selected

    @staticmethod
    def _header(record: SampleRecord):
        return common.Header(None, record.identifier, record.datestamp.replace(tzinfo=None), [], record.deleted)

    def listRecords(self, metadataPrefix, set=None, from_=None, until=None, cursor=0, batch_size=10):
        for record in self._select(metadataPrefix, set, from_, until)[cursor : cursor + batch_size]:
            metadata = None if record.deleted else common.Metadata(None, {k: record.fields.get(k, []) for k in DC_FIELDS})
            yield self._header(record), metadata, None

    def listIdentifiers(self, metadataPrefix, set=None, from_=None, until=None, cursor=0, batch_size=10):
        for record in self._select(metadataPrefix, set, from_, until)[cursor : cursor + batch_size]:
            yield self._header(record)

    def getRecord(self, metadataPrefix, identifier):
        for record in self.records:
            if record.identifier == identifier:
                metadata = None if record.deleted else common.Metadata(None, {k: record.fields.get(k, []) for k in DC_FIELDS})
                return self._header(record), metadata, None
        raise error.IdDoesNotExistError(identifier)


def make_app(records: Sequence[SampleRecord], base_url: str, batch_size: int = 25):
    """A WSGI app answering OAI-PMH requests (GET or POST) at any path."""
    registry = MetadataRegistry()
    registry.registerWriter("oai_dc", oai_dc_writer)
    server = BatchingServer(SampleRepository(records, base_url), metadata_registry=registry, resumption_batch_size=batch_size)

    def app(environ, start_response):
        query = environ.get("QUERY_STRING", "")
        if environ.get("REQUEST_METHOD") == "POST":
            length = int(environ.get("CONTENT_LENGTH") or 0)
            query = environ["wsgi.input"].read(length).decode("utf-8")
        body = server.handleRequest(dict(parse_qsl(query)))
        data = body if isinstance(body, bytes) else body.encode("utf-8")
        start_response("200 OK", [("Content-Type", "text/xml; charset=utf-8"), ("Content-Length", str(len(data)))])
        return [data]

    return app


def serve_in_thread(records: Sequence[SampleRecord], host: str = "127.0.0.1", port: int = 0) -> tuple[WsgiServer, str]:
    """Start the endpoint in a daemon thread; returns the server and the endpoint's URL."""
    server = WsgiServer(host, port)
    url = f"{server.url}/oai"
    return server.start(make_app(records, url)), url
