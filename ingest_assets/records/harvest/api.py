"""API harvesting: JSON or XML answers, paged by cursor, offset, page number or next link, one page in memory.

How answers and records are read (dotted paths for JSON, XPaths for XML) is :mod:`.api_pages`. A list ends on
an empty page; a missing or empty cursor or next link; with ``paging.total_path``, once its records reach the
total the pages announce (a page without one is an error); with ``paging.ends_on_short_page``, after a page of
fewer than ``page_size`` records; or, without ``sets``, on a page whose ids were all yielded before in this run
(a server ignoring the offset repeats its pages; a page of records without ids does not end the list). An empty
page before the total ends the list too, and the harvest log says so (Primo's deep-paging limit). A cursor,
offset, page or link already requested in the list is an error (the paging loops); so is a page that says it
failed (``error_path``).

``sets``: one list per set, in order, each set put where the endpoint or a parameter says ``{set}`` (IA's and
LOC's collections); a record in several is yielded once. ``items``: each value ``records_path`` selects is the
link to one record, fetched on its own (LOC's sitemaps); a link that cannot be read, or whose fetch fails for
good (HTTP 404), is a counted record error; one a retry could help (a timeout, a 5xx) fails the page.

Secrets (a parameter or header given as ``{env: NAME}`` or ``{file: PATH}``) go with every request to the
endpoint's origin and nowhere else (not to a next link or item on another host, not through a redirect there).
A next link's secret parameters are dropped from the position the checkpoint keeps, and every secret is
redacted from the request log, the harvest log, record errors and the error that ends a run.

Bounds: ``bounds`` (pages, minutes, stale pages; checked after each page, minutes before each item fetch too;
``max_records``: a LimitError before the record past it), ``max_page_bytes`` per page, ``items.max_bytes``.

Resuming follows :mod:`.progress`: after each page the records it yielded are spooled, then the checkpoint
holds ``{"kind": "api", "request": <endpoint, params, paging style, sets>, "position": <next page's cursor,
offset, page number or URL, and set>, "page": n, "spooled": <records of pages 1..n>}``. A re-run of the same
request re-yields the spooled records first and continues at the position; another request's checkpoint and
spool are cleared. Both are cleared at the end of the last list. A record id is yielded once per run.
"""

from __future__ import annotations

import copy
import json
import logging
import re
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urljoin, urlsplit, urlunsplit

import requests

from ingest_assets.core.errors import FetchError, IngestError, LimitError, ParseError, ValidationError, context
from ingest_assets.core.http import HttpResponse, origin
from ingest_assets.core.registry import SET_PLACEHOLDER, ApiHarvest, Paging, SecretRef
from ingest_assets.records.harvest.api_pages import lookup, page_reader, record_id
from ingest_assets.records.harvest.base import HarvestContext, Harvester
from ingest_assets.records.harvest.original import original_record
from ingest_assets.records.harvest.progress import Progress

__all__ = ["ApiHarvester", "lookup", "record_id"]  # lookup and record_id: the JSON paths the file harvest reads too

log = logging.getLogger(__name__)


