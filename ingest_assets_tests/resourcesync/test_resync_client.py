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
