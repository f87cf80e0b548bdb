"""Client of a TemplateParameterIndex-style web service (the spec's "Wiki TemplateParameterIndex").

Queries: all records of a template modified in ``from``..``to`` (optionally only some
``parameternames``), or all records whose ``parameter1`` equals ``value1``. The answer is XML, one
``<record>`` per template occurrence with ``Harvested``, ``Modified``, ``TemplateName``, ``BaseURL``,
``PageName`` and one element per template parameter (spaces in names written as ``_``).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from urllib.parse import urlencode

from lxml import etree

from ingest_assets.core.errors import ParseError, context
from ingest_assets.core.http import HttpClient
from ingest_assets.repository.markup import clean
from ingest_assets.repository.records import TemplateRecord, make_record, parse_timestamp
from ingest_assets.core.xml_input import HARDENED

FIXED_FIELDS = {"Harvested", "Modified", "TemplateName", "BaseURL", "PageName", "page_name"}
MAX_BYTES = 64 * 1024 * 1024


def xml_datetime(value: datetime) -> str:
    """``from``/``to`` as xml date-time in UTC (``2009-01-25T16:30:01``)."""
    return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")


class TemplateIndexClient:
    def __init__(self, url: str, http: HttpClient, *, provider: str | None = None):
        """Unreadable records are skipped and kept in :attr:`problems`; the others still come."""
        self.url = url
        self.http = http
        self.provider = provider
        self.problems: list[ParseError] = []

    def query_url(self, **params: str) -> str:
        return f"{self.url}?{urlencode(params)}"

    def modified(self, template: str, since: datetime | None, until: datetime | None,
                 parameternames: list[str] | None = None) -> Iterator[TemplateRecord]:
        """Records of ``template`` on pages created or changed in (``since``, ``until``]."""
        params = {"template": template}
        if since is not None:
            params["from"] = xml_datetime(since)
        if until is not None:
            params["to"] = xml_datetime(until)
        if parameternames:
            params["parameternames"] = ";".join(parameternames)
        return self._records(params)

    def where(self, template: str, parameter: str, value: str) -> Iterator[TemplateRecord]:
        """Records of ``template`` whose ``parameter`` contains ``value``."""
        return self._records({"template": template, "parameter1": parameter, "value1": value})

    def _records(self, params: dict[str, str]) -> Iterator[TemplateRecord]:
        url = self.query_url(**params)
        parser = etree.XMLPullParser(events=("end",), tag="record", **HARDENED)
        seen = {}
        with context(provider=self.provider, file=url), self.http.open(self.url, params=params,
                                                                      max_bytes=MAX_BYTES) as body:
            for chunk in body.chunks():
                try:
                    parser.feed(chunk)
                    yield from self._drain(parser, url, seen)
                except etree.XMLSyntaxError as exc:
                    raise ParseError(f"invalid TemplateParameterIndex XML: {exc}", provider=self.provider,
                                     file=url) from exc
        try:
            parser.close()
        except etree.XMLSyntaxError as exc:
            raise ParseError(f"truncated TemplateParameterIndex XML: {exc}", provider=self.provider,
                             file=url) from exc
        yield from self._drain(parser, url, seen)

    def _drain(self, parser, url: str, seen: dict[tuple[str, str], int]) -> Iterator[TemplateRecord]:
        for _, element in parser.read_events():
            fields = {child.tag: (child.text or "") for child in element if isinstance(child.tag, str)}
            element.clear()
            try:
                yield self._record(fields, url, seen)
            except ParseError as exc:
                self.problems.append(exc)

    def _record(self, fields: dict[str, str], url: str, seen: dict[tuple[str, str], int]) -> TemplateRecord:
        page = fields.get("PageName") or fields.get("page_name") or ""
        if not (fields.get("TemplateName") and fields.get("BaseURL") and page):
            raise ParseError("record without TemplateName, BaseURL or PageName", provider=self.provider,
                             file=url, record=page or None)
        try:
            modified, harvested = parse_timestamp(fields.get("Modified")), parse_timestamp(fields.get("Harvested"))
        except ValueError as exc:
            raise ParseError(f"bad Modified/Harvested time: {exc}", provider=self.provider, file=url,
                             record=page) from exc
        values = {name: clean(text) for name, text in fields.items() if name not in FIXED_FIELDS}
        occurrence = seen.get((page, fields["TemplateName"]), 0)
        seen[(page, fields["TemplateName"])] = occurrence + 1
        return make_record(fields["TemplateName"], fields["BaseURL"], page, values, modified=modified,
                           harvested=harvested, source_url=url, occurrence=occurrence)