class ApiHarvester(Harvester):
    config: ApiHarvest

    def __init__(self, provider: str, config: ApiHarvest, context: HarvestContext):
        super().__init__(provider, config, context)
        self.pages = page_reader(config.format, config.namespaces)
        self.reader = page_reader(config.items.format, config.namespaces) if config.items else self.pages
        self.secret_params = {key for key, value in config.params.items() if isinstance(value, SecretRef)}
        secret_headers = {key.lower() for key, value in config.headers.items() if isinstance(value, SecretRef)}
        if secret_headers:  # they never follow a redirect to another origin
            self.http = copy.copy(self.http)
            self.http.credential_headers = self.http.credential_headers | secret_headers

    @property
    def paging(self) -> Paging:
        return self.config.paging

    def records(self) -> Iterator[dict]:
        try:
            yield from self.lists()
        except Exception as exc:
            if not self.secrets:
                raise
            raise self.secrets.scrub(exc) from None  # the cause (a library's error) may carry a URL

    def lists(self) -> Iterator[dict]:
        progress = self.progress("api", self.list_request(), "position")
        sets = self.config.sets or [None]
        try:
            position = yield from self.resume(progress)
            if position is not None and position.get("set") not in sets:
                raise IngestError(f"the harvest checkpoint is at set {position.get('set')!r}, not one of {sets}; "
                                  "clear it to restart", provider=self.provider)
            first = sets.index(position.get("set")) if position else 0
            for index in range(first, len(sets)):
                following = sets[index + 1] if index + 1 < len(sets) else None
                start = position if position and index == first else self.first_position(sets[index])
                yield from self.list_records(progress, start, following)
            progress.finish()
        finally:
            progress.close()

    def list_request(self) -> dict:
        request = {"endpoint": self.config.endpoint, "params": self.config.model_dump(mode="json")["params"],
                   "paging": self.paging.style}
        return {**request, "sets": list(self.config.sets)} if self.config.sets else request

    def list_records(self, progress: Progress, position: dict, following: str | None) -> Iterator[dict]:
        """One list, from ``position``; its last page checkpoints the start of the ``following`` set's list."""
        progress.start_list()
        requested: set[str] = set()
        while True:
            requested.add(_position_key(position))
            self.stats.pages += 1
            page = self.stats.pages
            response, data, items, total = self.read_page(position, page)
            url = self.secrets.redact(response.url)
            records, duplicates = self.stats.records, self.stats.duplicates
            yield from progress.page(self.page_records(items, page, response.url, progress))
            self.requests.response(page, replace(response, url=url), self.logged(position),
                                   range(records, self.stats.records))
            position = self.next_position(position, data, response, len(items), total, page)
            if position is not None and _position_key(position) in requested:
                raise ParseError(f"page {page} points to a page already requested in this run: "
                                 f"{self.logged(position)} (the paging loops)", provider=self.provider, file=url)
            if (position is not None and not self.config.sets and self.stats.records == records
                    and self.stats.duplicates > duplicates):
                log.warning("harvest %s: every id on page %d (%s) was already yielded in this run; "
                            "ending the list", self.provider, page, url)
                position = None
            if position is None:
                if following is not None:
                    progress.save(page, self.first_position(following), url)
                return
            progress.save(page, position, url)

    def read_page(self, position: dict, page: int) -> tuple[HttpResponse, Any, list, int | None]:
        """Fetch and read one page: the answer, the page read, its records and the total it announces."""
        response = self.fetch(position, page)
        url = self.secrets.redact(response.url)
        with context(provider=self.provider, file=url):
            try:
                data, repaired = self.pages.parse(response.content)
            except ValueError as exc:
                raise ParseError(f"page {page} is not {self.pages.format.upper()}: {exc}") from exc
            if repaired:
                self.stats.repaired_pages += 1
                self.stats.note(f"repaired page {page} ({url}): {repaired}")
            said = self.pages.value(data, self.config.error_path) if self.config.error_path else None
            if said:
                raise FetchError(f"page {page} answers an error: {self.secrets.redact(said)}", url=url,
                                 retryable=False)
            items = self.pages.select(data, self.config.records_path)
            if items is None:
                raise ParseError(f"page {page} has no list at {self.config.records_path!r}")
            return response, data, items, self.total(data, page)

    def total(self, data: Any, page: int) -> int | None:
        """The records the list holds, as the page says (``paging.total_path``)."""
        path = self.paging.total_path
        if path is None:
            return None
        text = self.pages.value(data, path)
        if text is None or not text.isdigit():
            raise ParseError(f"page {page} has no total at {path!r} (got {text!r})")
        if not self.config.sets:
            self.stats.expected = int(text)
        return int(text)

    def page_records(self, items: list, page: int, page_url: str, progress: Progress) -> Iterator[dict]:
        url = self.secrets.redact(page_url)
        for number, item in enumerate(items, 1):
            self.check_bounds(page, url, progress)
            try:
                found = self.item(item, page_url) if self.config.items else item
                if found is None:
                    continue
                local_id = self.reader.record_id(found, self.config.id_path)
                record = original_record(self.provider, local_id, self.ingest_ts, self.reader.document(found),
                                         self.reader.mimetype, False)
            except IngestError as exc:
                exc.file = self.secrets.redact(exc.file or url)
                exc.record = f"page {page} record #{number}" + (f" ({exc.record})" if exc.record else "")
                if exc.retryable:  # the run fails and its re-run fetches this page again
                    raise exc.add_context(provider=self.provider)
                self.stats.record_error(self.secrets.scrub(exc.add_context(provider=self.provider)))
                continue
            yield record

    def check_bounds(self, page: int, url: str, progress: Progress) -> None:
        """A LimitError before the record past ``max_records``, or (records fetched one by one) past the time."""
        bounds = self.config.bounds
        if self.stats.records >= bounds.max_records:
            reason = f"the source holds more than {bounds.max_records} records"
        elif self.config.items and time.monotonic() > progress.deadline:
            reason = f"the list goes on past {bounds.max_minutes} minutes"
        else:
            return
        raise LimitError(f"harvest stopped on page {page}: {reason}; raise harvest.bounds if the source is right",
                         provider=self.provider, file=url)

    def item(self, value: Any, page_url: str) -> Any:
        """The record a link on the page points to, fetched and read; None for a link ``url_pattern`` skips."""
        link = self.pages.link(value)
        if link is None:
            raise ValidationError("is not a link to a record")
        if self.config.items.url_pattern and not re.search(self.config.items.url_pattern, link):
            return None
        url = self.item_url(urljoin(page_url, link))
        params, headers = self.with_secrets(url, self.config.endpoint, {})
        with context(file=self.secrets.redact(url), doing="fetching the record it links to"):
            response = self.http.get(url, params=params or None, headers=headers or None,
                                     max_bytes=self.config.items.max_bytes)
            try:
                return self.reader.parse(response.content)[0]
            except ValueError as exc:
                raise ParseError(f"the record it links to is not {self.reader.format.upper()}: {exc}") from exc

    def item_url(self, url: str) -> str:
        """A record's link with the query ``items.params`` give (if any), no fragment."""
        if not self.config.items.params:
            return url
        return urlunsplit(urlsplit(url)._replace(query=urlencode(self.config.items.params, doseq=True), fragment=""))

    def first_position(self, set_name: str | None) -> dict:
        base = {"set": set_name} if self.config.sets else {}
        if self.paging.style == "cursor":
            return {**base, "cursor": self.paging.initial_cursor}
        if self.paging.style in ("offset", "page"):
            return {**base, self.paging.style: self.paging.start}
        return {**base, "url": self.endpoint(set_name)}

    def endpoint(self, set_name: str | None) -> str:
        return self.config.endpoint.replace(SET_PLACEHOLDER, quote(set_name or "", safe=""))

    def fetch(self, position: dict, page: int) -> HttpResponse:
        endpoint = self.endpoint(position.get("set"))
        style, paging = self.paging.style, self.paging
        if style == "next" and position["url"] != endpoint:
            url, params = position["url"], {}  # a next link carries its own query
        else:
            url, params = endpoint, self.params(position.get("set"))
            if style == "cursor" and position["cursor"] is not None:
                params[paging.cursor_param] = position["cursor"]
            elif style in ("offset", "page"):
                params[paging.offset_param if style == "offset" else paging.page_param] = str(position[style])
                params[paging.limit_param] = str(paging.page_size)
        params, headers = self.with_secrets(url, endpoint, params)
        with context(provider=self.provider, doing=f"fetching page {page}"):
            return self.http.get(url, params=params or None, headers=headers or None,
                                 max_bytes=self.config.max_page_bytes)

    def params(self, set_name: str | None) -> dict[str, Any]:
        """The block's plain parameters, ``{set}`` replaced by the set."""
        def place(value: str) -> str:
            return value.replace(SET_PLACEHOLDER, set_name) if set_name is not None else value

        return {key: [place(v) for v in value] if isinstance(value, list) else place(value)
                for key, value in self.config.params.items() if not isinstance(value, SecretRef)}

    def with_secrets(self, url: str, endpoint: str, params: dict) -> tuple[dict, dict]:
        """``params`` and the headers of a request to ``url``: the secret ones only on the endpoint's origin."""
        headers = {key: value for key, value in self.config.headers.items() if isinstance(value, str)}
        if origin(url) == origin(endpoint):
            params = {**params, **{key: self.secrets[f"params.{key}"] for key in self.secret_params}}
            headers.update({key: self.secrets[f"headers.{key}"] for key, value in self.config.headers.items()
                            if isinstance(value, SecretRef)})
        return params, headers

    def next_position(self, position: dict, data: Any, response: HttpResponse, count: int, total: int | None,
                      page: int) -> dict | None:
        if count == 0:
            self.note_short_of_total(position, total, page, response.url)
            return None
        base = {"set": position["set"]} if "set" in position else {}
        paging = self.paging
        if paging.style == "cursor":
            cursor = self.pages.value(data, paging.cursor_path)
            return {**base, "cursor": cursor} if cursor else None
        if paging.style == "next":
            link = self.pages.value(data, paging.next_path) if paging.next_path else _link_next(response)
            return {**base, "url": self.without_secrets(urljoin(response.url, link))} if link else None
        if paging.ends_on_short_page and count < paging.page_size:
            return None
        if paging.style == "offset":
            following, done = {**base, "offset": position["offset"] + count}, position["offset"] + count - paging.start
        else:
            following, done = {**base, "page": position["page"] + 1}, (position["page"] + 1 - paging.start) * paging.page_size
        return None if total is not None and done >= total else following

    def note_short_of_total(self, position: dict, total: int | None, page: int, url: str) -> None:
        """An empty page before the announced total: the list ends; the harvest log says where."""
        if total is None or self.paging.style not in ("offset", "page"):
            return
        paging = self.paging
        done = (position["offset"] - paging.start if paging.style == "offset"
                else (position["page"] - paging.start) * paging.page_size)
        if done < total:
            self.stats.note(f"page {page} ({self.secrets.redact(url)}) is empty after {done} of the {total} records "
                            "the list announces: the list ends there (the API's deep-paging limit?)")

    def without_secrets(self, url: str) -> str:
        """``url`` without the secret parameters (a next link that repeats them: they are added to each request)."""
        parts = urlsplit(url)
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        kept = [(key, value) for key, value in pairs if key not in self.secret_params]
        return url if len(kept) == len(pairs) else urlunsplit(parts._replace(query=urlencode(kept)))

    def logged(self, position: dict) -> dict:
        """``position`` as the request log and errors show it (secrets redacted)."""
        return {key: self.secrets.redact(value) if isinstance(value, str) else value for key, value in position.items()}


def _position_key(position: dict) -> str:
    return json.dumps(position, sort_keys=True)


def _link_next(response: HttpResponse) -> str | None:
    header = next((value for key, value in response.headers.items() if key.lower() == "link"), None)
    for link in requests.utils.parse_header_links(header) if header else ():
        if link.get("rel") == "next":
            return link.get("url")
    return None
