"""Gated promotion of per-provider indices, the automatic rollback of a failed canary, rollback on request and
retention, on the embedded index and Elasticsearch (the recording fake, or a live cluster)."""

from __future__ import annotations

import json
from datetime import date

import pytest

from ingest_assets.core.errors import ConfigError, NotFoundError
from ingest_assets.core.registry import ReviewBlock
from ingest_assets.records.indexing import AliasChanged, index_record
from ingest_assets.records.indexing.embedded_index import EmbeddedSearchIndex
from ingest_assets.records.publishing import gates
from ingest_assets.records.publishing.candidates import build_candidate
from ingest_assets.records.publishing.review import Ledger
from ingest_assets.records.publishing.status import index_status
from ingest_assets.records.publishing.journal import Journal
from ingest_assets.records.publishing.takedowns import Target
from ingest_assets.storage import LocalStorage
from ingest_assets.storage.activities import RecordSource, RecordStream, write_activity
from ingest_assets.storage.avro import INDEX_RECORD
from ingest_assets_tests.support.publishing import deletions, documents, dpla_id

ALIAS = "dpla-map4"
DAY1, DAY2, DAY3 = date(2026, 1, 15), date(2026, 1, 16), date(2026, 1, 17)
TOLERANCE = {"demo": 0.02, "other": 0.02, "dpla": 0.02}


@pytest.fixture
def storage(tmp_path):
    return LocalStorage(tmp_path / "storage")


def publish(publisher, storage, provider, day, records, tolerance=None):
    tolerance = tolerance or TOLERANCE
    return publisher.publish({provider: [(day, records)]}, storage, tolerance, run_id=f"run-{day}")[provider]


def live(search, provider):
    return [n for n in search.aliased(ALIAS) if f"-{provider}-" in n]


def test_first_publish_then_a_growing_day_is_promoted(publisher, search, storage):
    first = publish(publisher, storage, "demo", DAY1, documents("demo", range(1, 51)))
    assert first.promoted and not first.refused and first.candidate.base is None
    assert [r.gate for r in first.results] == ["index_queryable", "index_count", "index_health", "index_fields",
                                               "index_canary"]
    assert live(search, "demo") == [first.candidate.name] and search.count(ALIAS) == 50

    changed = documents("demo", range(1, 4), title="Flooded mill at Millbrook")
    second = publish(publisher, storage, "demo", DAY2,
                     [*changed, *documents("demo", range(51, 56)), *deletions("demo", [4])])
    assert second.promoted and second.candidate.base == first.candidate.name
    count = {r.gate: r for r in second.results}["index_count"]
    assert count.evidence["before"] == 50 and count.evidence["after"] == 54 and count.evidence["copied"] == 50
    assert live(search, "demo") == [second.candidate.name] and search.count(ALIAS) == 54
    assert {doc["sourceResource"]["title"][0] for doc in search.search(ALIAS, "flooded", 10)} == {"Flooded mill at Millbrook"}
    canary = second.candidate.canary  # records this publish changed or added, as the alias must answer them
    assert len(canary) == 3 and all(doc is not None for doc in canary.values())
    # the previous index is kept for rollback
    assert [(i.name, i.aliased) for i in search.indices(ALIAS)] == [(first.candidate.name, False),
                                                                   (second.candidate.name, True)]


def test_a_short_candidate_is_refused_and_the_current_index_keeps_serving(publisher, search, storage, engine):
    first = publish(publisher, storage, "demo", DAY1, documents("demo", range(1, 51)))
    short = publish(publisher, storage, "demo", DAY2, deletions("demo", range(1, 11)))  # -20%

    assert short.refused and not short.promoted
    count = {r.gate: r for r in short.results}["index_count"]
    assert not count.passed
    assert (count.evidence["before"], count.evidence["after"], count.evidence["change"]) == (50, 40, -0.2)
    assert "more than the 2% allowed" in count.description and "index_count_tolerance" in count.remediation
    assert live(search, "demo") == [first.candidate.name] and search.count(ALIAS) == 50  # still serving
    assert short.candidate.name in [i.name for i in search.indices(ALIAS)]  # kept for inspection
    journal = Journal(engine)
    assert journal.state_of(short.candidate.name) == "refused"
    assert {r.gate: r.passed for r in journal.gate_results(short.candidate.name)}["index_count"] is False

    accepted = publish(publisher, storage, "demo", DAY2, deletions("demo", range(1, 11)), {"demo": 0.25})
    assert accepted.promoted and search.count(ALIAS) == 40
    assert short.candidate.name not in [i.name for i in search.indices(ALIAS)]  # pruned with the next promotion


