"""The registry's harvest block, the MimeType enum translation and the storage checkpoint."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from ingest_assets.core.errors import ConfigError
from typing import get_args

from ingest_assets.records.harvest import (
    HARVESTERS,
    MIMETYPE_SYMBOLS,
    StorageCheckpoint,
    harvest_records,
    mimetype_from_symbol,
    mimetype_symbol,
)
from ingest_assets.core.registry import ApiHarvest, FileHarvest, HarvestBlock, OaiHarvest, ProviderEntry, record_path_steps
from ingest_assets.records.harvest.base import Harvester

OAI_NS = {"oai": "http://www.openarchives.org/OAI/2.0/"}
BLOCK_TYPES = [get_args(model.model_fields["type"].annotation)[0] for model in get_args(get_args(HarvestBlock)[0])]


def test_every_block_type_has_one_harvester_in_the_table():
    assert set(HARVESTERS) == set(BLOCK_TYPES)
    for harvester in HARVESTERS.values():
        assert issubclass(harvester, Harvester)


def test_valid_blocks_with_defaults(provider):
    oai = provider({"type": "oai", "endpoint": "https://api.lib.harvard.edu/oai/", "set": "botanicals"}).require("harvest")
    assert oai == OaiHarvest(type="oai", endpoint="https://api.lib.harvard.edu/oai/", metadata_prefix="oai_dc",
                             sets=["botanicals"], allow_private=False)  # set: x is read as sets: [x]
    every = provider({"type": "oai", "endpoint": "https://h/oai", "all_sets": True, "exclude_sets": ["test"]})
    assert every.require("harvest").all_sets and every.require("harvest").exclude_sets == ["test"]
    api = provider({
        "type": "api", "endpoint": "https://api.dp.la/v2/items", "records_path": "docs", "id_path": "id",
        "paging": {"style": "offset", "offset_param": "page", "page_size": 500}, "params": {"page_size": 500},
    }).require("harvest")
    assert isinstance(api, ApiHarvest) and api.paging.page_size == 500 and api.params == {"page_size": "500"}
    files = provider({
        "type": "file", "url": "https://example.org/dump.zip", "format": "xml", "members": "*.xml",
        "record_xpath": "/oai:OAI-PMH//oai:record | //*:doc", "id_xpath": "oai:header/oai:identifier", "namespaces": OAI_NS,
    }).require("harvest")
    assert isinstance(files, FileHarvest) and files.urls == ["https://example.org/dump.zip"]  # url: x is urls: [x]
    assert files.members == ["*.xml"] and files.include == ["*"] and files.order == "ascending" and not files.delta
    assert record_path_steps(files.record_xpath, OAI_NS) == (
        (("child", OAI_NS["oai"], "OAI-PMH"), ("descendant", OAI_NS["oai"], "record")), (("descendant", "*", "doc"),))


@pytest.mark.parametrize(
    ("block", "key"),
    [
        ({"type": "ftp"}, "'badprov.harvest': Input tag 'ftp' found using 'type' does not match any of the expected "
                          f"tags: {', '.join(map(repr, BLOCK_TYPES))}"),
        ({"type": "oai"}, "'badprov.harvest.endpoint': Field required"),
        ({"type": "oai", "endpoint": "file:///etc/passwd"}, "'badprov.harvest.endpoint': must be an http(s) URL"),
        ({"type": "oai", "endpoint": "https://h/oai", "metadataPrefix": "mods"}, "'badprov.harvest.metadataPrefix': unknown key"),
        ({"type": "oai", "endpoint": "https://h/oai", "set": "a", "sets": ["b"]}, "'badprov.harvest.oai': give set or sets, not both"),
        ({"type": "oai", "endpoint": "https://h/oai", "sets": ["a"], "all_sets": True},
         "'badprov.harvest.all_sets': give sets or all_sets, not both"),
        ({"type": "oai", "endpoint": "https://h/oai", "exclude_sets": ["a"]},
         "'badprov.harvest.exclude_sets': only applies to all_sets: true"),
        ({"type": "oai", "endpoint": "https://h/oai", "sets": ["a", "a"]}, "'badprov.harvest.sets': lists a set twice"),
        ({"type": "oai", "endpoint": "https://h/oai", "sets": "a"}, "'badprov.harvest.sets': Input should be a valid list"),
        ({"type": "oai", "endpoint": "https://h/oai", "allow_private": "yes"},
         "'badprov.harvest.allow_private': Input should be a valid boolean (given 'yes')"),
        ({"type": "api", "endpoint": "https://h/api", "records_path": "d", "id_path": "id", "paging": {"style": "scroll"}},
         "'badprov.harvest.paging.style': Input should be 'cursor', 'offset', 'page' or 'next'"),
        ({"type": "api", "endpoint": "https://h/api", "records_path": "d", "id_path": "id", "paging": {"style": "cursor"}},
         "'badprov.harvest.paging.cursor_path': is required with style: cursor"),
        ({"type": "api", "endpoint": "https://h/api", "records_path": "d", "id_path": "id",
          "paging": {"style": "offset", "page_size": 0}}, "'badprov.harvest.paging.page_size': Input should be greater than 0"),
        ({"type": "api", "endpoint": "https://h/api", "records_path": "d", "id_path": "id", "paging": {"style": "next"},
          "params": {"all": True}}, "'badprov.harvest.params.all': Input should be a valid string"),
        ({"type": "file", "format": "xml", "record_xpath": "//r", "id_xpath": "@id"},
         "'badprov.harvest.urls': give exactly one of path or url(s)"),
        ({"type": "file", "path": "/d.xml", "url": "https://h/d.xml", "format": "xml", "record_xpath": "//r", "id_xpath": "@id"},
         "'badprov.harvest.urls': give exactly one of path or url(s)"),
        ({"type": "file", "url": "https://h/d.xml", "urls": ["https://h/e.xml"], "format": "jsonl", "id_path": "id"},
         "'badprov.harvest.file': give url or urls, not both"),
        ({"type": "file", "path": "https://h/d.xml", "format": "jsonl", "id_path": "id"},
         "'badprov.harvest.path': an http(s) source is given as url or urls"),
        ({"type": "file", "path": "s3://Not_A_Bucket/x", "format": "jsonl", "id_path": "id"},
         "'badprov.harvest.path': 's3://Not_A_Bucket/x' is not s3://<bucket>/<prefix> with a valid bucket name"),
        ({"type": "file", "path": "s3:///prefix", "format": "jsonl", "id_path": "id"},
         "'badprov.harvest.path': 's3:///prefix' is not s3://<bucket>/<prefix>"),
        ({"type": "file", "path": "ftp://h/d.xml", "format": "jsonl", "id_path": "id"},
         "'badprov.harvest.path': 'ftp://h/d.xml': a local path or s3://bucket/prefix"),
        ({"type": "file", "path": "/d.xml", "format": "xml", "record_xpath": "//r[1]", "id_xpath": "@id"},
         "'badprov.harvest.record_xpath': '//r[1]': only"),
        ({"type": "file", "path": "/d.xml", "format": "xml", "record_xpath": "//r | //s[@a]", "id_xpath": "@id"},
         "'badprov.harvest.record_xpath': '//r | //s[@a]': only"),
        ({"type": "file", "path": "/d.xml", "format": "xml", "record_xpath": "//x:r", "id_xpath": "@id"},
         "'badprov.harvest.record_xpath': prefix 'x' is not declared"),
        ({"type": "file", "path": "/d.xml", "format": "xml", "record_xpath": "//r", "id_xpath": "@@id"},
         "'badprov.harvest.id_xpath': invalid XPath"),
        ({"type": "file", "path": "/d.xml", "format": "xml", "record_xpath": "//r", "id_xpath": "@id", "filter_xpath": "a["},
         "'badprov.harvest.filter_xpath': invalid XPath"),
        ({"type": "file", "path": "/d.xml", "format": "xml", "id_xpath": "@id"},
         "'badprov.harvest.record_xpath': is required for XML records"),
        ({"type": "file", "path": "/d.xml", "format": "xml", "record_xpath": "/*"},
         "'badprov.harvest.id_xpath': is required for XML records (or id_from: name)"),
        ({"type": "file", "path": "/d.zip", "format": "xml", "record_xpath": "/*", "id_from": "name", "id_xpath": "x"},
         "'badprov.harvest.id_xpath': not with id_from: name"),
        ({"type": "file", "path": "/d.jsonl", "format": "jsonl", "id_path": "id", "record_xpath": "//r"},
         "'badprov.harvest.record_xpath': only applies to XML records"),
        ({"type": "file", "path": "/d.jsonl", "format": "jsonl"},
         "'badprov.harvest.id_path': is required for JSON records (or id_from: name)"),
        ({"type": "file", "path": "/d.json", "format": "json", "id_path": "id"},
         "'badprov.harvest.records_path': is required with format: json"),
        ({"type": "file", "path": "/d.jsonl", "format": "jsonl", "id_path": "id", "records_path": "docs"},
         "'badprov.harvest.records_path': only applies to format: json"),
        ({"type": "file", "path": "/d.jsonl", "format": "jsonl", "id_path": "_id", "id_pattern": "(--"},
         "'badprov.harvest.id_pattern': invalid regular expression '(--'"),
        ({"type": "file", "path": "/d.jsonl", "format": "jsonl", "id_path": "id", "status": {"xpath": "@status"}},
         "'badprov.harvest.status': JSON records give the status as path"),
        ({"type": "file", "path": "/d.xml", "format": "xml", "record_xpath": "//r", "id_xpath": "@id",
          "status": {"path": "status"}}, "'badprov.harvest.status': XML records give the status as xpath"),
        ({"type": "file", "path": "/d.jsonl", "format": "jsonl", "id_path": "id", "status": {"path": "s", "action": "hide"}},
         "'badprov.harvest.status.action': Input should be 'drop' or 'delete'"),
        ({"type": "file", "path": "/d", "format": "xml", "record_xpath": "//r", "id_xpath": "@id",
          "deletes": {"include": "d/*.xml", "id_element": "//n:naId"}},
         "'badprov.harvest.deletes': prefix 'n' is not declared"),
        ({"type": "file", "path": "/d", "format": "jsonl", "id_path": "id", "include": []},
         "'badprov.harvest.include': Value should have at least 1 item"),
        ({"type": "file", "path": "/d.zip", "format": "jsonl", "id_path": "id", "limits": {"max_member_bytes": -1}},
         "'badprov.harvest.limits.max_member_bytes': Input should be greater than 0"),
    ],
)
def test_invalid_blocks_name_provider_and_key(provider, block, key):
    with pytest.raises(ConfigError) as error:
        provider(block, name="badprov")
    assert f"registry key {key}" in str(error.value) and "provider 'badprov'" in str(error.value)


def test_a_missing_block_is_named_when_harvesting(provider, http, checkpoint):
    with pytest.raises(ConfigError, match="registry key 'badprov.harvest': is missing"):
        harvest_records(ProviderEntry("badprov", {"mapping": "mods"}), started=datetime.now(timezone.utc), window=None,
                        http=http, checkpoint=checkpoint)


def test_mimetype_symbols_translate_both_ways():
    assert MIMETYPE_SYMBOLS == ("application_json", "application_xml", "text_turtle")
    for mimetype in ("application/json", "application/xml", "text/turtle"):
        assert mimetype_from_symbol(mimetype_symbol(mimetype)) == mimetype
    with pytest.raises(ValueError):
        mimetype_symbol("text/html")
    with pytest.raises(ValueError):
        mimetype_from_symbol("application/xml")


def test_started_must_be_timezone_aware(provider, http, checkpoint):
    with pytest.raises(ValueError, match="timezone-aware"):
        harvest_records(
            provider({"type": "oai", "endpoint": "https://h/oai"}), started=datetime(2026, 1, 1), window=None,
            http=http, checkpoint=checkpoint,
        )


def test_storage_checkpoint_round_trip(tmp_storage):
    checkpoint = StorageCheckpoint(tmp_storage, "harvardlc")
    assert checkpoint.key == "harvardlc/state/harvest-checkpoint.json" and checkpoint.load() is None
    checkpoint.save({"kind": "oai", "token": "a", "page": 1})
    checkpoint.save({"kind": "oai", "token": "b", "page": 2})
    assert checkpoint.load() == {"kind": "oai", "token": "b", "page": 2}
    tmp_storage.write_bytes(checkpoint.key, b'{"kind": "oai", "tok', overwrite=True)
    assert checkpoint.load() is None  # unreadable: start afresh rather than stay stuck
    checkpoint.clear()
    assert not tmp_storage.exists(checkpoint.key)
    checkpoint.clear()
