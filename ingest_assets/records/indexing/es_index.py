"""Search index on an Elasticsearch or OpenSearch server (one client API: :mod:`ingest_assets.core.search_clients`):
alias-swapped full builds and incremental bulk upserts/deletes, with 429 back-off and per-document failures
counted, not fatal."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime

from elasticsearch import ApiError, NotFoundError
from elasticsearch.helpers import streaming_bulk

from ingest_assets import schemas
from ingest_assets.core.search_clients import connect, error_type, reason, redacted, translated
from ingest_assets.core import errors
from ingest_assets.core.errors import FetchError, IngestError
from ingest_assets.records.indexing.naming import NO_INDEX_HINT
from ingest_assets.records.indexing.naming import build_name, check_alias
from ingest_assets.records.indexing.results import (
    DEFAULT_MAX_FAILURE_RATE,
    IndexBuildRefused,
    IndexStats,
    Tally,
    utc_now,
)
from ingest_assets.records.indexing.search_index import SearchIndex

MAPPING = "search-dpla-map4-mapping.json"


class ElasticsearchIndex(SearchIndex):
    """Search index on an Elasticsearch or OpenSearch cluster; ``alias`` is what readers query."""

    def __init__(
        self,
        url: str,
        *,
        request_timeout: float = 60.0,
        chunk_size: int = 500,
        max_chunk_bytes: int = 10 * 1024 * 1024,
        max_retries: int = 6,
        initial_backoff: float = 1.0,
        max_backoff: float = 60.0,
        clock: Callable[[], datetime] = utc_now,
    ):
        self.url = redacted(url)  # for messages: the URL may carry user:password
        body = schemas.read_json(MAPPING)
        self._settings, self._mappings = body.get("settings"), body.get("mappings")
        self._bulk_options = dict(
            chunk_size=chunk_size, max_chunk_bytes=max_chunk_bytes, max_retries=max_retries,
            initial_backoff=initial_backoff, max_backoff=max_backoff,
        )
        self._clock = clock
        # 429 is retried by the bulk helper (only the rejected documents, with back-off), not by the transport.
        self._client = connect(
            url,
            request_timeout=request_timeout,
            max_retries=3,
            retry_on_timeout=True,
            retry_on_status=(502, 503, 504),
        )

    def close(self) -> None:
        self._client.close()

    def full_build(
        self, alias: str, records: Iterable[dict], *, max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE
    ) -> IndexStats:
        """Load ``records`` into a new index ``<alias>-<yyyymmddhhmmss>``, swap ``alias`` onto it atomically,
        then delete the indices the alias left. Deletion records are counted, nothing is sent for them.
        If more than ``max_failure_rate`` of the input failed, the new index is dropped and the alias kept
        (IndexBuildRefused carries the stats)."""
        check_alias(alias)
        with self._translated("full build", alias):
            previous = self._alias_targets(alias)
            name = self._create(alias)
            try:
                tally = Tally(alias, name)
                self._bulk(name, tally, tally.valid(records), send_deletes=False)
                self._client.indices.refresh(index=name)
                stats = tally.finish(0, self._client.count(index=name)["count"])
                if tally.failure_rate > max_failure_rate:
                    raise IndexBuildRefused(
                        f"{stats.failed} of {tally.input} documents failed (more than {max_failure_rate:.0%}); "
                        f"alias {alias!r} left unchanged", stats=stats,
                    )
                actions = [{"add": {"index": name, "alias": alias}}]
                actions += [{"remove": {"index": old, "alias": alias}} for old in previous]
                self._client.indices.update_aliases(actions=actions)
            except BaseException:
                self._client.indices.delete(index=name, ignore_unavailable=True)
                raise
            for old in previous:
                self._client.indices.delete(index=old, ignore_unavailable=True)
        return stats

    def apply(self, alias: str, records: Iterable[dict]) -> IndexStats:
        """Upsert and delete (``deleted=True``) records in the index behind ``alias`` (created if missing).
        A delete of an id the index does not hold (404) counts as deleted."""
        check_alias(alias)
        with self._translated("incremental update", alias):
            targets = self._alias_targets(alias)
            if not targets:
                targets = [self._create(alias, aliases={alias: {}})]
            if len(targets) > 1:
                raise IngestError(f"alias {alias!r} points at several indices {targets}", file=alias)
            index = targets[0]
            self._client.indices.refresh(index=index)
            before = self._client.count(index=index)["count"]
            tally = Tally(alias, index)
            self._bulk(index, tally, tally.valid(records), send_deletes=True)
            self._client.indices.refresh(index=index)
            return tally.finish(before, self._client.count(index=index)["count"])

    def count(self, alias: str) -> int:
        with self._translated("count", alias, reading=True):
            return self._client.count(index=check_alias(alias))["count"]

    def search(self, alias: str, query: str, size: int = 10) -> list[dict]:
        """Documents matching all words of ``query`` (simple query string syntax; '' or '*' matches all)."""
        if query.strip() in ("", "*"):
            clause = {"match_all": {}}
        else:
            clause = {"simple_query_string": {"query": query, "default_operator": "and"}}
        with self._translated("search", alias, reading=True):
            response = self._client.search(index=check_alias(alias), query=clause, size=size)
        return [hit["_source"] for hit in response["hits"]["hits"]]

    def _create(self, alias: str, **extra) -> str:
        """Create ``<alias>-<yyyymmddhhmmss>`` with the schema file's settings and mappings."""
        name = build_name(alias, self._clock(), lambda candidate: bool(self._client.indices.exists(index=candidate)))
        self._client.indices.create(index=name, settings=self._settings, mappings=self._mappings, **extra)
        return name

    def _alias_targets(self, alias: str) -> list[str]:
        try:
            return sorted(self._client.indices.get_alias(name=alias).body)
        except NotFoundError:
            return []

    def _bulk(self, index: str, tally: Tally, records: Iterator[tuple[str, bool, str]], send_deletes: bool) -> None:
        def actions():
            for record_id, deleted, document in records:
                if not deleted:
                    yield {"index": {"_index": index, "_id": record_id}}, document
                elif send_deletes:
                    yield {"delete": {"_index": index, "_id": record_id}}, None
                else:
                    tally.deleted(found=False)

        results = streaming_bulk(
            self._client, actions(), expand_action_callback=lambda pair: pair,
            raise_on_error=False, raise_on_exception=False, **self._bulk_options,
        )
        for ok, info in results:
            op, item = next(iter(info.items()))
            status = item.get("status")
            if op == "delete" and (ok or item.get("result") == "not_found"):
                tally.deleted(found=item.get("result") == "deleted")
            elif ok:
                tally.indexed(created=item.get("result") == "created")
            else:
                error_type, reason = _error(item)
                tally.failure(item.get("_id"), op, error_type, reason, status)

    @contextmanager
    def _translated(self, action: str, alias: str, reading: bool = False):
        """Client errors as FetchError; for a read, a missing index is an IngestError naming the alias."""
        try:
            with translated(f"{action} of {alias!r}", self._client):
                yield
        except FetchError as err:
            if reading and isinstance(err.__cause__, NotFoundError):
                raise errors.NotFoundError(
                    f"no search index behind alias {alias!r} ({reason(err.__cause__)})", file=self.url, hint=NO_INDEX_HINT
                ) from err.__cause__
            raise


def _error(item: dict) -> tuple[str, str]:
    """(type, reason) of a failed bulk item: an ES error object, or a whole-request failure."""
    error = item.get("error")
    if isinstance(error, dict):
        return error.get("type", "unknown"), error.get("reason", "")
    exception = item.get("exception")
    if isinstance(exception, ApiError):
        return error_type(exception), reason(exception)
    return "bulk_request_failed", str(error)