def test_a_provider_is_refreshed_alone(publisher, search, storage):
    other = publish(publisher, storage, "other", DAY1, documents("other", range(1, 21)))
    demo = publish(publisher, storage, "demo", DAY1, documents("demo", range(1, 31)))
    before = {i.name: i.count for i in search.indices(ALIAS) if i.provider == "other"}

    again = publish(publisher, storage, "demo", DAY2, documents("demo", range(31, 33)))

    assert again.promoted and live(search, "demo") == [again.candidate.name]
    assert live(search, "other") == [other.candidate.name]  # untouched
    assert {i.name: i.count for i in search.indices(ALIAS) if i.provider == "other"} == before
    assert search.count(ALIAS) == 20 + 32
    assert demo.candidate.name != again.candidate.name


def test_two_flips_from_the_same_state_never_both_win(publisher, search, storage):
    publish(publisher, storage, "demo", DAY1, documents("demo", range(1, 11)))
    first, second = (build_candidate(search, ALIAS, "demo", [(day, documents("demo", [20 + n]))], suppressed=set())
                     for n, day in enumerate((DAY2, DAY3)))
    assert first.base == second.base  # both built on the same live index

    search.update_alias(ALIAS, add=[first.name], remove=[first.base])
    with pytest.raises(AliasChanged, match="another update got there first"):
        search.update_alias(ALIAS, add=[second.name], remove=[second.base])
    assert live(search, "demo") == [first.name] and search.count(ALIAS) == 11


def without_fields(record: dict, *paths: str) -> dict:
    """``record`` (an IndexRecord) whose document lacks ``paths`` (dotted): what a regression in what writes the
    documents (a profile, the index document, a legacy output) would hand the index."""
    document = json.loads(record["document"])
    for path in paths:
        *parents, name = path.split(".")
        holder = document
        for parent in parents:
            holder = holder[parent]
        holder.pop(name, None)
    return {**record, "document": json.dumps(document)}


def test_documents_without_the_fields_the_portal_needs_are_refused(publisher, search, storage, map_records):
    records = [index_record(r) for r in map_records]  # DPLA's own documents (the API's hits and a legacy one)
    first = publish(publisher, storage, "dpla", DAY1, records)
    assert first.promoted and search.count(ALIAS) == len(records)

    broken = [without_fields(r, "dataProvider", "sourceResource.title") for r in records]
    refused = publish(publisher, storage, "dpla", DAY2, broken)

    results = {r.gate: r for r in refused.results}
    assert [g for g, r in results.items() if not r.passed] == ["index_fields"] and not refused.promoted
    fields = results["index_fields"]
    assert fields.evidence["not_found"] == [] and set(fields.evidence["missing_fields"]) == set(fields.evidence["checked"])
    assert all(gaps == ["dataProvider", "sourceResource.title"] for gaps in fields.evidence["missing_fields"].values())
    assert "lack required fields" in fields.description and "index mapping" in fields.remediation
    assert live(search, "dpla") == [first.candidate.name]  # the complete documents keep serving
    assert all(doc["sourceResource"]["title"] for doc in search.search(ALIAS, "*", len(records)))


