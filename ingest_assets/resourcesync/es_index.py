"""Elasticsearch (or OpenSearch: one client API, :mod:`ingest_assets.core.search_clients`) resource index:
``<prefix>-resource``, ``<prefix>-change`` and ``<prefix>-resourcelist``
(each set's latest Resource List ``at``) with the mappings of ``ingest_assets/schemas/resourcesync-*.json``, through the
official client.

Each event is one ``_bulk`` request (resource index/delete + change create), refresh left to
:meth:`refresh`; a change already logged (same ``change_id``) answers 409 and is kept as it was.
Elasticsearch has no transactions: if one half is refused the event raises (retryable for 429/5xx) and
recording it again completes it, since both writes are idempotent. The change's ``listed`` comes from
the set's Resource List ``at`` read (real time) before the bulk request and again after it: if a Resource
List started meanwhile, it may have missed the change, which is then listed at its ``at``.
Lists are read with a point in time and ``search_after``, so a publish sees one consistent state.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

from elasticsearch import ApiError, NotFoundError

from ingest_assets import schemas
from ingest_assets.core.search_clients import connect, redacted, translated
from ingest_assets.core.errors import IngestError
from ingest_assets.resourcesync.index import ResourceIndex
from ingest_assets.resourcesync.model import listing_time, stored_time

KEEP_ALIVE = "5m"
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_SORT_RESOURCES = [
    {"location.value": {"order": "asc", "nested": {"path": "location"}}},
    {"location.type": {"order": "asc", "nested": {"path": "location"}}},
]
_SORT_CHANGES = [{"listed": "asc"}, {"timestamp": "asc"}, {"change_id": "asc"}]
KINDS = ("resource", "change", "resourcelist")


def mapping(kind: str) -> dict:
    """The index body (mappings) for ``resource``, ``change`` or ``resourcelist``."""
    return schemas.read_json(f"resourcesync-{kind}.json")


class ElasticsearchResourceIndex(ResourceIndex):
    def __init__(self, url: str, prefix: str = "resourcesync", page: int = 5000):
        self.url = redacted(url)  # for messages: the URL may carry user:password
        self.client = connect(url, request_timeout=60, max_retries=3, retry_on_timeout=True)
        self.resource_index = f"{prefix}-resource"
        self.change_index = f"{prefix}-change"
        self.resource_list_index = f"{prefix}-resourcelist"
        self.page = page
        with self._errors("create indices"):
            for kind in KINDS:
                name = f"{prefix}-{kind}"
                if not self.client.indices.exists(index=name):
                    try:
                        self.client.indices.create(index=name, **mapping(kind))
                    except ApiError as exc:  # created meanwhile by another process
                        if exc.meta.status != 400 or "resource_already_exists" not in str(exc.body):
                            raise

    def _errors(self, action: str):
        return translated(action, self.client)

    def apply(self, resource_key: str, resource: dict | None, change: dict) -> dict:
        at = self._resource_list_at(change["resource_set"])
        change = {**change, "listed": listing_time(change["datetime"], at)}
        if resource is None:
            operations = [{"delete": {"_index": self.resource_index, "_id": resource_key}}]
        else:
            operations = [{"index": {"_index": self.resource_index, "_id": resource_key}}, resource]
        operations += [{"create": {"_index": self.change_index, "_id": change["change_id"]}}, change]
        with self._errors("record event"):
            response = self.client.bulk(operations=operations)
        created = True
        for item in response["items"]:
            ((op, result),) = item.items()
            if (op, result.get("status")) == ("create", 409):
                created = False
            elif result.get("status", 200) >= 300 and (op, result["status"]) != ("delete", 404):
                raise IngestError(
                    f"{self.client.product} refused {op}: {result.get('error')}",
                    provider=change["resource_set"],
                    file=self.url,
                    record=change["location"]["value"],
                    retryable=result["status"] == 429 or result["status"] >= 500,
                )
        if not created:
            with self._errors("get change"):
                return self.client.get(index=self.change_index, id=change["change_id"])["_source"]
        while (latest := self._resource_list_at(change["resource_set"])) != at:
            at = latest  # a Resource List started while we wrote: it may lack the change
            if listing_time(change["datetime"], at) != change["listed"]:
                change = {**change, "listed": listing_time(change["datetime"], at)}
                with self._errors("record event"):
                    self.client.index(index=self.change_index, id=change["change_id"], document=change)
        return change

    def _resource_list_at(self, resource_set: str) -> str | None:
        with self._errors("get resource list time"):
            try:
                return self.client.get(index=self.resource_list_index, id=resource_set)["_source"]["at"]
            except NotFoundError:
                return None

    def start_resource_list(self, resource_set: str, at: str) -> None:
        with self._errors("record resource list time"):
            self.client.index(
                index=self.resource_list_index, id=resource_set, document={"resource_set": resource_set, "at": at}
            )

    def _scan(self, index: str, query: dict, sort: list) -> Iterator[dict]:
        with self._errors(f"read {index}"):
            pit = self.client.open_point_in_time(index=index, keep_alive=KEEP_ALIVE)["id"]
        try:
            after = None
            while True:
                with self._errors(f"read {index}"):
                    page = self.client.search(
                        pit={"id": pit, "keep_alive": KEEP_ALIVE},
                        query=query,
                        sort=sort,
                        size=self.page,
                        search_after=after,
                        track_total_hits=False,
                    )
                hits = page["hits"]["hits"]
                pit = page.get("pit_id", pit)
                for hit in hits:
                    yield hit["_source"]
                if len(hits) < self.page:
                    return
                after = hits[-1]["sort"]
        finally:
            with self._errors(f"close point in time on {index}"):
                self.client.close_point_in_time(id=pit)

    def get_resource(self, resource_key: str) -> dict | None:
        with self._errors("get resource"):
            try:
                return self.client.get(index=self.resource_index, id=resource_key)["_source"]
            except NotFoundError:
                return None

    def resources(self, resource_set: str) -> Iterator[dict]:
        return self._scan(self.resource_index, {"term": {"resource_set": resource_set}}, _SORT_RESOURCES)

    def changes(self, resource_set: str, start: str | None = None, end: str | None = None) -> Iterator[dict]:
        filters: list[dict] = [{"term": {"resource_set": resource_set}}]
        bounds = {k: v for k, v in (("gte", start), ("lt", end)) if v is not None}
        if bounds:
            filters.append({"range": {"listed": bounds}})
        return self._scan(self.change_index, {"bool": {"filter": filters}}, _SORT_CHANGES)

    def change_span(self, resource_set: str, recorded_after: str | None = None) -> tuple[str, str] | None:
        filters: list[dict] = [{"term": {"resource_set": resource_set}}]
        if recorded_after is not None:
            filters.append({"range": {"timestamp": {"gt": recorded_after}}})
        with self._errors("read change span"):
            response = self.client.search(
                index=self.change_index,
                size=0,
                query={"bool": {"filter": filters}},
                aggs={"first": {"min": {"field": "listed"}}, "last": {"max": {"field": "timestamp"}}},
            )
        first, last = (response["aggregations"][k]["value"] for k in ("first", "last"))
        if first is None:
            return None
        return _from_millis(first), _from_millis(last)

    def refresh(self) -> None:
        with self._errors("refresh"):
            self.client.indices.refresh(index=[self.resource_index, self.change_index])

    def close(self) -> None:
        self.client.close()


def _from_millis(value: float) -> str:
    return stored_time(EPOCH + timedelta(milliseconds=int(value)))

