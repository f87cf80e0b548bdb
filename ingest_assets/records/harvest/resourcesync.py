"""ResourceSync harvesting: a baseline from the Resource List, then increments from the Change Lists.

* ``url`` is a Source Description naming one Capability List, or a Capability List. Every sitemap (lists
  and their indexes) is fetched with :class:`HttpClient` (size cap, private-address guard), parsed by
  :mod:`ingest_assets.core.xml_input` and read by resync's :class:`~resync.sitemap.Sitemap`; relative ``loc``s
  are resolved against the sitemap's URL.
* Each resource becomes an OriginalRecord: id = its URI, document = its content when that is XML, JSON or
  Turtle (by the list's ``type``, else the response's Content-Type). Content whose length, md5 or sha-256
  differs from the list's, that cannot be fetched or is another type is a counted record error.
  A ``deleted`` change is a deleted record whose document is ``{"uri", "change", "datetime"}``.
* Baseline (a full harvest, or no increment state yet): every resource of the Resource List (or of its
  index's lists). Increment: every change of the Change Lists (or of the index's lists not ended before
  ``since``) with ``since < datetime <= until``, folded to each URI's newest change. The run keeps, in the
  provider's state (``harvest-state-resourcesync.json``), the Capability List and ``since``: the
  Resource List's ``at`` after a baseline, the newest change datetime processed after an increment. So a
  day's run takes the changes since the last complete run.

Checkpoint and spool follow :mod:`.progress`: the resources are taken in list order in pages of
:data:`PAGE_SIZE`; the checkpoint's request is ``{"capability_list", "resource_list_at"}`` (baseline) or
``{"capability_list", "since", "until"}`` (increment, ``until`` kept from the run that failed), its
position the number of resources done. The request log (:mod:`.requests`) has a line per sitemap (page 0)
and per resource (its page; a deletion's line has the resource URI and no status). Bounds: sitemaps fetched (``bounds.max_pages``), time
(``bounds.max_minutes``) and resources (``max_resources``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from urllib.parse import urljoin

from lxml import etree
from resync.resource import Resource
from resync.resource_container import ResourceContainer
from resync.sitemap import RS_NS, Sitemap, SitemapIndexError, SitemapParseError

from ingest_assets.core import json_input
from ingest_assets.core.digests import MultiHasher, first_mismatch
from ingest_assets.core.errors import IngestError, LimitError, ParseError, ValidationError, context
from ingest_assets.core.http import HttpClient, HttpResponse
from ingest_assets.records.harvest.checkpoint import Checkpoint
from ingest_assets.records.harvest.original import HarvestStats, original_record
from ingest_assets.records.harvest.progress import Progress
from ingest_assets.records.harvest.requests import RequestLog
from ingest_assets.core.registry import ResourceSyncHarvest
from ingest_assets.core.xml_input import UnsafeXML, parse_xml, standalone

PAGE_SIZE = 100  # resources per spooled page
STATE = "resourcesync"


class _Sitemap(Sitemap):
    """resync's reader, keeping an index entry's ``from``/``until`` (resync reads them only in a header)."""

    def resource_from_etree(self, etree, resource_class):
        resource = super().resource_from_etree(etree, resource_class)
        md = etree.find(f"{{{RS_NS}}}md")
        for name in ("from", "until"):
            if md is not None and md.get(name):
                setattr(resource, f"md_{name}", md.get(name))
        return resource


class ResourceSyncHarvester:
    def __init__(
        self,
        provider: str,
        config: ResourceSyncHarvest,
        *,
        ingest_ts: int,
        started: datetime,
        incremental: bool,
        http: HttpClient,
        checkpoint: Checkpoint,
        stats: HarvestStats,
        requests: RequestLog,
    ):
        self.provider, self.config, self.ingest_ts, self.incremental = provider, config, ingest_ts, incremental
        self.requests = requests
        self.started = started.astimezone(timezone.utc).isoformat()
        self.http, self.checkpoint, self.stats = http, checkpoint, stats
        self.deadline = time.monotonic() + config.bounds.max_minutes * 60
        self.sitemaps = 0

    def records(self) -> Iterator[dict]:
        capabilities, capability_list = self.capabilities()
        kept = self.checkpoint.load_state(STATE) or {}
        since = kept.get("since") if self.incremental and kept.get("capability_list") == capability_list else None
        if since and "changelist" not in capabilities:
            self.stats.note(f"{capability_list} names no Change List; taking a new baseline")
            since = None
        if since:
            request = {"capability_list": capability_list, "since": since, "until": self.until(capability_list, since)}
            resources = self.changes(capabilities["changelist"], since, request["until"])
            newest = since
        else:
            if "resourcelist" not in capabilities:
                raise ValidationError(f"Capability List {capability_list} names no Resource List", provider=self.provider)
            resource_list = self.sitemap(capabilities["resourcelist"], "resourcelist")
            request = {"capability_list": capability_list, "resource_list_at": resource_list.md_at}
            resources = self.listed(resource_list, capabilities["resourcelist"])
            newest = resource_list.md_at or self.started
            self.stats.note(f"baseline from the Resource List {capabilities['resourcelist']} (at {resource_list.md_at})")
        progress = Progress(
            self.provider, self.checkpoint, "resourcesync", request, "done", stats=self.stats,
            ingest_ts=self.ingest_ts, bounds=self.config.bounds,
        )
        try:
            done = (yield from progress.resume()) or 0
            if self.stats.resumed:
                self.requests.spooled(self.stats.pages, range(self.stats.records))
            page: list[Resource] = []
            for number, resource in enumerate(resources, 1):
                if number > self.config.max_resources:
                    raise LimitError(f"the lists name more than {self.config.max_resources} resources; raise "
                                     "harvest.max_resources if the source is right", provider=self.provider)
                if since and _moment(resource.datetime) > _moment(newest):
                    newest = resource.datetime
                if number > done:
                    page.append(resource)
                if len(page) == PAGE_SIZE:
                    yield from self.page(progress, page)
                    progress.save(self.stats.pages, number, capability_list)
                    page = []
            if page:
                yield from self.page(progress, page)
            progress.finish()
        finally:
            progress.close()
        self.checkpoint.save_state(STATE, {"capability_list": capability_list, "since": newest})
        self.stats.note(f"next increment: changes after {newest}")

    def page(self, progress: Progress, resources: list[Resource]) -> Iterator[dict]:
        """One page of resources as records (a Resource List is finite: no page is 'stale')."""
        self.stats.pages += 1
        progress.start_list()
        yield from progress.page(self.fetched(resources))

    def fetched(self, resources: list[Resource]) -> Iterator[dict]:
        """The records of ``resources``, each request logged with the output position its record took."""
        for resource in resources:
            position = self.stats.records
            record, response = self.record_or_none(resource)
            if record:
                yield record  # Progress.page admits it (or not: a duplicate) before asking for the next
            records = range(position, self.stats.records)
            if response is not None:
                self.requests.response(self.stats.pages, response, None, records)
            elif record:
                self.requests.request(self.stats.pages, resource.uri, {"change": "deleted"}, None, resource.datetime,
                                      records)

    def capabilities(self) -> tuple[dict[str, str], str]:
        """The Capability List's ``{capability: url}`` and its URL (read through a Source Description)."""
        url = self.config.url
        document = self.sitemap(url, None)
        if document.capability == "description":
            lists = [urljoin(url, r.uri) for r in document if r.capability == "capabilitylist"]
            if len(lists) != 1:
                raise ValidationError(
                    f"the Source Description names {len(lists)} Capability Lists ({lists}); set harvest.url to one",
                    provider=self.provider, file=url,
                )
            url = lists[0]
            document = self.sitemap(url, "capabilitylist")
        if document.capability != "capabilitylist":
            raise ValidationError(f"{url} is a {document.capability!r} document, not a Source Description or "
                                  "Capability List", provider=self.provider, file=url)
        return {r.capability: urljoin(url, r.uri) for r in document if r.capability}, url

    def until(self, capability_list: str, since: str) -> str:
        """The end of this increment: the failed run's, when its checkpoint is this increment's; else now."""
        state = self.checkpoint.load() or {}
        request = state.get("request") or {}
        if state.get("kind") == "resourcesync" and request.get("capability_list") == capability_list \
                and request.get("since") == since and request.get("until"):
            return request["until"]
        return self.started

    def listed(self, document: ResourceContainer, url: str) -> Iterator[Resource]:
        """The resources of a list, or of every list of its index, in order (one list in memory)."""
        if not self.parsed_index(document):
            yield from self.absolute(document, url)
            return
        for component in document:
            part_url = urljoin(url, component.uri)
            yield from self.absolute(self.sitemap(part_url, document.capability, index=False), part_url)

    def changes(self, url: str, since: str, until: str) -> Iterator[Resource]:
        """Each URI's newest change with ``since < datetime <= until``, oldest first."""
        after, before = _moment(since), _moment(until)
        document = self.sitemap(url, "changelist")
        if self.parsed_index(document):
            parts = [c for c in document if c.md_until is None or _moment(c.md_until) > after]
            lists = [(urljoin(url, c.uri), self.sitemap(urljoin(url, c.uri), "changelist", index=False)) for c in parts]
        else:
            lists = [(url, document)]
        newest: dict[str, Resource] = {}
        for list_url, changes in lists:
            for change in self.absolute(changes, list_url):
                if not change.datetime:
                    self.stats.record_error(ValidationError("change has no datetime", provider=self.provider,
                                                            file=list_url, record=change.uri))
                elif after < _moment(change.datetime) <= before and (
                        change.uri not in newest or _moment(newest[change.uri].datetime) <= _moment(change.datetime)):
                    newest[change.uri] = change
                    if len(newest) > self.config.max_resources:
                        raise LimitError(f"the Change Lists name more than {self.config.max_resources} resources",
                                         provider=self.provider, file=list_url)
        self.stats.note(f"increment of {len(newest)} resources changed after {since} until {until} "
                        f"({len(lists)} Change Lists)")
        return iter(sorted(newest.values(), key=lambda r: (_moment(r.datetime), r.uri)))

    def absolute(self, document: ResourceContainer, url: str) -> Iterator[Resource]:
        for resource in document:
            resource.uri = urljoin(url, resource.uri)
            yield resource

    def parsed_index(self, document: ResourceContainer) -> bool:
        return bool(getattr(document, "parsed_index", False))

    def sitemap(self, url: str, capability: str | None, index: bool | None = None) -> ResourceContainer:
        """The sitemap at ``url`` read by resync (``capability``: the one it must declare, if any)."""
        self.sitemaps += 1
        if self.sitemaps > self.config.bounds.max_pages or time.monotonic() > self.deadline:
            raise LimitError(f"harvest stopped at sitemap {self.sitemaps}: past harvest.bounds", provider=self.provider,
                             file=url)
        with context(provider=self.provider, doing=f"fetching sitemap {url}"):
            response = self.http.get(url, max_bytes=self.config.max_list_bytes)
        self.requests.response(0, response, None, range(0))
        try:
            root, _removed = parse_xml(response.content)
            reader = _Sitemap()
            document = reader.parse_xml(etree=etree.ElementTree(root), capability=capability, sitemapindex=index)
        except (etree.XMLSyntaxError, UnsafeXML, SitemapParseError, SitemapIndexError, ValueError) as exc:
            raise ParseError(f"not a ResourceSync sitemap: {exc}", provider=self.provider, file=response.url) from exc
        document.parsed_index = reader.parsed_index
        return document

    def record_or_none(self, resource: Resource) -> tuple[dict | None, HttpResponse | None]:
        """The resource's record (None when it is a counted record error) and the response it came from."""
        uri, response = resource.uri, None
        try:
            if resource.change == "deleted":
                document = json.dumps({"uri": uri, "change": "deleted", "datetime": resource.datetime})
                return original_record(self.provider, uri, self.ingest_ts, document, "application/json", True), None
            with context(provider=self.provider, record=uri):
                response = self.http.get(uri, max_bytes=self.config.max_resource_bytes)
            return self.record(resource, response), response
        except IngestError as exc:
            self.stats.record_error(exc.add_context(provider=self.provider, record=uri))
            return None, response

    def record(self, resource: Resource, response: HttpResponse) -> dict:
        """The OriginalRecord of a fetched resource (a ValidationError or ParseError when it is none)."""
        uri = resource.uri
        self.verify(resource, response)
        mimetype = _record_mimetype(resource.mime_type or _header(response, "content-type"))
        try:
            if mimetype == "application/xml":
                document = standalone(parse_xml(response.content)[0])
            elif mimetype == "application/json":
                json_input.loads(response.content)
                document = response.content.decode("utf-8")
            elif mimetype == "text/turtle":
                document = response.content.decode("utf-8")
            else:
                raise ValidationError(f"a {resource.mime_type or _header(response, 'content-type')!r} resource is not "
                                      "a record (XML, JSON or Turtle)", file=response.url)
        except (etree.XMLSyntaxError, UnsafeXML, ValueError) as exc:
            raise ParseError(f"unreadable {mimetype} resource: {exc}", file=response.url) from exc
        return original_record(self.provider, uri, self.ingest_ts, document, mimetype, False)

    def verify(self, resource: Resource, response: HttpResponse) -> None:
        """The content against the list's length, md5 and sha-256 (a ValidationError on any difference)."""
        content = response.content
        listed = {"md5": resource.md5, "sha256": resource.sha256}
        found = first_mismatch(resource.length, listed, len(content),
                               MultiHasher.of(content, [name for name, value in listed.items() if value]).hexdigests())
        if found is None:
            return
        if found.what == "size":
            raise ValidationError(f"the list gives length {found.declared}, the content has {found.actual} bytes",
                                  file=response.url)
        raise ValidationError(f"{found.what} mismatch: the list gives {found.declared}, the content has {found.actual}",
                              file=response.url)


def _moment(value: str) -> datetime:
    moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _header(response: HttpResponse, name: str) -> str:
    return next((value for key, value in response.headers.items() if key.lower() == name), "")


def _record_mimetype(content_type: str) -> str | None:
    """``application/xml``, ``application/json`` or ``text/turtle`` for a Content-Type the mapping reads."""
    mime = content_type.split(";")[0].strip().lower()
    if mime in ("application/xml", "text/xml") or mime.endswith("+xml"):
        return "application/xml"
    if mime == "application/json" or mime.endswith("+json"):
        return "application/json"
    return "text/turtle" if mime == "text/turtle" else None
