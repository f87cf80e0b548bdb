"""The reference client (``resync-sync`` of the resync package) keeps a destination folder equal to ours."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from resync.change_list import ChangeList


@pytest.fixture
def synced(source, tmp_path, t0, tree, resync):
    """A source with history on earlier days, published as a Resource List Index, and a destination
    made by a baseline sync (the client discovers the lists from /.well-known/resourcesync)."""
    src = source(limit=4)
    for i in range(7):
        src.put(f"docs/r{i}.txt", f"resource {i}\n".encode(), t0 + timedelta(hours=i * 5))
    src.put("docs/deep/d.xml", b"<a>deep</a>", t0 + timedelta(days=1, hours=3))
    summary = src.publish()
    assert summary["resources"] == 8
    dst, client = tmp_path / "dst", tmp_path / "client"
    output = resync(client, "-b", f"{src.base}/set1/resources={dst}")
    assert "created=8" in output
    assert tree(dst) == tree(src.root)
    return src, dst, client


def test_incremental_sync_applies_creates_updates_and_deletes(synced, tree, resync):
    src, dst, client = synced
    now = datetime.now(timezone.utc)
    src.put("docs/r1.txt", b"resource 1, revised\n", now)
    src.delete("docs/r2.txt", now + timedelta(milliseconds=1))
    src.put("new/n.txt", b"a new one\n", now + timedelta(milliseconds=2))
    src.delete("docs/r6.txt", now + timedelta(milliseconds=3))  # the newest resource of the baseline
    src.put("new/n.txt", b"a new one, revised\n", now + timedelta(milliseconds=4))
    src.publish()
    state = src.state()
    today = [p for p in state["parts"] if p["interval"] >= now.strftime("%Y-%m-%dT00")]
    # five changes, four per list: split in two, from the baseline's Resource List to this publish's
    baseline_at, this_at = state["resource_list_ats"]
    assert [(p["from"], p["until"]) for p in today] == [(baseline_at, today[1]["from"]), (today[1]["from"], this_at)]

    # resync reads one Change List per run (it cannot read a Change List Index): one run per list
    outputs = [
        resync(client, "-i", "--delete", "--changelist-uri", p["url"], f"{src.base}/set1/resources={dst}")
        for p in today
    ]

    assert "deleted=2" in outputs[0]
    assert tree(dst) == tree(src.root)
    assert not (dst / "docs/r2.txt").exists() and not (dst / "docs/r6.txt").exists()


def test_deletion_of_a_resource_known_only_from_the_baseline_is_in_the_next_change_list(synced, t0, tree, resync):
    """r3 was created days before; the destination knows it only from the Resource List. Its deletion
    must be in the next Change List even though the log of its creation lies in an older one."""
    src, dst, client = synced
    deleted_at = datetime.now(timezone.utc)
    src.delete("docs/r3.txt", deleted_at)
    src.publish()
    parts = src.state()["parts"]
    url = f"{src.base}/set1/resources/docs/r3.txt"
    lists = []
    for part in parts:
        changes = ChangeList()
        changes.read(uri=part["url"])
        lists.append([(r.uri, r.change, r.ts_datetime) for r in changes])
    created = [
        i for i, entries in enumerate(lists) if (url, "created", (t0 + timedelta(hours=15)).timestamp()) in entries
    ]
    assert created and created[0] < len(lists) - 1
    in_ms = deleted_at.replace(microsecond=deleted_at.microsecond // 1000 * 1000)
    assert lists[-1] == [(url, "deleted", pytest.approx(in_ms.timestamp(), abs=1e-6))]

    resync(client, "-i", "--delete", "--changelist-uri", parts[-1]["url"], f"{src.base}/set1/resources={dst}")
    assert tree(dst) == tree(src.root)
    assert len(list(src.index.resources("set1"))) == 7


def test_without_delete_the_client_keeps_deleted_files(synced, tree, resync):
    src, dst, client = synced
    src.delete("docs/r0.txt", datetime.now(timezone.utc))
    src.publish()
    resync(client, "-i", "--changelist-uri", src.state()["parts"][-1]["url"], f"{src.base}/set1/resources={dst}")
    assert (dst / "docs/r0.txt").exists()
    assert {k: v for k, v in tree(dst).items() if k != "docs/r0.txt"} == tree(src.root)


def test_same_day_deletion_of_the_newest_baseline_resource(source, tmp_path, tree, resync):
    """Created just before the baseline (its creation time is the newest lastmod the client saw), deleted
    after it: the Change List after the baseline must not also carry the creation, which resync would
    read as "created and deleted since", leaving the file in place."""
    src = source()
    now = datetime.now(timezone.utc)
    for i in range(3):
        src.put(f"r{i}.txt", f"{i}".encode(), now + timedelta(milliseconds=i))
    src.publish()
    dst, client = tmp_path / "dst", tmp_path / "client"
    resync(client, "-b", f"{src.base}/set1/resources={dst}")
    src.delete("r2.txt", datetime.now(timezone.utc))
    src.publish()
    state = src.state()
    assert state["parts"][-1]["from"] == state["resource_list_ats"][0]  # the next Change List after the baseline
    output = resync(
        client, "-i", "--delete", "--changelist-uri", state["parts"][-1]["url"], f"{src.base}/set1/resources={dst}"
    )
    assert "deleted=1" in output
    assert tree(dst) == tree(src.root)


def test_change_observed_before_a_publish_but_recorded_after_it_reaches_the_destination(
    source, tmp_path, t0, fixed_clock, tree, resync
):
    """A long harvest starts at 09:00 and observes changes; the hourly publish at 10:00 runs before they
    are recorded (10:30). A destination baselined from the 10:00 Resource List (which lacks them) and then
    following the Change Lists from its ``at`` must still get them."""
    src = source(clock=fixed_clock.clock)
    day_before = t0 - timedelta(days=1)
    for name in ("a", "b"):
        src.put(f"{name}.txt", f"{name}, first\n".encode(), day_before, recorded=day_before)
    # recorded before the publish by a quicker process: the newest lastmod of the baseline, which resync
    # keeps as the time to sync from (it skips changes dated before it)
    src.put("c.txt", b"c\n", t0 + timedelta(minutes=30), recorded=t0 + timedelta(minutes=31))
    fixed_clock.state["now"] = t0 + timedelta(hours=1)
    src.publish()
    [baseline_at] = src.state()["resource_list_ats"]
    dst, client = tmp_path / "dst", tmp_path / "client"
    assert "created=3" in resync(client, "-b", f"{src.base}/set1/resources={dst}")

    recorded = t0 + timedelta(hours=1, minutes=30)  # the harvest's events, observed at t0
    src.put("a.txt", b"a, revised\n", t0, recorded=recorded)
    src.delete("b.txt", t0, recorded=recorded + timedelta(seconds=1))
    src.put("n.txt", b"new\n", t0, recorded=recorded + timedelta(seconds=2))
    fixed_clock.state["now"] = t0 + timedelta(hours=2)
    src.publish()

    late = list(src.index.changes("set1"))[-3:]
    assert [(c["change"], c["datetime"], c["listed"]) for c in late] == [
        (change, "2026-01-05T09:00:00.000Z", baseline_at) for change in ("updated", "deleted", "created")
    ]  # the event time is kept; listed at the baseline's at
    after = [p for p in src.state()["parts"] if p["from"] >= baseline_at]
    assert after[0]["from"] == baseline_at
    entries = []
    for part in after:
        changes = ChangeList()
        changes.read(uri=part["url"])
        entries += [(r.uri.rsplit("/", 1)[1], r.change, r.lastmod, r.ts_datetime) for r in changes]
    at = datetime.strptime(baseline_at, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()
    assert entries == [
        ("a.txt", "updated", "2026-01-05T09:00:00Z", at),
        ("b.txt", "deleted", None, at),
        ("n.txt", "created", "2026-01-05T09:00:00Z", at),
    ]

    outputs = [
        resync(client, "-i", "--delete", "--changelist-uri", p["url"], f"{src.base}/set1/resources={dst}")
        for p in after
    ]
    assert any("created=1, updated=1, deleted=1" in o for o in outputs), outputs
    assert tree(dst) == tree(src.root) and (dst / "a.txt").read_bytes() == b"a, revised\n"
    assert not (dst / "b.txt").exists()
