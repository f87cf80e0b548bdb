"""Search index on an Elasticsearch or OpenSearch server (one client API: :mod:`ingest_assets.core.search_clients`):
physical indices per build, bulk upserts and deletes with 429 back-off and per-document failures counted (not
fatal), copies through a point in time, alias updates that name what they replace (``must_exist``), and cluster
health per index."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime

from elasticsearch import ApiError, NotFoundError
from elasticsearch.helpers import streaming_bulk

from ingest_assets import schemas
from ingest_assets.core.search_clients import connect, error_type, reason, redacted, translated
from ingest_assets.core import errors
from ingest_assets.core.errors import FetchError, IngestError
from ingest_assets.records.indexing.naming import NO_INDEX_HINT, build_name, check_alias, parse_index
from ingest_assets.records.indexing.results import IndexStats, Tally, utc_now
from ingest_assets.records.indexing.search_index import (
    MAX_IDS, TAG_PAGE, AliasChanged, check_hits, IndexHealth, PhysicalIndex, SearchIndex,
)

MAPPING = "search-dpla-map4-mapping.json"
KEEP_ALIVE = "5m"
COPY_PAGE = 1000
HEALTH_WAIT = "30s"  # how long a health check waits for a new index's shards to be assigned


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

    # -- physical indices -----------------------------------------------------------------------------

    def create_index(self, alias: str, provider: str | None = None) -> str:
        with self._translated("index creation", alias):
            return self._create(alias, provider)

    def write(self, index: str, records: Iterable[dict]) -> IndexStats:
        """Bulk upserts and deletes; a delete of an id the index does not hold (404) counts as deleted."""
        with self._translated("update", check_alias(index)):
            self._client.indices.refresh(index=index)
            before = self._client.count(index=index)["count"]
            tally = Tally(index, index)
            self._bulk(index, tally, tally.valid(records))
            self._client.indices.refresh(index=index)
            return tally.finish(before, self._client.count(index=index)["count"])

    def copy(self, source: str, target: str) -> int:
        """Pages of ``source`` read through a point in time (sorted by ``id``, ``search_after``) and bulk-indexed
        into ``target``: works on every cluster, no reindex module needed."""
        tally = Tally(target, target)
        with self._translated("copy", check_alias(source)):
            self._bulk(target, tally, tally.valid(self._scan(source)))
            self._client.indices.refresh(index=target)
        if tally.stats.failed:
            raise IngestError(f"copy of {source!r} into {target!r} failed for {tally.stats.failed} documents: "
                              f"{tally.stats.failures[:3]}", file=self.url)
        return tally.stats.indexed

    def drop(self, index: str) -> None:
        with self._translated("deletion", check_alias(index)):
            self._client.indices.delete(index=index, ignore_unavailable=True)

    def health(self, index: str) -> IndexHealth:
        """The cluster green or yellow, and every shard of ``index`` the cluster can place assigned: green, or
        yellow only because there are fewer data nodes than copies of a shard (a single-node cluster)."""
        # a wait that times out answers 408 with the figures as they are: those are the evidence
        health = self._client.options(ignore_status=408).cluster.health
        with self._translated("health check", check_alias(index)):
            cluster = health()
            shards = health(index=index, wait_for_status="yellow", timeout=HEALTH_WAIT)
            # a yellow index has every primary active: its shard count over its primaries is the copies of a shard
            copies = (shards["active_shards"] + shards["unassigned_shards"]) // max(shards["active_primary_shards"], 1)
            if shards["status"] == "yellow" and shards["number_of_data_nodes"] >= copies:
                shards = health(index=index, wait_for_status="green", timeout=HEALTH_WAIT)
        evidence = {key: shards[key] for key in (
            "number_of_data_nodes", "active_primary_shards", "active_shards", "unassigned_shards")}
        evidence.update(cluster_status=cluster["status"], index_status=shards["status"])
        placeable = shards["status"] == "green" or (
            shards["status"] == "yellow" and shards["number_of_data_nodes"] < copies)
        if shards["status"] == "yellow":
            evidence["copies_per_shard"] = copies
        ok = cluster["status"] in ("green", "yellow") and placeable
        return IndexHealth(ok, shards["status"], evidence)

    def indices(self, alias: str) -> list[PhysicalIndex]:
        with self._translated("listing", check_alias(alias)):
            held = self._client.indices.get_alias(index=f"{alias}-*").body
            found = []
            for name, info in held.items():
                parsed = parse_index(alias, name)
                if parsed is not None:
                    count = self._client.count(index=name)["count"]
                    found.append(PhysicalIndex(name, parsed.provider, parsed.created, count, alias in info["aliases"]))
        return sorted(found, key=lambda index: (index.created, index.name))

    # -- the alias --------------------------------------------------------------------------------------

    def aliased(self, alias: str) -> list[str]:
        with self._translated("alias lookup", check_alias(alias)):
            return self._alias_targets(alias)

    def update_alias(self, alias: str, add: Sequence[str] = (), remove: Sequence[str] = ()) -> None:
        """One ``_aliases`` request; each ``remove`` carries ``must_exist`` so the whole action fails (404) when the
        alias moved meanwhile."""
        actions = [{"remove": {"index": name, "alias": alias, "must_exist": True}} for name in remove]
        actions += [{"add": {"index": name, "alias": alias}} for name in add]
        if not actions:
            return
        try:
            with self._translated("alias update", check_alias(alias)):
                self._client.indices.update_aliases(actions=actions)
        except FetchError as err:
            if _moved(err.__cause__, remove):
                raise AliasChanged(
                    f"alias {alias!r} no longer points at all of {list(remove)} (it points at "
                    f"{self.aliased(alias)}): another update got there first; nothing changed", file=self.url,
                ) from err.__cause__
            raise

    # -- reading ----------------------------------------------------------------------------------------

    def count(self, target: str) -> int:
        with self._translated("count", target, reading=True):
            return self._client.count(index=check_alias(target))["count"]

    def search(self, target: str, query: str, size: int = 10) -> list[dict]:
        """Documents matching all words of ``query`` (simple query string syntax; '' or '*' matches all)."""
        check_hits(size)
        if query.strip() in ("", "*"):
            clause = {"match_all": {}}
        else:
            clause = {"simple_query_string": {"query": query, "default_operator": "and"}}
        with self._translated("search", target, reading=True):
            response = self._client.search(index=check_alias(target), query=clause, size=size)
        return [hit["_source"] for hit in response["hits"]["hits"]]

    def documents(self, target: str, ids: Sequence[str]) -> dict[str, dict]:
        """An ``ids`` query (it spans every index behind an alias, unlike a get by id)."""
        wanted = list(dict.fromkeys(ids))
        if len(wanted) > MAX_IDS:
            raise ValueError(f"at most {MAX_IDS} ids per call, got {len(wanted)}")
        if not wanted:
            return {}
        with self._translated("lookup", target, reading=True):
            response = self._client.search(index=check_alias(target), query={"ids": {"values": wanted}},
                                           size=len(wanted))
        return {hit["_id"]: hit["_source"] for hit in response["hits"]["hits"]}

    def _create(self, alias: str, provider: str | None) -> str:
        """Create ``<alias>-[<provider>-]<yyyymmddhhmmss>`` with the schema file's settings and mappings."""
        name = build_name(alias, self._clock(), lambda candidate: bool(self._client.indices.exists(index=candidate)),
                          provider)
        self._client.indices.create(index=name, settings=self._settings, mappings=self._mappings)
        return name

    def tagged(self, target: str, tags: Sequence[str]) -> Iterator[tuple[str, list[str]]]:
        """A ``terms`` query on ``tags`` through a point in time on ``target`` (an alias spans every index behind it)."""
        wanted = list(dict.fromkeys(tags))
        if not wanted:
            return
        with self._translated("tag scan", check_alias(target), reading=True):
            for hit in self._hits(target, TAG_PAGE, query={"terms": {"tags": wanted}}, source=["tags"]):
                yield hit["_id"], [tag for tag in hit["_source"].get("tags") or () if tag in wanted]

    def _scan(self, index: str) -> Iterator[dict]:
        """Every document of ``index`` as an IndexRecord, in pages through a point in time."""
        for hit in self._hits(index, COPY_PAGE):
            yield {"id": hit["_id"], "deleted": False, "document": _dumps(hit["_source"])}

    def _hits(self, target: str, size: int, **search) -> Iterator[dict]:
        """The hits of a search on ``target`` by id, ``size`` at a time through a point in time (closed at the end)."""
        pit = self._client.open_point_in_time(index=target, keep_alive=KEEP_ALIVE)["id"]
        try:
            after = None
            while True:
                page = self._client.search(pit={"id": pit, "keep_alive": KEEP_ALIVE}, sort=[{"id": "asc"}],
                                           size=size, search_after=after, track_total_hits=False, **search)
                hits = page["hits"]["hits"]
                yield from hits
                if len(hits) < size:
                    return
                pit, after = page.get("pit_id", pit), hits[-1]["sort"]
        finally:
            self._client.close_point_in_time(id=pit)

    def _alias_targets(self, alias: str) -> list[str]:
        try:
            return sorted(self._client.indices.get_alias(name=alias).body)
        except NotFoundError:
            return []

    def _bulk(self, index: str, tally: Tally, records: Iterator[tuple[str, bool, str]]) -> None:
        def actions():
            for record_id, deleted, document in records:
                if not deleted:
                    yield {"index": {"_index": index, "_id": record_id}}, document
                else:
                    yield {"delete": {"_index": index, "_id": record_id}}, None

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


def _moved(error: BaseException | None, remove: Sequence[str]) -> bool:
    """Whether a failed alias update failed because an index it was to remove is no longer behind the alias."""
    if not isinstance(error, NotFoundError) or not remove:
        return False
    body = error.body.get("error") if isinstance(error.body, dict) else None
    kind = body.get("type") if isinstance(body, dict) else None
    return kind == "aliases_not_found_exception" or (
        kind == "index_not_found_exception" and body.get("index") in remove)


_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode

