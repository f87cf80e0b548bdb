"""Index events (IndexRecords) feed the resource index; the Dagster asset publishes the documents."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta, timezone

import dagster as dg
import pytest
import yaml

from ingest_assets.defs.resources import RegistryResource, SqlResource, StorageResource
from ingest_assets.defs.resourcesync import feed_indexed_records
from ingest_assets.defs.resourcesync.assets import resourcesync_documents
from ingest_assets.defs.resourcesync.resources import ResourceSyncResource
from ingest_assets.core.errors import ConfigError
from ingest_assets.records.indexing import deletion_record
from ingest_assets.core.registry import load_registry
from ingest_assets.resourcesync.config import resource_sets
from ingest_assets.resourcesync.feed import ChangeFeed, feed_index_records

ITEM = "http://dp.la/api/items/"  # the @id of an item document


def document(record_id: str, title: str) -> dict:
    body = {"@id": ITEM + record_id, "id": record_id, "sourceResource": {"title": [title]}}
    return {"id": record_id, "document": json.dumps(body, sort_keys=True, separators=(",", ":")), "deleted": False}


def test_index_records_become_files_and_created_updated_deleted_events(source, t0):
    src = source()  # a set with a root: its files are there
    records = [document(i, i.upper()) for i in ("a1", "b2", "e5")]
    first = feed_index_records(ChangeFeed(src.index, src.storage, src.set), records, t0)
    assert first.counts == {"created": 3, "updated": 0, "deleted": 0, "unchanged": 0} and first.errors == []
    files = {i: src.root / f"items/{i}.jsonld" for i in ("a1", "b2", "e5")}
    assert all(files[i].read_bytes() == document(i, i.upper())["document"].encode() for i in files)
    a1_file = (files["a1"].stat().st_ino, files["a1"].stat().st_mtime_ns)

    later = t0 + timedelta(days=1)
    second = feed_index_records(
        ChangeFeed(src.index, src.storage, src.set),
        [
            document("a1", "A1"),  # same bytes: no event, no write
            document("b2", "B, corrected"),  # updated
            deletion_record("c3"),  # never published: nothing to tell
            {"id": None, "document": "{}"},  # bad records are reported, the others go on
            {"id": "d4", "document": ""},
            document("../x", "escapes"),  # not a file name: refused, nothing written
            deletion_record("e5"),  # deleted
        ],
        later,
    )
    assert second.counts == {"created": 0, "updated": 1, "deleted": 1, "unchanged": 2}
    assert len(second.errors) == 3 and "'d4'" in second.errors[1] and "'set1'" in second.errors[1]
    assert "cannot name a file" in second.errors[2] and "'../x'" in second.errors[2]
    assert second.metadata["errors"] == 3 and second.metadata["first_errors"] == second.errors
    assert (files["a1"].stat().st_ino, files["a1"].stat().st_mtime_ns) == a1_file
    assert files["b2"].read_bytes() == document("b2", "B, corrected")["document"].encode()
    assert not files["e5"].exists() and not (src.root / "x.jsonld").exists()
    assert sorted(p.name for p in src.root.rglob("*")) == ["a1.jsonld", "b2.jsonld", "items"]
    changes = [(c["location"]["value"], c["change"], c["datetime"]) for c in src.index.changes("set1")]
    assert changes == [
        ("items/a1.jsonld", "created", "2026-01-05T09:00:00.000Z"),
        ("items/b2.jsonld", "created", "2026-01-05T09:00:00.000Z"),
        ("items/e5.jsonld", "created", "2026-01-05T09:00:00.000Z"),
        ("items/b2.jsonld", "updated", "2026-01-06T09:00:00.000Z"),
        ("items/e5.jsonld", "deleted", "2026-01-06T09:00:00.000Z"),
    ]  # same event time: in the order they were recorded
    a1, b2 = src.index.resources("set1")
    assert (b2["mime"], b2["length"]) == ("application/ld+json", files["b2"].stat().st_size)
    assert a1["md5"] == hashlib.md5(files["a1"].read_bytes()).hexdigest()


def test_asset_publishes_the_sets_of_the_registry(tmp_path, t0):
    registry = tmp_path / "registry.yaml"
    registry.write_text(
        yaml.safe_dump(
            {
                "demo": {"resourcesync": {}},
                "files": {
                    "resourcesync": {"root": str(tmp_path / "files"), "url_prefix": "https://cdn.example.org/files/"}
                },
                "quiet": {"harvest": {"type": "file", "path": "/data/q.jsonl", "format": "jsonl", "id_path": "id"}},
            }
        )
    )
    resourcesync = ResourceSyncResource(
        search=str(tmp_path / "search"),
        sql=SqlResource(url=f"sqlite:///{tmp_path}/db.sqlite3"),
        base_url="https://rs.example.org/",
    )
    registry_resource = RegistryResource(path=str(registry))
    storage = StorageResource(url=str(tmp_path / "storage"))
    report = feed_indexed_records(
        resourcesync, registry_resource, storage, "demo", [document("a1", "A")], datetime.now(timezone.utc)
    )
    assert report.counts["created"] == 1
    assert feed_indexed_records(resourcesync, registry_resource, storage, "quiet", [document("q", "Q")], t0) is None
    # a set without a root keeps its files in the storage, where the server serves them from
    assert list(storage.get_client().list_keys("_resourcesync")) == ["_resourcesync/demo/resources/items/a1.jsonld"]
    stored = storage.get_client().read_bytes("_resourcesync/demo/resources/items/a1.jsonld")
    assert stored == document("a1", "A")["document"].encode()

    result = dg.materialize(
        [resourcesync_documents],
        resources={"resourcesync": resourcesync, "storage": storage, "registry": registry_resource},
    )
    assert result.success
    [materialization] = result.asset_materializations_for_node("resourcesync_documents")
    # the two record sets, then the change feeds of repository, datasets and linked data (on by default)
    assert materialization.metadata["resource_sets"].value == 5 and materialization.metadata["resources"].value == 1
    description = storage.get_client().read_bytes("_resourcesync/.well-known/resourcesync").decode()
    for name in ("demo", "files", "repository-objects", "dataset-files", "linked-data"):
        assert f"https://rs.example.org/{name}/capabilitylist.xml" in description
    [snapshot] = storage.get_client().list_children("_resourcesync/demo/resourcelist")
    resource_list = storage.get_client().read_bytes(f"_resourcesync/demo/resourcelist/{snapshot}/resourcelist.xml")
    assert b"<loc>https://rs.example.org/demo/resources/items/a1.jsonld</loc>" in resource_list


def test_unknown_registry_keys_are_refused_naming_the_provider(tmp_path):
    registry = tmp_path / "registry.yaml"
    registry.write_text(yaml.safe_dump({"demo": {"resourcesync": {"url-prefix": "https://x.org/"}},
                                        "other": {"resourcesync": {}}}))
    loaded = load_registry(registry)  # the refused entry stops only itself: the other one is still published
    assert [s.name for s in resource_sets(loaded, "https://rs.example.org")] == ["other"]
    with pytest.raises(ConfigError, match="url-prefix") as err:
        loaded["demo"]
    assert "'demo'" in str(err.value) and str(registry) in str(err.value)


def test_publish_outputs_must_be_a_boolean(tmp_path):
    registry = tmp_path / "registry.yaml"
    registry.write_text(yaml.safe_dump({"a": {"resourcesync": {"publish_outputs": True}}, "b": {"resourcesync": {}}}))
    sets = resource_sets(load_registry(registry), "https://rs.example.org")
    assert [s.publish_outputs for s in sets] == [True, False]
    registry.write_text(yaml.safe_dump({"demo": {"resourcesync": {"publish_outputs": "yes"}}}))
    loaded = load_registry(registry)
    assert resource_sets(loaded, "https://rs.example.org") == []
    assert "publish_outputs" in str(loaded.problems["demo"]) and "'demo'" in str(loaded.problems["demo"])
