"""OAI-PMH ``ListRecords`` harvesting with lxml (one page in memory at a time).

* Each ``<record>`` becomes an OriginalRecord whose document is the whole ``<record>`` element (header and
  metadata), serialised standalone with every in-scope namespace declared (a ``GetRecord`` response is
  read the same way: one record, no token). A ``<header status="deleted">``
  record is kept with ``deleted=True`` and the ``<header>`` element as its document.
* ``window=(start, end)`` (half-open) becomes ``from``/``until`` (inclusive) at the granularity the
  repository's ``Identify`` announces: ``YYYY-MM-DD`` widens the window to whole days. ``Identify`` is asked
  once per windowed run and its answer kept in the provider's state (``harvest-state-oai-identify.json``, per
  endpoint); when it fails or answers nonsense the kept answer is used, else day granularity (every
  repository must accept it, and a partition is a whole day). The harvest log says which. An endpoint that
  gives no HTTP answer at all (connection refused, a name that does not resolve, a timeout) fails the harvest
  there: the list would meet the same.
* Sets: one list per set named in ``sets``, or per set ``ListSets`` names (``all_sets``, paged and bounded
  like a list) less ``exclude_sets``; no set: one list of the whole repository. A record in several sets is
  yielded once.
* The list ends at a missing, empty (``<resumptionToken completeListSize="56"/>``, with or without
  attributes) or self-closing token. ``noRecordsMatch`` is an empty list, not an error (on a resumed
  page, where some servers send it once the rest of the list has gone, it ends the list).
* A page that is not well-formed is repaired only by dropping XML-1.0-illegal control characters
  (see :mod:`ingest_assets.core.xml_input`), and the harvest log says which, on which page and where;
  otherwise :class:`ParseError` names the provider, page number and URL.
  Transport retries and backoff are :class:`HttpClient`'s.

Checkpoint, spool and token policy
----------------------------------
As in :mod:`.progress`: after every page whose records were all handed on, that page's records are
spooled, then the checkpoint holds ``{"kind": "oai", "request": <metadataPrefix, sets, from, until>,
"position": {"set": <the set being listed, or null>, "token": <next token, or null at a set's start>},
"page": n, "spooled": <records of pages 1..n>}`` (pages are counted over all the run's lists).
A run whose request equals the checkpoint's first re-yields the spooled records of pages 1..n, then
resumes at the position, so its output holds the whole harvest although the failed run's output was
discarded; a checkpoint for another request (another day, set list or prefix) is ignored and cleared with
its spool. Checkpoint and spool are cleared when the last list is complete.

Tokens expire (a resumed multi-hour harvest is the usual case) and some servers lose them. When the
server answers ``badResumptionToken``, the set's list is restarted ONCE per run from its beginning (the
same ``from``/``until``: OAI-PMH lists are not ordered by datestamp, so no later ``from`` is safe).
Records already yielded in this run, spooled ones included, are not yielded again (ids are deduplicated
for the whole run in a temporary SQLite file, so memory stays flat; ``stats.duplicates`` counts them).
A second ``badResumptionToken`` in the same run is a :class:`FetchError`. A token the server already
issued in this pass over the list is an error too, never an endless loop.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

from lxml import etree

from ingest_assets.core.errors import FetchError, IngestError, LimitError, ParseError, ValidationError, context
from ingest_assets.core.http import HttpResponse
from ingest_assets.core.registry import OaiHarvest
from ingest_assets.records.harvest.base import FULL, INCREMENTAL, Harvester
from ingest_assets.records.harvest.original import original_record
from ingest_assets.records.harvest.progress import Progress
from ingest_assets.core.xml_input import UnresolvedEntity, UnsafeXML, parse_xml, standalone


OAI = "http://www.openarchives.org/OAI/2.0/"
NS = {"oai": OAI}
DAY_GRANULARITY = "YYYY-MM-DD"
GRANULARITIES = (DAY_GRANULARITY, "YYYY-MM-DDThh:mm:ssZ")
IDENTIFY_STATE = "oai-identify"


def _q(name: str) -> str:
    return f"{{{OAI}}}{name}"


class OaiHarvester(Harvester):
    config: OaiHarvest

    @property
    def mode(self) -> str:
        """Incremental when the lists are limited to a window (from/until), else full."""
        return FULL if self.window is None else INCREMENTAL

    def records(self) -> Iterator[dict]:
        request = self.list_request()
        progress = self.progress("oai", request, "position")
        sets = request.get("sets") or [None]
        try:
            position = yield from self.resume(progress)
            if position and position.get("set") not in sets:
                raise IngestError(
                    f"the harvest checkpoint is at set {position.get('set')!r}, not one of {sets}; clear it to restart",
                    provider=self.provider,
                )
            first, token = (sets.index(position["set"]), position.get("token")) if position else (0, None)
            for index in range(first, len(sets)):
                following = sets[index + 1] if index + 1 < len(sets) else None
                yield from self.list_records(progress, request, sets[index], token, following)
                token = None
            progress.finish()
        finally:
            progress.close()

    def list_records(
        self, progress: Progress, request: dict, set_spec: str | None, token: str | None, following: str | None
    ) -> Iterator[dict]:
        """One ``ListRecords`` list (of ``set_spec``, from ``token``); its last page checkpoints the start of
        ``following``, the next set's list."""
        arguments = {key: value for key, value in request.items() if key != "sets"}
        if set_spec is not None:
            arguments["set"] = set_spec
        progress.start_list()
        tokens = set()
        while True:
            self.stats.pages += 1
            page = self.stats.pages
            params = {"verb": "ListRecords", **({"resumptionToken": token} if token else arguments)}
            response = self.fetch(params, page)
            root = self.parse(response, page)
            first = self.stats.records
            error = root.find(_q("error"))
            if error is not None:
                self.log(page, response, params, root, range(first, first))
                code = error.get("code", "")
                if code == "noRecordsMatch":
                    return
                if code == "badResumptionToken" and token and self.stats.restarts == 0:
                    self.stats.restarts += 1
                    self.stats.note(
                        f"badResumptionToken on page {page} ({response.url}); restarting the list from {arguments}"
                    )
                    token = None
                    tokens.clear()
                    continue
                raise FetchError(
                    f"OAI-PMH error {code or '(no code)'} on page {page}: {(error.text or '').strip()}",
                    url=response.url, provider=self.provider, retryable=False,
                )
            container = root.find(_q("ListRecords"))
            if container is None:
                container = root.find(_q("GetRecord"))
            if container is None:
                raise ParseError(
                    f"page {page} is neither ListRecords nor an OAI-PMH error", provider=self.provider,
                    file=response.url,
                )
            foreign = _foreign_children(container)
            if foreign and container.find(_q("record")) is None:
                raise ParseError(
                    f"page {page} lists {len(foreign)} element(s) such as <{foreign[0]}> but no OAI-PMH record "
                    f"(a namespace other than {OAI}?)", provider=self.provider, file=response.url,
                )
            yield from progress.page(self.page_records(container, page, response.url))
            self.log(page, response, params, root, range(first, self.stats.records))
            next_token = self.next_token(container)
            if next_token in tokens:
                raise FetchError(
                    f"server repeated resumption token {next_token!r} on page {page}", url=response.url,
                    provider=self.provider, retryable=False,
                )
            if next_token:
                tokens.add(next_token)
                progress.save(page, {"set": set_spec, "token": next_token}, response.url)
                token = next_token
                continue
            if following is not None:
                progress.save(page, {"set": following, "token": None}, response.url)
            return

    def list_request(self) -> dict:
        """The harvest's arguments: metadataPrefix, sets (when any), from/until (when windowed)."""
        request: dict = {"metadataPrefix": self.config.metadata_prefix}
        sets = self.list_sets() if self.config.all_sets else self.config.sets
        if sets:
            request["sets"] = list(sets)
        if self.window is not None:
            start, end = (moment.astimezone(timezone.utc) for moment in _aware(self.window))
            if end <= start:
                raise ValueError(f"harvest window ends before it starts: {self.window}")
            last = end - timedelta(seconds=1)
            if self.granularity() == DAY_GRANULARITY:
                request["from"], request["until"] = start.strftime("%Y-%m-%d"), last.strftime("%Y-%m-%d")
            else:
                request["from"] = start.strftime("%Y-%m-%dT%H:%M:%SZ")
                request["until"] = last.strftime("%Y-%m-%dT%H:%M:%SZ")
        return request

    def list_sets(self) -> list[str]:
        """Every setSpec ``ListSets`` names, less ``exclude_sets`` (a :class:`LimitError` past the page bounds)."""
        specs: list[str] = []
        tokens: set[str] = set()
        token, pages = None, 0
        deadline = time.monotonic() + self.config.bounds.max_minutes * 60
        while True:
            pages += 1
            params = {"verb": "ListSets", **({"resumptionToken": token} if token else {})}
            response = self.fetch(params, pages, "ListSets page")
            root = self.parse(response, pages, "ListSets page")
            self.log(0, response, params, root, range(0))
            container = root.find(_q("ListSets"))
            if container is None:
                error = root.find(_q("error"))
                what = f"error {error.get('code', '(no code)')}" if error is not None else "no ListSets"
                raise FetchError(
                    f"all_sets: ListSets page {pages} answered {what}", url=response.url, provider=self.provider,
                    retryable=False,
                )
            specs += [spec.text.strip() for spec in container.findall(f"{_q('set')}/{_q('setSpec')}") if spec.text]
            token = self.next_token(container, count=False)
            if not token:
                break
            if token in tokens or pages >= self.config.bounds.max_pages or time.monotonic() > deadline:
                raise LimitError(
                    f"ListSets stopped after page {pages}: repeated token or past harvest.bounds",
                    provider=self.provider, file=response.url,
                )
            tokens.add(token)
        excluded = set(self.config.exclude_sets)
        chosen = [spec for spec in dict.fromkeys(specs) if spec not in excluded]
        self.stats.note(f"all_sets: {len(specs)} sets listed, {len(specs) - len(chosen)} excluded, harvesting {chosen}")
        if not chosen:
            raise ValidationError("all_sets: ListSets names no set left to harvest", provider=self.provider)
        return chosen

    def log(self, page: int, response: HttpResponse, params: dict, root: etree._Element, records: range) -> None:
        date = (root.findtext(_q("responseDate")) or "").strip() or None
        self.requests.response(page, response, params, records, date)

    def granularity(self) -> str:
        """The granularity ``Identify`` announces; else the kept answer; else day granularity (see the module)."""
        try:
            params = {"verb": "Identify"}
            response = self.fetch(params, 0, "Identify")
            root = self.parse(response, 0, "Identify")
            self.log(0, response, params, root, range(0))
            value = (root.findtext("oai:Identify/oai:granularity", namespaces=NS) or "").strip()
            if value not in GRANULARITIES:
                raise ParseError(f"Identify announces no valid granularity ({value!r})", provider=self.provider,
                                 file=response.url)
        except IngestError as exc:
            if isinstance(exc, FetchError) and exc.status is None and exc.retryable:
                raise  # no answer at all: ListRecords asks the same server
            kept = self.checkpoint.load_state(IDENTIFY_STATE) or {}
            if kept.get("endpoint") == self.config.endpoint and kept.get("granularity") in GRANULARITIES:
                self.stats.note(f"Identify failed ({exc}); using the granularity it announced before, "
                                f"{kept['granularity']}")
                return kept["granularity"]
            self.stats.note(f"Identify failed ({exc}); harvesting by day ({DAY_GRANULARITY})")
            return DAY_GRANULARITY
        self.checkpoint.save_state(IDENTIFY_STATE, {"endpoint": self.config.endpoint, "granularity": value})
        self.stats.note(f"Identify announces granularity {value}")
        return value

    def fetch(self, params: dict[str, str], page: int, what: str = "page") -> HttpResponse:
        what = f"{what} {page}" if page else what
        with context(provider=self.provider, doing=f"fetching {what}"):
            return self.http.get(self.config.endpoint, params=params, max_bytes=self.config.max_page_bytes)

    def parse(self, response: HttpResponse, page: int, what: str = "page") -> etree._Element:
        what = f"{what} {page}" if page else what
        try:
            root, removed = parse_xml(response.content)
        except etree.XMLSyntaxError as exc:
            raise ParseError(f"{what} is not well-formed XML: {exc}", provider=self.provider, file=response.url) from exc
        except UnsafeXML as exc:
            raise ParseError(f"{what}: {exc}", provider=self.provider, file=response.url) from exc
        if removed:
            self.stats.repaired_pages += 1
            self.stats.note(f"repaired {what} ({response.url}): {removed}")
        if root.tag != _q("OAI-PMH"):
            raise ParseError(f"{what} is not an OAI-PMH response (root {root.tag})", provider=self.provider, file=response.url)
        return root

    def page_records(self, container: etree._Element, page: int, url: str) -> Iterator[dict]:
        for number, element in enumerate(container.iterfind(_q("record")), 1):
            try:
                record = self.record(element)
            except IngestError as exc:
                self.stats.record_error(exc.add_context(file=url, record=f"page {page} record #{number}"))
                continue
            yield record

    def record(self, element: etree._Element) -> dict:
        header = element.find(_q("header"))
        local_id = (header.findtext(_q("identifier")) or "").strip() if header is not None else ""
        if not local_id:
            raise ValidationError("record has no header identifier", provider=self.provider)
        deleted = header.get("status") == "deleted"
        if not deleted and element.find(_q("metadata")) is None:
            raise ValidationError("record has no metadata and is not deleted", provider=self.provider, record=local_id)
        try:
            document = standalone(header if deleted else element)
        except UnresolvedEntity as exc:
            raise ParseError(str(exc), provider=self.provider, record=local_id) from exc
        return original_record(self.provider, local_id, self.ingest_ts, document, "application/xml", deleted)

    def next_token(self, container: etree._Element, count: bool = True) -> str | None:
        """The resumption token (None at the list's end); ``count``: keep completeListSize as expected records."""
        element = container.find(_q("resumptionToken"))
        if element is None:
            return None
        size = element.get("completeListSize")
        if count and size and size.isdigit():
            self.stats.expected = int(size)
        return (element.text or "").strip() or None


def _foreign_children(container: etree._Element) -> list[str]:
    """Child elements of a ListRecords/GetRecord that are neither OAI-PMH records nor its resumptionToken."""
    known = {_q("record"), _q("resumptionToken")}
    return [child.tag for child in container if isinstance(child.tag, str) and child.tag not in known]


def _aware(window: tuple[datetime, datetime]) -> tuple[datetime, datetime]:
    for moment in window:
        if moment.tzinfo is None or moment.utcoffset() is None:
            raise ValueError("harvest window datetimes must be timezone-aware")
    return window