def test_a_candidate_whose_index_was_replaced_meanwhile_is_refused(publisher, search, storage, engine):
    publish(publisher, storage, "demo", DAY1, documents("demo", range(1, 11)))
    slow = build_candidate(search, ALIAS, "demo", [(DAY2, documents("demo", [11]))], suppressed=set())
    publisher.journal.built(slow, "slow-run", publisher.clock())  # another run's candidate, not judged yet
    fast = publish(publisher, storage, "demo", DAY3, documents("demo", [12]))  # promoted meanwhile
    assert fast.promoted and slow.name in [i.name for i in search.indices(ALIAS)]  # its prune left the slow one

    queryable, *_ = gates.judge(search, slow, 0.02)

    assert not queryable.passed and queryable.evidence["alias_points_at"] == [fast.candidate.name]
    assert f"{slow.base}, which {slow.name} would replace, is no longer behind" in queryable.description
    assert "another publish or a rollback moved the alias" in queryable.remediation


class DiskFault(EmbeddedSearchIndex):
    """An embedded index whose candidate file is overwritten just before its health is judged (a disk fault
    injected on cue; the verdict is SQLite's own ``quick_check``)."""

    def health(self, index):
        (self.directory / f"{index}.sqlite3").write_bytes(b"not a database any more " * 400)
        return super().health(index)


RED = {"cluster_name": "ingest-test", "status": "red", "timed_out": True, "number_of_nodes": 1,
       "number_of_data_nodes": 1, "active_primary_shards": 0, "active_shards": 0, "relocating_shards": 0,
       "initializing_shards": 0, "unassigned_shards": 2, "unassigned_primary_shards": 1, "delayed_unassigned_shards": 0,
       "number_of_pending_tasks": 0, "number_of_in_flight_fetch": 0, "task_max_waiting_in_queue_millis": 0,
       "active_shards_percent_as_number": 0.0}


def test_a_candidate_the_cluster_cannot_serve_is_refused(request, publisher, search, storage, clock):
    first = publish(publisher, storage, "demo", DAY1, documents("demo", range(1, 11)))
    if isinstance(search, EmbeddedSearchIndex):
        publisher.index = DiskFault(search.directory, clock=clock)
    else:  # its primary unassigned: the wait for yellow times out (408) with the figures as they are
        request.getfixturevalue("es").fail_next("GET", r"/_cluster/health/dpla-map4-demo-\d+", 408, RED)

    refused = publish(publisher, storage, "demo", DAY2, documents("demo", range(1, 12)))

    health = {r.gate: r for r in refused.results}["index_health"]
    assert not health.passed and not refused.promoted and health.evidence["status"] == "red"
    assert f"{refused.candidate.name} cannot serve: status red" == health.description
    assert "fix the cluster, then publish again" in health.remediation
    failed = {r.gate: r for r in refused.results if not r.passed}
    if isinstance(search, EmbeddedSearchIndex):  # the damaged file answers no lookup either: a typed refusal
        assert list(failed) == ["index_health", "index_fields"]
        assert "index_fields could not be judged: search index file cannot be read" in failed["index_fields"].description
    else:
        assert list(failed) == ["index_health"]
    kept = {e.name: e for e in index_status(search, publisher.journal, ALIAS).providers["demo"]}[refused.candidate.name]
    assert kept.role == "refused"  # kept for inspection, listed even when its file no longer reads (no count)
    assert kept.count == (None if isinstance(search, EmbeddedSearchIndex) else 11)
    assert live(search, "demo") == [first.candidate.name] and search.count(ALIAS) == 10  # the previous one serves


def test_rollback_flips_back_in_one_action_and_forward_again(publisher, search, storage, engine):
    names = [publish(publisher, storage, "demo", day, documents("demo", range(1, 11 + n))).candidate.name
             for n, day in enumerate((DAY1, DAY2, DAY3))]

    assert publisher.rollback(by="ops") == [("demo", names[2], names[1])]  # the latest promotion undone
    assert live(search, "demo") == [names[1]] and search.count(ALIAS) == 11
    assert publisher.rollback(provider="demo") == [("demo", names[1], names[0])]
    assert search.count(ALIAS) == 10
    assert publisher.rollback(to=names[2]) == [("demo", names[0], names[2])]
    assert live(search, "demo") == [names[2]] and search.count(ALIAS) == 12

    actions = Journal(engine).actions(ALIAS, "demo")
    assert [a.action for a in actions[:3]] == ["rollback", "rollback", "rollback"] and actions[2].by == "ops"
    with pytest.raises(ConfigError, match="already live"):
        publisher.rollback(to=names[2])
    with pytest.raises(NotFoundError, match="no index"):
        publisher.rollback(to="dpla-map4-demo-20990101000000")
    with pytest.raises(NotFoundError, match="nothing of the provider is live"):
        publisher.rollback(provider="nobody")


