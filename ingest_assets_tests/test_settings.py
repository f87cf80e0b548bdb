"""All configuration is read once, in settings.py."""

import io
import re
from pathlib import Path

import fastavro
import pytest

import ingest_assets
from ingest_assets.defs.resources import SqlResource
from ingest_assets.defs.resourcesync.resources import ResourceSyncResource
from ingest_assets.core.errors import ConfigError
from ingest_assets.core.registry import Registry
from ingest_assets.core.settings import Settings
from ingest_assets.storage import LocalStorage
from ingest_assets.storage.avro import ORIGINAL_RECORD, schema_with_doc, write_parts

PACKAGE = Path(ingest_assets.__file__).parent
READS = re.compile(r"os\.environ\.get\(|os\.environ\[|os\.getenv\(|in os\.environ")


def test_nothing_but_settings_reads_the_environment():
    readers = [
        f"{path.relative_to(PACKAGE)}:{n}"
        for path in PACKAGE.rglob("*.py")
        if path.name != "settings.py"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if READS.search(line)
    ]
    assert readers == []


class _Folder:
    def __init__(self):
        self.files = {}

    def open(self, name):
        self.files[name] = io.BytesIO()
        self.files[name].close = lambda: None
        return self.files[name]


@pytest.fixture
def current_settings(monkeypatch):
    def use(env):
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        Settings.current.cache_clear()

    yield use
    Settings.current.cache_clear()


def test_the_avro_codec_comes_from_the_settings(current_settings):
    record = {"id": "a", "ingestDate": 1, "provider": "p", "document": "<r/>", "mimetype": "application_xml", "deleted": False}
    for value, codec in (("deflate:3", "deflate"), ("null", "null"), ("snappy", "snappy")):
        current_settings({"INGEST_AVRO_CODEC": value})
        folder = _Folder()
        write_parts(folder, schema_with_doc(ORIGINAL_RECORD, "doc"), [record])
        part = folder.files["part-00000.avro"]
        part.seek(0)
        assert fastavro.reader(part).codec == codec


@pytest.mark.parametrize("env, message", [
    ({"INGEST_AVRO_CODEC": "gzip"}, "INGEST_AVRO_CODEC must be one of"),
    ({"INGEST_AVRO_CODEC": "deflate:high"}, "whole number"),
    ({"INGEST_REPOSITORY_HARVESTING_INTERVAL": "2m"}, "INGEST_REPOSITORY_HARVESTING_INTERVAL"),
    ({"INGEST_REPOSITORY_REMOVAL_GRACE_DAYS": "-1"}, "must not be negative"),
    ({"INGEST_PARTITION_START": "May 2024"}, "YYYY-MM-DD"),
    ({"INGEST_RESOURCESYNC_CAPABILITIES": "repository,records"}, r"INGEST_RESOURCESYNC_CAPABILITIES: unknown \['records'\]"),
    ({"INGEST_AUTO_EXPORTS": "jsonl"}, r"INGEST_AUTO_EXPORTS: unknown \['jsonl'\]; known: jsonl_export, wikimedia_records"),
    ({"INGEST_INDEX_TOLERANCE": "5%"}, "INGEST_INDEX_TOLERANCE must be a number"),
    ({"INGEST_INDEX_TOLERANCE": "2"}, "INGEST_INDEX_TOLERANCE must be a share between 0 and 1"),
    ({"INGEST_INDEX_RETAIN": "-1"}, "INGEST_INDEX_RETAIN must not be negative"),
])
def test_a_bad_setting_is_a_config_error_naming_it(env, message):
    with pytest.raises(ConfigError, match=message):
        Settings.from_env(env)


def test_the_published_change_feeds_come_from_the_settings(tmp_path):
    def resource(env: dict) -> ResourceSyncResource:
        sql = SqlResource(url=f"sqlite:///{tmp_path / 'db.sqlite3'}")
        return ResourceSyncResource.from_settings(Settings.from_env(env), sql)

    everything = resource({})
    assert [s.name for s in everything.sets(Registry({}))] == ["repository-objects", "dataset-files", "linked-data"]
    assert everything.capability_feed("datasets", LocalStorage(tmp_path)).resource_set.name == "dataset-files"
    only = resource({"INGEST_RESOURCESYNC_CAPABILITIES": " linked_data "})
    assert [s.name for s in only.sets(Registry({}))] == ["linked-data"]
    assert only.capability_feed("datasets", LocalStorage(tmp_path)) is None  # not published: no feed
    assert resource({"INGEST_RESOURCESYNC_CAPABILITIES": ""}).sets(Registry({})) == []


def test_publishing_settings_and_their_defaults():
    defaults = Settings.from_env({})
    assert (defaults.index_count_tolerance, defaults.index_retain, defaults.smtp_given) == (0.02, 2, False)
    given = Settings.from_env({"INGEST_SMTP_URL": "smtp+starttls://hub@smtp.hub.org", "INGEST_INDEX_RETAIN": "5",
                               "INGEST_INDEX_TOLERANCE": "0.1"})
    assert (given.smtp_given, given.index_retain, given.index_count_tolerance) == (True, 5, 0.1)


def test_secrets_are_looked_up_but_never_shown():
    settings = Settings.from_env({"FEDORA_USER": "fedoraAdmin", "FEDORA_PASSWORD": "s3cret", "IA_SECRET_KEY": "k"})
    assert settings.fedora_auth() == ("fedoraAdmin", "s3cret") and settings.secret("IA_SECRET_KEY") == "k"
    assert "s3cret" not in repr(settings) and Settings.from_env({}).fedora_auth() is None
