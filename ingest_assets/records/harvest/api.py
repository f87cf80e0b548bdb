"""JSON API harvesting: pages by cursor, offset or next link, one page in memory at a time.

``records_path`` and ``id_path`` are dotted paths (``hits.hits``, ``_source.id``; digits index lists).
The list ends on an empty page, a missing/empty cursor or next link, (offset paging with ``total_path``)
when the total is reached, or on a page whose ids were all yielded before in this run (a server ignoring
the offset repeats its pages; a page of records without ids does not end the list). A cursor, offset or
next link already requested in this run is an error (the paging loops). Each record's document is the
record object re-serialised as JSON (UTF-8, not ASCII-escaped).

Resuming follows :mod:`.progress`: after each page the records it yielded are spooled, then the checkpoint
holds ``{"kind": "api", "request": <endpoint, params, paging style>, "position": <next page's cursor, offset
or URL>, "page": n, "spooled": <records of pages 1..n>}``. A re-run of the same request re-yields the
spooled records first and continues at the position; another request's checkpoint and spool are cleared.
Both are cleared at the end of the list. A record id is yielded once per run.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urljoin

import requests

from ingest_assets.core import json_input
from ingest_assets.core.errors import IngestError, ParseError, ValidationError, context
from ingest_assets.core.http import HttpResponse
from ingest_assets.core.registry import ApiHarvest, Paging
from ingest_assets.records.harvest.base import Harvester
from ingest_assets.records.harvest.original import original_record

log = logging.getLogger(__name__)


def lookup(data: Any, path: str) -> Any:
    """Follow a dotted path through mappings and lists; None where it leads nowhere."""
    for part in path.split("."):
        if isinstance(data, Mapping):
            data = data.get(part)
        elif isinstance(data, list) and part.isdigit() and int(part) < len(data):
            data = data[int(part)]
        else:
            return None
    return data


def record_id(record: Any, id_path: str, provider: str) -> str:
    if not isinstance(record, Mapping):
        raise ValidationError(f"record is a JSON {type(record).__name__}, not an object", provider=provider)
    value = lookup(record, id_path)
    if value is None or isinstance(value, (Mapping, list, bool)) or str(value).strip() == "":
        raise ValidationError(f"record has no usable id at {id_path!r} (got {value!r})", provider=provider)
    return str(value).strip()


class ApiHarvester(Harvester):
    config: ApiHarvest

    @property
    def paging(self) -> Paging:
        return self.config.paging

    def records(self) -> Iterator[dict]:
        request = {"endpoint": self.config.endpoint, "params": dict(self.config.params), "paging": self.paging.style}
        progress = self.progress("api", request, "position")
        requested: set[str] = set()
        try:
            position = (yield from self.resume(progress)) or self.first_position()
            while position is not None:
                requested.add(_position_key(position))
                self.stats.pages += 1
                page = self.stats.pages
                response = self.fetch(position, page)
                try:
                    data = json_input.loads(response.content)
                except ValueError as exc:
                    raise ParseError(f"page {page} is not JSON: {exc}", provider=self.provider, file=response.url) from exc
                items = lookup(data, self.config.records_path)
                if not isinstance(items, list):
                    raise ParseError(
                        f"page {page} has no list at {self.config.records_path!r}", provider=self.provider,
                        file=response.url,
                    )
                records, duplicates = self.stats.records, self.stats.duplicates
                yield from progress.page(self.page_records(items, page, response.url))
                self.requests.response(page, response, position, range(records, self.stats.records))
                position = self.next_position(position, data, response, len(items)) if items else None
                if position is not None and _position_key(position) in requested:
                    raise ParseError(
                        f"page {page} points to a page already requested in this run: {position} (the paging loops)",
                        provider=self.provider, file=response.url,
                    )
                if position is not None and self.stats.records == records and self.stats.duplicates > duplicates:
                    log.warning("harvest %s: every id on page %d (%s) was already yielded in this run; "
                                "ending the list", self.provider, page, response.url)
                    position = None
                if position is not None:
                    progress.save(page, position, response.url)
            progress.finish()
        finally:
            progress.close()

    def page_records(self, items: list, page: int, url: str) -> Iterator[dict]:
        for number, item in enumerate(items, 1):
            try:
                local_id = record_id(item, self.config.id_path, self.provider)
                record = original_record(
                    self.provider, local_id, self.ingest_ts, json.dumps(item, ensure_ascii=False), "application/json", False
                )
            except IngestError as exc:
                exc.file, exc.record = url, f"page {page} record #{number}" + (f" ({exc.record})" if exc.record else "")
                self.stats.record_error(exc)
                continue
            yield record

    def first_position(self) -> dict:
        if self.paging.style == "cursor":
            return {"cursor": self.paging.initial_cursor}
        if self.paging.style == "offset":
            return {"offset": 0}
        return {"url": self.config.endpoint}

    def fetch(self, position: dict, page: int) -> HttpResponse:
        url, params = self.config.endpoint, dict(self.config.params)
        if self.paging.style == "cursor" and position["cursor"] is not None:
            params[self.paging.cursor_param] = position["cursor"]
        elif self.paging.style == "offset":
            params[self.paging.offset_param] = str(position["offset"])
            params[self.paging.limit_param] = str(self.paging.page_size)
        elif self.paging.style == "next" and position["url"] != self.config.endpoint:
            url, params = position["url"], None  # a next link carries its own query
        with context(provider=self.provider, doing=f"fetching page {page}"):
            return self.http.get(url, params=params, max_bytes=self.config.max_page_bytes)

    def next_position(self, position: dict, data: Any, response: HttpResponse, count: int) -> dict | None:
        if self.paging.style == "offset":
            offset = position["offset"] + count
            total = lookup(data, self.paging.total_path) if self.paging.total_path else None
            return None if isinstance(total, int) and offset >= total else {"offset": offset}
        if self.paging.style == "cursor":
            value = lookup(data, self.paging.cursor_path)
            return {"cursor": str(value)} if value not in (None, "") else None
        link = lookup(data, self.paging.next_path) if self.paging.next_path else _link_next(response)
        return {"url": urljoin(response.url, str(link))} if link else None


def _position_key(position: dict) -> str:
    return json.dumps(position, sort_keys=True)


def _link_next(response: HttpResponse) -> str | None:
    header = next((value for key, value in response.headers.items() if key.lower() == "link"), None)
    for link in requests.utils.parse_header_links(header) if header else ():
        if link.get("rel") == "next":
            return link.get("url")
    return None
