"""The search backend failing under a full index build: a 429 storm on whole bulk requests, a bulk answer that stalls
past the request timeout, and documents the backend keeps refusing. Every document is indexed or counted as failed
(the reconciliation balances), retries stay within their bounds, and a build that failed too much of its input is
refused with the alias left on the old index rather than promoted short.

The backend is the tests' one ``es`` endpoint (a live OpenSearch or Elasticsearch) behind the fault proxy
(support.faults); per-item failures are the recording proxy's (``es.fail_items``: a live node's item rejections
cannot be had on cue). A whole-request storm and a stall meet each product's own client transport (its retries and
timeouts), so they run on both servers; what the build does with failures past the retry bound, and with single
failed items, is the project's own accounting, the same on either: those run on OpenSearch."""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter

import pytest

from ingest_assets.records.indexing import IndexBuildRefused
from ingest_assets.records.indexing.es_index import ElasticsearchIndex
from ingest_assets_tests.support.faults import Fault, every

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


@pytest.fixture
def alias() -> str:
    return f"faults-{uuid.uuid4().hex[:8]}"  # a live cluster may be shared


def _bulks(proxy) -> list:
    return [s for s in proxy.log if s.path.split("?")[0].endswith("/_bulk")]


def test_a_429_storm_is_retried_within_bounds_to_an_exact_index(es, alias, fault_proxy, figures):
    proxy = fault_proxy(es.url, every(1, STORM, when=lambda method, path: "/_bulk" in path and len(proxy.faults()) < 5))
    index = _index(proxy.url, max_retries=6)
    began = time.monotonic()
    stats = index.full_build(alias, _records())
    took = time.monotonic() - began
    assert (stats.indexed, stats.failed) == (DOCUMENTS, 0) and stats.reconciliation.balanced
    assert index.count(alias) == DOCUMENTS
    rejected = len(proxy.faults())
    assert rejected == 5 and len(_bulks(proxy)) == DOCUMENTS // CHUNK + rejected  # each rejection resent once more
    figures(documents=DOCUMENTS, bulk_requests=len(_bulks(proxy)), rejected_429=rejected, build_seconds=round(took, 1))
    index.close()


@pytest.mark.parametrize("search_backend", ["opensearch"])
def test_a_storm_past_the_retry_bound_counts_every_document_and_refuses_the_promotion(es, alias, fault_proxy, figures):
    first = _index(es.url)
    old = first.full_build(alias, _records())
    first.close()
    proxy = fault_proxy(es.url, every(1, STORM, when=lambda method, path: "/_bulk" in path))
    index = _index(proxy.url, max_retries=3)
    with pytest.raises(IndexBuildRefused) as refused:
        index.full_build(alias, _records("v2"))
    stats = refused.value.stats
    assert (stats.indexed, stats.failed) == (0, DOCUMENTS) and stats.reconciliation.balanced  # none lost: all counted
    assert {f["status"] for f in stats.failures} <= {429} and len(_bulks(proxy)) == (DOCUMENTS // CHUNK) * 4  # 1 + 3 retries
    assert list(es.raw("GET", f"/_alias/{alias}")[1]) == [old.index] and index.count(alias) == DOCUMENTS  # old, whole
    assert index.search(alias, "v1", size=1) and not index.search(alias, "v2", size=1)
    figures(documents=DOCUMENTS, bulk_requests=len(_bulks(proxy)), failed_counted=stats.failed, promoted=False)
    index.close()


def test_a_bulk_answer_stalled_past_the_timeout_is_resent_and_the_index_is_exact(es, alias, fault_proxy, figures):
    stall = every(3, Fault("stall", seconds=5), when=lambda method, path: "/_bulk" in path)  # the 1st, 4th, 7th bulk
    proxy = fault_proxy(es.url, stall)
    index = _index(proxy.url, request_timeout=1.5)
    began = time.monotonic()
    stats = index.full_build(alias, _records())
    took = time.monotonic() - began
    assert (stats.indexed, stats.failed) == (DOCUMENTS, 0) and stats.reconciliation.balanced
    assert index.count(alias) == DOCUMENTS  # the stalled bulks were applied and resent: idempotent by _id, none twice
    stalled = len(proxy.faults("stall"))
    assert stalled >= 3 and len(_bulks(proxy)) == DOCUMENTS // CHUNK + stalled
    figures(documents=DOCUMENTS, stalled_bulks=stalled, request_timeout_seconds=1.5, build_seconds=round(took, 1))
    index.close()


@pytest.mark.parametrize("search_backend", ["opensearch"])
def test_partial_bulk_failures_are_retried_alone_or_counted_never_lost(es, alias, figures):
    """Every bulk answer partly failed (the proxy's per-item failures: a live node's item rejections cannot be had
    on cue): a tenth of the documents rejected (429) twice are retried alone to success; a hundredth refused for good
    (400, mapper_parsing_exception) are counted failures, not retried, and the build under the failure limit is
    promoted with exactly the others, the reconciliation balanced."""
    ids = [f"{n:032x}" for n in range(DOCUMENTS)]
    rejected, refused = ids[::10], ids[5::100]
    es.fail_items(rejected, times=2)
    es.fail_items(refused, times=1000, status=400, error={
        "type": "mapper_parsing_exception", "reason": "failed to parse field [sourceResource.date] of type [date]"})
    index = _index(es.url, max_retries=3)
    stats = index.full_build(alias, _records())
    bulks = es.calls("PUT|POST", ".*/_bulk")
    assert (stats.indexed, stats.failed) == (DOCUMENTS - len(refused), len(refused)) and stats.reconciliation.balanced
    assert sorted(f["id"] for f in stats.failures) == sorted(refused) and {f["status"] for f in stats.failures} == {400}
    assert index.count(alias) == DOCUMENTS - len(refused)
    sent = Counter(line["index"]["_id"] for bulk in bulks for line in bulk.json() if "index" in line)
    assert sent == {i: 3 if i in rejected else 1 for i in ids}  # only the rejected resent (twice); the refused never
    figures(documents=DOCUMENTS, rejected_429_twice=len(rejected), refused_400=len(refused), bulk_requests=len(bulks))
    index.close()