def test_previous_indices_are_retained_up_to_the_setting(publisher, search, storage):
    names = [publish(publisher, storage, "demo", day, documents("demo", range(1, 11 + n))).candidate.name
             for n, day in enumerate((DAY1, DAY2, DAY3, date(2026, 1, 18)))]
    assert [i.name for i in search.indices(ALIAS)] == names[1:]  # live + the 2 before it


class StaleAlias(EmbeddedSearchIndex):
    """An embedded index whose alias keeps answering from the index it pointed at before (a fault a healthy
    SQLite index cannot show: the alias is read from the file each time)."""

    def documents(self, target, ids):
        if target == ALIAS and getattr(self, "stale", None):
            return super().documents(self.stale, ids)
        return super().documents(target, ids)


def test_a_failed_canary_rolls_the_flip_back_by_itself(request, publisher, search, storage, engine, clock):
    first = publish(publisher, storage, "demo", DAY1, documents("demo", range(1, 11)))
    if isinstance(search, EmbeddedSearchIndex):
        stale = StaleAlias(search.directory, clock=clock)
        stale.stale = first.candidate.name
        publisher.index = stale
    else:  # the alias answers the canary's lookup from the old index
        request.getfixturevalue("es").fail_next("GET|POST", f"/{ALIAS}/_search", 200, {"took": 1, "timed_out": False, "hits": {
            "total": {"value": 0, "relation": "eq"}, "max_score": None, "hits": []}})

    changed = publish(publisher, storage, "demo", DAY2, documents("demo", range(1, 4), title="Renamed"))

    assert not changed.promoted and changed.note == "rolled back: the canary failed after the flip"
    canary = {r.gate: r for r in changed.results}["index_canary"]
    assert not canary.passed and set(canary.evidence["wrong"]) == set(changed.candidate.canary)
    assert live(search, "demo") == [first.candidate.name]  # the previous index serves again
    assert [a.action for a in Journal(engine).actions(ALIAS, "demo")[:2]] == ["auto-rollback", "promote"]
    assert Journal(engine).state_of(changed.candidate.name) == "rolled_back"
    assert json.loads(json.dumps(canary.evidence))  # evidence is plain JSON


def test_a_rollback_keeps_the_takedowns_in_force(publisher, search, storage, clock):
    publish(publisher, storage, "demo", DAY1, documents("demo", range(1, 11)))
    publish(publisher, storage, "demo", DAY2, documents("demo", range(1, 12)))
    taken = Target(dpla_id("demo", 3), "demo")
    publisher.takedowns.add([taken], "rights holder request", "ops", clock())  # recorded since day 1 was live

    publisher.rollback(provider="demo")
    assert search.documents(ALIAS, [taken.record_id]) == {} and search.count(ALIAS) == 9


def test_a_rebuild_splits_an_index_of_every_provider_into_gated_provider_indices(publisher, search, storage, clock):
    for provider in ("demo", "other"):
        started = clock()
        write_activity(storage, RecordStream(documents(provider, range(1, 11)), started=started), provider=provider,
                       activity="indexing", day=DAY1, started=started, schema=INDEX_RECORD, partition="test")
    shared = search.full_build(ALIAS, [*documents("demo", range(1, 11)), *documents("other", range(1, 11))]).index
    with pytest.raises(ConfigError, match="an index of every provider") as refused:  # a day's publish waits for it
        publish(publisher, storage, "demo", DAY2, documents("demo", [11]))
    assert "search_index_rebuild once" in refused.value.hint

    outcome = publisher.rebuild(storage, ["demo", "other"], DAY2, TOLERANCE)

    assert all(part.promoted for part in outcome.values())
    assert {r.gate for r in outcome["demo"].results} == {"index_queryable", "index_count", "index_health",
                                                         "index_fields", "index_canary"}
    assert search.aliased(ALIAS) == sorted(part.candidate.name for part in outcome.values())
    assert search.count(ALIAS) == 20 and shared in [i.name for i in search.indices(ALIAS)]  # kept for rollback
    publisher.rollback()  # the rebuild undone: the index of every provider serves again
    assert search.aliased(ALIAS) == [shared] and search.count(ALIAS) == 20


