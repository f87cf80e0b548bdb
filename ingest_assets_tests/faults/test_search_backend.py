"""The search backend failing under a full index build: a 429 storm on whole bulk requests, a bulk answer that stalls
past the request timeout, and documents the backend keeps refusing. Every document is indexed or counted as failed
(the reconciliation balances), retries stay within their bounds, and a build that failed too much of its input is
refused with the alias left on the old index rather than promoted short.

The backend is the project's fake Elasticsearch (support.elasticsearch) behind the fault proxy (support.faults): the
real Elasticsearch / OpenSearch servers of the backends work can take its place."""

from __future__ import annotations

import json
import time

import pytest

from ingest_assets.records.indexing import IndexBuildRefused
from ingest_assets.records.indexing.es_index import ElasticsearchIndex
from ingest_assets_tests.support.faults import Fault, every

ALIAS = "faults-records"
DOCUMENTS = 2000
CHUNK = 250  # 8 bulk requests a build
STORM = Fault("status", status=429, headers={"Content-Type": "application/json"}, body=json.dumps({
    "error": {"type": "es_rejected_execution_exception", "reason": "rejected execution of coordinating operation"},
    "status": 429}).encode())


def _records(tag: str = "v1"):
    for n in range(DOCUMENTS):
        record_id = f"{n:032x}"
        yield {"id": record_id, "deleted": False,
               "document": json.dumps({"id": record_id, "sourceResource": {"title": f"Item {n} {tag}"}})}


def _index(url: str, **options) -> ElasticsearchIndex:
    return ElasticsearchIndex(url, chunk_size=CHUNK, initial_backoff=0.05, max_backoff=0.5, **options)


def _bulks(proxy) -> list:
    return [s for s in proxy.log if s.path.split("?")[0].endswith("/_bulk")]


def test_a_429_storm_is_retried_within_bounds_to_an_exact_index(search_backend, fault_proxy, figures):
    proxy = fault_proxy(search_backend.url, every(1, STORM, when=lambda method, path: "/_bulk" in path and len(proxy.faults()) < 5))
    index = _index(proxy.url, max_retries=6)
    began = time.monotonic()
    stats = index.full_build(ALIAS, _records())
    took = time.monotonic() - began
    assert (stats.indexed, stats.failed) == (DOCUMENTS, 0) and stats.reconciliation.balanced
    assert index.count(ALIAS) == DOCUMENTS
    rejected = len(proxy.faults())
    assert rejected == 5 and len(_bulks(proxy)) == DOCUMENTS // CHUNK + rejected  # each rejection resent once more
    figures(documents=DOCUMENTS, bulk_requests=len(_bulks(proxy)), rejected_429=rejected, build_seconds=round(took, 1))
    index.close()


def test_a_storm_past_the_retry_bound_counts_every_document_and_refuses_the_promotion(search_backend, fault_proxy, figures):
    first = _index(search_backend.url)
    old = first.full_build(ALIAS, _records())
    first.close()
    proxy = fault_proxy(search_backend.url, every(1, STORM, when=lambda method, path: "/_bulk" in path))
    index = _index(proxy.url, max_retries=3)
    with pytest.raises(IndexBuildRefused) as refused:
        index.full_build(ALIAS, _records("v2"))
    stats = refused.value.stats
    assert (stats.indexed, stats.failed) == (0, DOCUMENTS) and stats.reconciliation.balanced  # none lost: all counted
    assert {f["status"] for f in stats.failures} <= {429} and len(_bulks(proxy)) == (DOCUMENTS // CHUNK) * 4  # 1 + 3 retries
    assert sorted(search_backend.aliases[ALIAS]) == [old.index] and index.count(ALIAS) == DOCUMENTS  # the old index, whole
    assert index.search(ALIAS, "v1", size=1) and not index.search(ALIAS, "v2", size=1)
    figures(documents=DOCUMENTS, bulk_requests=len(_bulks(proxy)), failed_counted=stats.failed, promoted=False)
    index.close()


def test_a_bulk_answer_stalled_past_the_timeout_is_resent_and_the_index_is_exact(search_backend, fault_proxy, figures):
    stall = every(3, Fault("stall", seconds=5), when=lambda method, path: "/_bulk" in path)  # the 1st, 4th, 7th bulk
    proxy = fault_proxy(search_backend.url, stall)
    index = _index(proxy.url, request_timeout=1.5)
    began = time.monotonic()
    stats = index.full_build(ALIAS, _records())
    took = time.monotonic() - began
    assert (stats.indexed, stats.failed) == (DOCUMENTS, 0) and stats.reconciliation.balanced
    assert index.count(ALIAS) == DOCUMENTS  # the stalled bulks were applied and resent: idempotent by _id, none twice
    stalled = len(proxy.faults("stall"))
    assert stalled >= 3 and len(_bulks(proxy)) == DOCUMENTS // CHUNK + stalled
    figures(documents=DOCUMENTS, stalled_bulks=stalled, request_timeout_seconds=1.5, build_seconds=round(took, 1))
    index.close()
