"""The registry's harvest block, the MimeType enum translation and the storage checkpoint."""

from __future__ import annotations

from datetime import datetime

import pytest

from ingest_assets.errors import ConfigError
from ingest_assets.records.harvest import (
    MIMETYPE_SYMBOLS,
    StorageCheckpoint,
    harvest_records,
    mimetype_from_symbol,
    mimetype_symbol,
    parse_harvest_config,
)
from ingest_assets.records.harvest.config import ApiConfig, FileConfig, OaiConfig

OAI_NS = {"oai": "http://www.openarchives.org/OAI/2.0/"}


def test_valid_blocks_with_defaults(provider):
    oai = parse_harvest_config(provider({"type": "oai", "endpoint": "https://api.lib.harvard.edu/oai/", "set": "botanicals"}))
    assert oai == OaiConfig("https://api.lib.harvard.edu/oai/", "oai_dc", "botanicals", False)
    api = parse_harvest_config(provider({
        "type": "api", "endpoint": "https://api.dp.la/v2/items", "records_path": "docs", "id_path": "id",
        "paging": {"style": "offset", "offset_param": "page", "page_size": 500}, "params": {"page_size": 500},
    }))
    assert isinstance(api, ApiConfig) and api.paging.page_size == 500 and api.params == {"page_size": "500"}
    files = parse_harvest_config(provider({
        "type": "file", "url": "https://example.org/dump.zip", "format": "zip", "member_format": "xml",
        "record_xpath": "/oai:OAI-PMH//oai:record", "id_xpath": "oai:header/oai:identifier", "namespaces": OAI_NS,
    }))
    assert isinstance(files, FileConfig) and files.records_format == "xml"
    assert files.record_steps == (("child", "{%s}OAI-PMH" % OAI_NS["oai"]), ("descendant", "{%s}record" % OAI_NS["oai"]))


@pytest.mark.parametrize(
    ("block", "key"),
    [
        ({}, "harvest: block is missing"),
        ({"type": "ftp"}, "harvest.type: must be one of oai, api, file"),
        ({"type": "oai"}, "harvest.endpoint: is required"),
        ({"type": "oai", "endpoint": "file:///etc/passwd"}, "harvest.endpoint: must be an http(s) URL"),
        ({"type": "oai", "endpoint": "https://h/oai", "metadataPrefix": "mods"}, "harvest.metadataPrefix: unknown key"),
        ({"type": "oai", "endpoint": "https://h/oai", "allow_private": "yes"}, "harvest.allow_private: must be true or false"),
        ({"type": "api", "endpoint": "https://h/api", "records_path": "d", "id_path": "id", "paging": {"style": "page"}},
         "harvest.paging.style: must be one of cursor, offset, next"),
        ({"type": "api", "endpoint": "https://h/api", "records_path": "d", "id_path": "id", "paging": {"style": "cursor"}},
         "harvest.paging.cursor_path: is required"),
        ({"type": "api", "endpoint": "https://h/api", "records_path": "d", "id_path": "id",
          "paging": {"style": "offset", "page_size": 0}}, "harvest.paging.page_size: must be a positive integer"),
        ({"type": "file", "format": "xml", "record_xpath": "//r", "id_xpath": "@id"}, "harvest.path: give exactly one"),
        ({"type": "file", "path": "/d.xml", "format": "xml", "record_xpath": "//r[1]", "id_xpath": "@id"},
         "harvest.record_xpath: '//r[1]': only"),
        ({"type": "file", "path": "/d.xml", "format": "xml", "record_xpath": "//x:r", "id_xpath": "@id"},
         "harvest.record_xpath: prefix 'x' is not declared"),
        ({"type": "file", "path": "/d.xml", "format": "xml", "record_xpath": "//r", "id_xpath": "@@id"},
         "harvest.id_xpath: invalid XPath"),
        ({"type": "file", "path": "/d.zip", "format": "zip", "id_path": "id"}, "harvest.member_format: is required"),
        ({"type": "file", "path": "/d.zip", "format": "zip", "member_format": "jsonl", "id_path": "id",
          "limits": {"max_member_bytes": -1}}, "harvest.limits.max_member_bytes: must be a positive integer"),
    ],
)
def test_invalid_blocks_name_provider_and_key(provider, block, key):
    with pytest.raises(ConfigError) as error:
        parse_harvest_config(provider(block or None, name="badprov"))
    assert key in str(error.value) and "provider 'badprov'" in str(error.value)


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