def test_an_empty_index_is_replaced_by_the_first_day_with_records(publisher, search, storage):
    """A provider whose first published days held nothing (the demo's quiet days): the count gate compares with 0."""
    empty = publish(publisher, storage, "demo", DAY1, [])
    assert empty.promoted and search.count(ALIAS) == 0
    grown = publish(publisher, storage, "demo", DAY2, documents("demo", range(1, 4)))
    count = {r.gate: r for r in grown.results}["index_count"]
    assert grown.promoted and count.passed and count.evidence["change"] is None
    assert count.description == f"{grown.candidate.name} holds 3 documents, 0 before"


def test_days_older_than_the_live_one_are_published_beneath_it(publisher, search, storage, engine, clock):
    """A backfill of days before a published day: the newer day's versions stay newest, the older days' other
    records and deletions count, and the newer day is live again in the new index."""
    ledger = Ledger(engine)

    def day_output(day, records):
        started = clock()
        output = write_activity(storage, RecordStream(records, started=started), provider="demo",
                                activity="indexing", day=day, started=started, schema=INDEX_RECORD, partition="test")
        ledger.register("demo", day, output.output.folder, ReviewBlock(), clock())
        return RecordSource(storage, output.output)

    newest = publish(publisher, storage, "demo", DAY3,
                     day_output(DAY3, documents("demo", range(1, 51), title="Mill after the flood")))
    assert newest.promoted and search.count(ALIAS) == 50
    older = [(DAY1, day_output(DAY1, documents("demo", range(1, 6), title="Mill before the flood"))),
             (DAY2, day_output(DAY2, [*documents("demo", [51]), *deletions("demo", [7])]))]

    backfill = publisher.publish({"demo": older}, storage, TOLERANCE, run_id="backfill")["demo"]

    assert backfill.promoted and backfill.candidate.days == [DAY1, DAY2, DAY3]
    assert backfill.candidate.base == newest.candidate.name and "copied" not in backfill.candidate.figures
    assert search.count(ALIAS) == 51  # 51 added by the older day; 7 deleted before DAY3 wrote it again
    titles = {doc["sourceResource"]["title"][0] for doc in search.documents(ALIAS, [dpla_id("demo", n) for n in (1, 7)]).values()}
    assert titles == {"Mill after the flood"}
    assert {s.day: s.index_name for s in ledger.history("demo")} == dict.fromkeys((DAY1, DAY2, DAY3), backfill.candidate.name)
    count = {r.gate: r for r in backfill.results}["index_count"]
    assert count.passed and count.evidence["before"] == 50 and count.evidence["after"] == 51


def test_a_provider_is_removed_alone_and_comes_back(publisher, search, storage, engine, clock):
    Ledger(engine).register("other", DAY1, "other/indexing/20260115/x.avro", ReviewBlock(), clock())
    other = publish(publisher, storage, "other", DAY1, documents("other", range(1, 6)))
    assert Ledger(engine).get("other", DAY1).state == "published"
    demo = publish(publisher, storage, "demo", DAY1, documents("demo", range(1, 11)))

    assert publisher.remove("other", by="ops", reason="hub withdrew its data") == other.candidate.name
    assert search.aliased(ALIAS) == [demo.candidate.name] and search.count(ALIAS) == 10
    assert Journal(engine).actions(ALIAS, "other")[0].action == "remove"
    assert Ledger(engine).get("other", DAY1).state == "rolled_back"  # no longer live
    publisher.rollback(to=other.candidate.name)  # kept: it comes back
    assert search.count(ALIAS) == 15
    with pytest.raises(NotFoundError, match="nothing of the provider is live"):
        publisher.remove("nobody")
