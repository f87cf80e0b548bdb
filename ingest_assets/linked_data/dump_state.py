"""Whether a dump changed, for datasets whose VoID gives no ``dcterms:modified``: told by the dump itself.

An import records, per dump URL, what it saw (:class:`DumpState`: the server's ``ETag`` and ``Last-Modified``,
and the sha256 of the bytes) in the provider's status document (``harvested.dumps``). Later:

* the sensor asks the server (``HEAD``) and compares the validators; a server that sends neither cannot say,
  and the dump is looked at again once a day (:func:`run_token`). The asking is bounded (:data:`MAX_PROBES`
  dumps, :data:`PROBE_SECONDS` per check, so a slow dump host cannot hold up the sensor's tick); a dump not
  asked in time cannot say either;
* an import asks with ``If-None-Match`` / ``If-Modified-Since`` (a ``304`` is "unchanged" without a byte
  sent), else downloads and compares the sha256 it computes anyway: the same bytes are never imported again.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from requests.structures import CaseInsensitiveDict

from ingest_assets.core.errors import FetchError
from ingest_assets.core.http import HttpClient
from ingest_assets.linked_data.void import VoidDescription

MAX_PROBES = 64  # HEAD requests per check; dumps beyond are treated as "cannot say"
PROBE_SECONDS = 10.0  # no HEAD request is started later than this after a check's first


@dataclass(frozen=True)
class DumpState:
    """What was seen of one dump: the server's validators and, once downloaded, the sha256 of its bytes."""

    etag: str | None = None
    last_modified: str | None = None
    sha256: str | None = None

    @classmethod
    def of(cls, headers: Mapping[str, str], sha256: str | None = None) -> "DumpState":
        found = CaseInsensitiveDict(headers)
        return cls(found.get("ETag"), found.get("Last-Modified"), sha256)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "DumpState":
        return cls(data.get("etag"), data.get("last_modified"), data.get("sha256"))

    def to_json(self) -> dict[str, str | None]:
        return asdict(self)

    @property
    def validated(self) -> bool:
        return bool(self.etag or self.last_modified)

    def same_as(self, seen: "DumpState | None") -> bool | None:
        """Whether this is the dump ``seen`` was: by the bytes when both were hashed, else by the validators;
        ``None`` when there is nothing to compare."""
        if seen is None:
            return False
        for mine, theirs in ((self.sha256, seen.sha256), (self.etag, seen.etag),
                             (self.last_modified, seen.last_modified)):
            if mine and theirs:
                return mine == theirs
        return None

    def conditions(self) -> dict[str, str]:
        """Request headers that let a server answer ``304 Not Modified`` when the dump is still this one."""
        headers = {"If-None-Match": self.etag} if self.etag else {}
        if self.last_modified:
            headers["If-Modified-Since"] = self.last_modified
        return headers


def seen_dumps(status: Mapping[str, Any]) -> dict[str, DumpState]:
    """The dumps a provider's status document says the imports saw (``harvested.dumps``)."""
    found = (status.get("harvested") or {}).get("dumps") or {}
    return {url: DumpState.from_json(state) for url, state in found.items()}


def undated_dumps(void: VoidDescription) -> list[str]:
    """The dumps of the parts of ``void`` that give no ``modified`` (the whole dataset's, or its subsets')."""
    return [url for part in (void.subsets or (void,)) if part.modified is None for url in part.dumps]


def probe_all(http: HttpClient, urls: list[str], seconds: float = PROBE_SECONDS) -> dict[str, DumpState | None]:
    """:func:`probe` of the first :data:`MAX_PROBES` ``urls`` while ``seconds`` last (the others: cannot say)."""
    deadline = time.monotonic() + seconds
    return {url: probe(http, url) if number < MAX_PROBES and time.monotonic() < deadline else None
            for number, url in enumerate(urls)}


def changed_by_probes(probes: Mapping[str, DumpState | None], seen: Mapping[str, DumpState]):
    """For :func:`~.importer.check`: a part changed unless the server showed each of its dumps is the one seen."""

    def changed(part: VoidDescription) -> bool:
        return any(not (probes.get(url) and probes[url].same_as(seen.get(url))) for url in part.dumps)

    return changed


def probe(http: HttpClient, url: str) -> DumpState | None:
    """The dump's validators by ``HEAD`` (None when the server did not answer it)."""
    try:
        with http.stream(url, method="HEAD") as (response, _hops):
            return DumpState.of(response.headers)
    except FetchError:
        return None


def run_token(url: str, state: DumpState | None, now: datetime) -> str:
    """What a dump contributes to a run key: its validators, or the day when the server gives none (one import
    run a day then compares the bytes)."""
    if state is not None and state.validated:
        return f"{url} {state.etag} {state.last_modified}"
    return f"{url} unvalidated {now.date().isoformat()}"
