"""The embedded OCFL backend: one OCFL object per repository object, every update a new version."""

import json

import ocfl
import pytest

from ingest_assets.repository.model import RepositoryObject
from ingest_assets.repository.ocfl import OcflRepository
from ingest_assets.repository.backend import ObjectGone, ObjectNotFound, RepositoryError


def key(title: str) -> RepositoryObject:
    return RepositoryObject("K2N:id_0123456789abcdef0123456789abcdef", "member", dc={"title": [title]},
                            k2n={"Best_Quality_URI": ["http://www.keytonature.eu/wiki/K"]},
                            collection="K2N:www.keytonature.eu_wiki_k",
                            harvesting_url="http://www.keytonature.eu/wiki/K")


def test_every_update_is_a_new_version_and_delete_leaves_a_tombstone(tmp_path):
    repo = OcflRepository(tmp_path / "ocfl")
    obj = key("v1")
    with repo.transaction() as tx:
        tx.put(obj)
    with repo.transaction() as tx:
        tx.put(key("v2"))
    assert repo.versions(obj.pid) == ["v1", "v2"]
    assert repo.get(obj.pid).dc["title"] == ["v2"]
    with repo.transaction() as tx:
        tx.delete(obj.pid)
        tx.delete("K2N:never_there")  # absent objects are fine
    assert repo.versions(obj.pid) == ["v1", "v2", "v3"] and not repo.exists(obj.pid)
    with pytest.raises(ObjectGone):
        repo.get(obj.pid)
    with pytest.raises(ObjectNotFound):
        repo.get("K2N:never_there")
    with repo.transaction() as tx:
        tx.put(key("v4"))
    assert repo.versions(obj.pid) == ["v1", "v2", "v3", "v4"] and repo.get(obj.pid).dc["title"] == ["v4"]
    inventory = json.loads((repo.object_dir(obj.pid) / "inventory.json").read_text())
    assert inventory["id"] == obj.pid
    assert sorted(p for paths in inventory["versions"]["v3"]["state"].values() for p in paths) == ["TOMBSTONE"]
    assert sorted(p for paths in inventory["versions"]["v4"]["state"].values() for p in paths) == \
        ["DC.xml", "RELS-EXT.ttl"]
    assert ocfl.StorageRoot(root=str(tmp_path / "ocfl")).validate()


def test_a_failed_transaction_writes_nothing(tmp_path):
    repo = OcflRepository(tmp_path / "ocfl")
    with pytest.raises(RuntimeError):
        with repo.transaction() as tx:
            tx.put(key("never"))
            raise RuntimeError("crash before commit")
    assert not repo.exists(key("x").pid) and repo.versions(key("x").pid) == []


def test_half_written_versions_left_by_a_crash_are_cleaned(tmp_path):
    repo = OcflRepository(tmp_path / "ocfl")
    with repo.transaction() as tx:
        tx.put(key("v1"))
    objdir = repo.object_dir(key("x").pid)
    (objdir / "v2" / "content").mkdir(parents=True)  # crash after mkdir, before the root inventory
    (objdir / "v2" / "content" / "RELS-EXT.ttl").write_text("partial")
    with repo.transaction() as tx:
        tx.put(key("v2"))
    assert repo.versions(key("x").pid) == ["v1", "v2"] and repo.get(key("x").pid).dc["title"] == ["v2"]
    assert ocfl.StorageRoot(root=str(tmp_path / "ocfl")).validate()
    other = RepositoryObject("K2N:sd_" + "1" * 32, "member", dc={"title": ["s"]})
    (repo.object_dir(other.pid) / "v1").mkdir(parents=True)  # crash while creating the object
    with repo.transaction() as tx:
        tx.put(other)
    assert repo.versions(other.pid) == ["v1"]


def test_refuses_a_folder_that_is_not_an_ocfl_root(tmp_path):
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "file.txt").write_text("x")
    with pytest.raises(RepositoryError, match="not an OCFL storage root"):
        OcflRepository(tmp_path / "junk")


def test_a_commit_failing_part_way_never_deletes_before_the_replacements_are_written(tmp_path):
    repo = OcflRepository(tmp_path / "ocfl")
    old = key("old")
    new, broken = (RepositoryObject(f"K2N:sd_{digit * 32}", "member", dc={"title": [digit]}) for digit in "12")
    with repo.transaction() as tx:
        tx.put(old)
    place = repo.object_dir(broken.pid).parent  # a file where the object's folder must go: the write fails
    place.parent.mkdir(parents=True, exist_ok=True)
    place.write_text("in the way")
    with pytest.raises(RepositoryError, match="OCFL write failed"):
        with repo.transaction() as tx:  # the ingest's order: delete the old member, then put replacements
            tx.delete(old.pid)
            tx.put(new)
            tx.put(broken)
    assert repo.get(old.pid).dc["title"] == ["old"] and repo.versions(old.pid) == ["v1"]
    assert repo.exists(new.pid) and not repo.exists(broken.pid)
    place.unlink()
    with repo.transaction() as tx:  # the retry completes the work
        tx.delete(old.pid)
        tx.put(new)
        tx.put(broken)
    assert not repo.exists(old.pid) and repo.exists(broken.pid) and repo.versions(new.pid) == ["v1", "v2"]


def test_per_pid_the_last_action_counts(tmp_path):
    repo = OcflRepository(tmp_path / "ocfl")
    with repo.transaction() as tx:
        tx.put(key("v1"))
    with repo.transaction() as tx:
        tx.delete(key("x").pid)
        tx.put(key("again"))
    assert repo.get(key("x").pid).dc["title"] == ["again"] and repo.versions(key("x").pid) == ["v1", "v2"]
    with repo.transaction() as tx:
        tx.put(key("gone"))
        tx.delete(key("x").pid)
    assert not repo.exists(key("x").pid) and repo.versions(key("x").pid) == ["v1", "v2", "v3"]
