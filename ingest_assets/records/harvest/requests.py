"""The request log of one harvest: one JSON line per response, kept as ``_LOGS/harvest-requests.jsonl``.

Each line::

    {"page": 2, "url": <the URL answered, query included>, "params": <the request's arguments: verb, set,
     from/until or resumptionToken; cursor or offset>, "status": 200, "response_date": <OAI-PMH responseDate,
     else the HTTP Date header>, "records": [first, end]}

``records`` is the half-open range of output positions (0-based, in part order) the page's records took:
a harvest output is written in the order the harvest yields, so a record's page follows from its position
and no per-record side file is needed. ``Identify`` and ``ListSets`` are page 0; pages re-yielded from a
checkpoint spool after a failed run are one line ``{"spooled_pages": n, "records": [0, end]}`` (that run's requests were
discarded with its output). A file harvest is one line per file it read (``page``: the file's number; ``url``:
its path, S3 URI or URL; ``status`` None but for a URL; ``params`` ``{"deletes": true}`` for a delete list). Lines
go to a temporary file, so memory stays flat whatever the page count.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ingest_assets.core.http import HttpResponse

REQUEST_LOG = "harvest-requests.jsonl"


class RequestLog:
    def __init__(self):
        self._file = tempfile.TemporaryFile(prefix="harvest-requests-")

    def response(self, page: int, response: HttpResponse, params: Mapping[str, Any] | None, records: range,
                 response_date: str | None = None) -> None:
        date = response_date or next((v for k, v in response.headers.items() if k.lower() == "date"), None)
        self.request(page, response.url, params, response.status, date, records)

    def request(self, page: int, url: str, params: Mapping[str, Any] | None, status: int | None,
                response_date: str | None, records: range) -> None:
        self._write({"page": page, "url": url, "params": dict(params or {}), "status": status,
                     "response_date": response_date, "records": [records.start, records.stop]})

    def spooled(self, pages: int, records: range) -> None:
        self._write({"spooled_pages": pages, "records": [records.start, records.stop]})

    def _write(self, entry: dict) -> None:
        self._file.write(json.dumps(entry, ensure_ascii=False).encode("utf-8") + b"\n")

    def chunks(self) -> Iterator[bytes]:
        """The log's lines, from the start (call once the harvest is over)."""
        self._file.flush()
        self._file.seek(0)
        yield from self._file
        self._file.close()


def page_of(lines: Iterable[bytes], position: int) -> dict | None:
    """The log entry whose records hold output position ``position`` (None if no entry does)."""
    for line in lines:
        entry = json.loads(line)
        first, end = entry["records"]
        if first <= position < end:
            return entry
    return None
