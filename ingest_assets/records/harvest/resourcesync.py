"""ResourceSync harvesting: a baseline from the Resource List, then increments from the Change Lists.

* ``url`` is a Source Description naming one Capability List, or a Capability List. Every sitemap (lists
  and their indexes) is fetched with :class:`HttpClient` (size cap, private-address guard), parsed by
  :mod:`ingest_assets.core.xml_input` and read by resync's :class:`~resync.sitemap.Sitemap`; relative ``loc``s
  are resolved against the sitemap's URL.
* Each resource becomes an OriginalRecord: id = its URI, document = its content when that is XML, JSON or
  Turtle (by the list's ``type``, else the response's Content-Type). Content whose length, md5 or sha-256
  differs from the list's, that cannot be fetched or is another type is a counted record error.
  A ``deleted`` change is a deleted record whose document is ``{"uri", "change", "datetime"}``.
* Baseline (a full harvest, or no increment state yet; its mode is ``full``): every resource of the Resource
  List (or of its index's lists). Increment (mode ``incremental``): every change of the Change Lists (or of
  the index's lists not ended before ``since``) with ``since < time <= until``, folded to each URI's newest
  change; a change's time is its ``rs:md datetime``, else its ``<lastmod>`` (ResourceSync 1.0 Change Lists
  have no ``datetime``). The run keeps, in the provider's state (``harvest-state-resourcesync.json``), the
  Capability List, ``since`` (the Resource List's ``at`` after a baseline, the newest change time processed
  after an increment) and ``retry``: the resources this run could not fetch or whose content was not the
  listed one. The next increment tries those again (unless a newer change of the URI replaces them) until one
  succeeds or has failed on ``max_attempts`` runs, when the harvest log says it was given up and why. So a
  day's run takes the changes since the last complete run, and a failed fetch is never skipped silently.
* A harvest in which every resource failed (none became a record) raises an :class:`IngestError`, so it never
  passes as an empty success: after keeping its state (``since``, ``retry``) when some failure was final; as a
  retryable error that keeps nothing when every failure was retryable (the source is down: trying again
  costs no attempt).

Checkpoint and spool follow :mod:`.progress`: the resources are taken in list order in pages of
:data:`PAGE_SIZE`; the checkpoint's request is ``{"capability_list", "resource_list_at"}`` (baseline) or
``{"capability_list", "since", "until"}`` (increment, ``until`` kept from the run that failed), its
position the number of resources done (the failures so far ride along, for the retry list). The request log
(:mod:`.requests`) has a line per sitemap (page 0) and per resource (its page; a deletion's line has the
resource URI and no status). Bounds: sitemaps fetched (``bounds.max_pages``), time (``bounds.max_minutes``)
and resources (``max_resources``).
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
from ingest_assets.core.http import HttpResponse
from ingest_assets.core.registry import ResourceSyncHarvest
from ingest_assets.records.harvest.base import FULL, INCREMENTAL, HarvestContext, Harvester
from ingest_assets.records.harvest.original import original_record
from ingest_assets.records.harvest.progress import Progress
from ingest_assets.core.xml_input import UnsafeXML, parse_xml, standalone

PAGE_SIZE = 100  # resources per spooled page
STATE = "resourcesync"
MULTIPLE_MD = "Found multiple (%d) <rs:md> elements for %s"  # resync raises it with its arguments unformatted


class _Sitemap(Sitemap):
    """resync's reader, keeping an index entry's ``from``/``until`` (resync reads them only in a header)."""

    def resource_from_etree(self, etree, resource_class):
        resource = super().resource_from_etree(etree, resource_class)
        md = etree.find(f"{{{RS_NS}}}md")
        for name in ("from", "until"):
            if md is not None and md.get(name):
                setattr(resource, f"md_{name}", md.get(name))
        return resource


class ResourceSyncHarvester(Harvester):
    config: ResourceSyncHarvest

    def __init__(self, provider: str, config: ResourceSyncHarvest, context: HarvestContext):
        super().__init__(provider, config, context)
        self.incremental = context.window is not None
        self.started = context.started.astimezone(timezone.utc).isoformat()
        self.deadline = time.monotonic() + config.bounds.max_minutes * 60
        self.sitemaps = 0
        self.baseline = True  # until records() finds increment state to go on from
        self.failed: dict[str, dict] = {}  # uri -> the resource that failed in this run, and why

    @property
    def mode(self) -> str:
        """A baseline (the whole Resource List) is a full harvest, an increment (changes since) is not."""
        return FULL if self.baseline else INCREMENTAL

    def records(self) -> Iterator[dict]:
        capabilities, capability_list = self.capabilities()
        kept = self.checkpoint.load_state(STATE) or {}
        ours = kept.get("capability_list") == capability_list
        since = kept.get("since") if self.incremental and ours else None
        if since and "changelist" not in capabilities:
            self.stats.note(f"{capability_list} names no Change List; taking a new baseline")
            since = None
        self.baseline = not since
        retry = {entry["uri"]: entry for entry in kept.get("retry", [])} if since else {}
        if since:
            request = {"capability_list": capability_list, "since": since, "until": self.until(capability_list, since)}
            resources = self.changes(capabilities["changelist"], since, request["until"], retry)
            newest = self.as_of = since
        else:
            if "resourcelist" not in capabilities:
                raise ValidationError(f"Capability List {capability_list} names no Resource List", provider=self.provider)
            resource_list = self.sitemap(capabilities["resourcelist"], "resourcelist")
            request = {"capability_list": capability_list, "resource_list_at": resource_list.md_at}
            resources = self.listed(resource_list, capabilities["resourcelist"])
            newest = resource_list.md_at or self.started
            self.as_of = newest
            self.stats.note(f"baseline from the Resource List {capabilities['resourcelist']} (at {resource_list.md_at})")
        progress = self.progress("resourcesync", request, "done")
        try:
            done = (yield from self.resume(progress)) or 0
            self.failed = dict(progress.extra.get("failed", {}))  # a resumed run's failures on its spooled pages
            page: list[Resource] = []
            for number, resource in enumerate(resources, 1):
                if number > self.config.max_resources:
                    raise LimitError(f"the lists name more than {self.config.max_resources} resources; raise "
                                     "harvest.max_resources if the source is right", provider=self.provider)
                if since and _moment(_when(resource)) > _moment(newest):
                    newest = _when(resource)
                if number > done:
                    page.append(resource)
                if len(page) == PAGE_SIZE:
                    yield from self.page(progress, page)
                    progress.save(self.stats.pages, number, capability_list, {"failed": self.failed})
                    page = []
            if page:
                yield from self.page(progress, page)
            progress.finish()
        finally:
            progress.close()
        failed = bool(self.stats.failed and not self.stats.records)
        outage = failed and all(error.retryable for error in self.stats.errors)
        if not outage:  # a source that answered nothing (timeouts, 5xx) spends no attempt and moves nothing
            self.checkpoint.save_state(STATE, {"capability_list": capability_list, "since": newest,
                                               "retry": self.retries(retry)})
            self.stats.note(f"next increment: changes after {newest}")
        if failed:
            raise IngestError(
                f"every one of the {self.stats.failed} resources of this harvest failed (first: "
                f"{self.stats.errors[0]}); they are tried again next run", provider=self.provider,
                file=capability_list, retryable=outage,
            )

    def retries(self, earlier: dict[str, dict]) -> list[dict]:
        """This run's failed resources, to be tried again by the next increment (oldest first); one failed on its
        ``max_attempts``-th run is given up, the harvest log saying why."""
        kept = []
        for uri, entry in self.failed.items():
            attempts = earlier.get(uri, {}).get("attempts", 0) + 1
            if attempts >= self.config.max_attempts:
                self.stats.note(f"gave up on {uri} ({entry['change']} at {entry['datetime']}) after {attempts} "
                                f"attempts: {entry['error']}")
            else:
                kept.append({**entry, "attempts": attempts})
        if kept:
            self.stats.note(f"{len(kept)} failed resources will be tried again by the next increment")
        return sorted(kept, key=lambda e: (_moment(e["datetime"]), e["uri"]))

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
                self.requests.request(self.stats.pages, resource.uri, {"change": "deleted"}, None, _when(resource),
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

    def changes(self, url: str, since: str, until: str, retry: dict[str, dict]) -> Iterator[Resource]:
        """Each URI's newest change with ``since < time <= until`` (the change's ``datetime``, or its ``lastmod`` as
        ResourceSync 1.0 sources give it), plus the earlier failures in ``retry`` no newer change replaces,
        oldest first."""
        after, before = _moment(since), _moment(until)
        document = self.sitemap(url, "changelist")
        if self.parsed_index(document):
            parts = [c for c in document if c.md_until is None or _moment(c.md_until) > after]
            lists = [(urljoin(url, c.uri), self.sitemap(urljoin(url, c.uri), "changelist", index=False)) for c in parts]
        else:
            lists = [(url, document)]
        earlier = {uri: _resource(entry) for uri, entry in retry.items()}
        newest: dict[str, Resource] = dict(earlier)
        for list_url, changes in lists:
            for change in self.absolute(changes, list_url):
                when = _when(change)
                if not when:
                    self.stats.record_error(ValidationError("change has neither datetime nor lastmod",
                                                            provider=self.provider, file=list_url, record=change.uri))
                elif after < _moment(when) <= before and (
                        change.uri not in newest or _moment(_when(newest[change.uri])) <= _moment(when)):
                    newest[change.uri] = change
                    if len(newest) > self.config.max_resources:
                        raise LimitError(f"the Change Lists name more than {self.config.max_resources} resources",
                                         provider=self.provider, file=list_url)
        again = sum(newest[uri] is resource for uri, resource in earlier.items())
        self.stats.note(f"increment of {len(newest)} resources changed after {since} until {until} "
                        f"({len(lists)} Change Lists; {again} failed before and tried again)")
        return iter(sorted(newest.values(), key=lambda r: (_moment(_when(r)), r.uri)))

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
        except SitemapParseError as exc:
            if exc.args[:1] == (MULTIPLE_MD,):
                count, loc = exc.args[1]
                raise ParseError(f"the <url> of {loc} has {count} <rs:md> elements; ResourceSync allows one per <url>",
                                 provider=self.provider, file=response.url, record=loc) from exc
            raise ParseError(f"not a ResourceSync sitemap: {_in_words(exc)}", provider=self.provider,
                             file=response.url) from exc
        except (etree.XMLSyntaxError, UnsafeXML, SitemapIndexError, ValueError) as exc:
            raise ParseError(f"not a ResourceSync sitemap: {exc}", provider=self.provider, file=response.url) from exc
        document.parsed_index = reader.parsed_index
        return document

    def record_or_none(self, resource: Resource) -> tuple[dict | None, HttpResponse | None]:
        """The resource's record (None when it is a counted record error) and the response it came from.

        A resource that could not be fetched, or whose content is not what the list says (yet: a source may
        update the content before its lists), is kept for the next run to try again; one that was received as
        listed but is no record (another type, unreadable) is not: only a new change of it can mend that."""
        uri, response, received = resource.uri, None, False
        try:
            if resource.change == "deleted":
                document = json.dumps({"uri": uri, "change": "deleted", "datetime": _when(resource)})
                return original_record(self.provider, uri, self.ingest_ts, document, "application/json", True), None
            with context(provider=self.provider, record=uri):
                response = self.http.get(uri, max_bytes=self.config.max_resource_bytes)
            self.verify(resource, response)
            received = True
            return self.record(resource, response), response
        except IngestError as exc:
            self.stats.record_error(exc.add_context(provider=self.provider, record=uri))
            if not received:
                self.failed[uri] = {**_entry(resource, self.as_of), "error": str(exc)}
            return None, response

    def record(self, resource: Resource, response: HttpResponse) -> dict:
        """The OriginalRecord of a fetched and verified resource (a ValidationError or ParseError when it is none)."""
        uri = resource.uri
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


def _in_words(exc: SitemapParseError) -> str:
    """resync's message, formatted where resync left the format and its arguments apart."""
    if len(exc.args) == 2 and isinstance(exc.args[1], tuple):
        try:
            return exc.args[0] % exc.args[1]
        except (TypeError, ValueError):
            pass
    return str(exc)


def _when(resource: Resource) -> str | None:
    """When a change happened: its ``datetime`` (ResourceSync 1.1), else its ``lastmod`` (1.0 Change Lists)."""
    return resource.datetime or resource.lastmod


def _entry(resource: Resource, as_of: str) -> dict:
    """What the next run needs to fetch and check ``resource`` again (kept in the provider's state); a Resource
    List entry without ``lastmod`` counts as created at the list's time ``as_of``."""
    return {"uri": resource.uri, "change": resource.change or "created", "datetime": _when(resource) or as_of,
            "length": resource.length, "md5": resource.md5, "sha256": resource.sha256, "type": resource.mime_type}


def _resource(entry: dict) -> Resource:
    return Resource(uri=entry["uri"], change=entry["change"], datetime=entry["datetime"], length=entry["length"],
                    md5=entry["md5"], sha256=entry["sha256"], mime_type=entry["type"])


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
