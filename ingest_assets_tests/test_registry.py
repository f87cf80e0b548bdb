from datetime import date

import pytest
import yaml

from ingest_assets.errors import ConfigError
from ingest_assets.registry import load_registry, parse_registry
from ingest_assets.settings import Settings

GEOLINK = """
bcodmo:
  modified: 2015-06-01
  void: http://lod.bco-dmo.org/void.ttl
rvdata: {modified: 2015-06-01T10:00:00-04:00, void: "http://data.rvdata.us/void.ttl"}
"""


def test_geolink_form_is_valid_as_is(tmp_path):
    path = tmp_path / "registry.yaml"
    path.write_text(GEOLINK)
    registry = load_registry(path)
    assert sorted(registry) == ["bcodmo", "rvdata"]
    assert registry["bcodmo"].get("modified") == date(2015, 6, 1)
    assert registry["rvdata"].get("void") == "http://data.rvdata.us/void.ttl"
    assert [p.name for p in registry.providers_with("void")] == ["bcodmo", "rvdata"]
    assert registry["bcodmo"].block("harvest") == {} and registry["bcodmo"].label == "bcodmo"


def test_shipped_registry_loads():
    registry = load_registry("registry.yaml")
    assert registry["demo"].block("harvest")["type"] == "oai"


@pytest.mark.parametrize(
    "text, message",
    [
        ("Bad-Name: {}", "registry entry 'Bad-Name': provider names must match [a-z0-9]+"),
        ("ok: {}\n_hidden: {}", "registry entry '_hidden'"),
        ("12: {}", "registry entry 12"),
        ("cdl: [1, 2]", "registry entry 'cdl' must be a mapping"),
        ("- cdl", "the registry must map provider names to settings"),
        ('"demo\\n": {}', "registry entry 'demo\\n'"),  # a trailing newline passed an anchored re.match
        ("a" * 65 + ": {}", "at most 64 characters"),
    ],
)
def test_bad_entries_name_the_entry_and_file(tmp_path, text, message):
    path = tmp_path / "registry.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_registry(path)
    assert message in str(err.value) and str(path) in str(err.value)


def test_bad_block_and_unknown_provider():
    with pytest.raises(ConfigError, match="registry entry 'cdl', key 'harvest': Input should be a valid dictionary"):
        parse_registry(yaml.safe_load("cdl: {harvest: oai}"), "r.yaml")
    registry = parse_registry(yaml.safe_load("cdl: {harvest: {type: oai}}"), "r.yaml")
    with pytest.raises(ConfigError, match="provider 'nope' is not in the registry"):
        registry["nope"]


@pytest.mark.parametrize(("text", "message"), [
    ("lod: {void: 'https://x.org/void.ttl', allow_private: 'false'}",
     "key 'allow_private': Input should be a valid boolean (given 'false')"),
    ("lod: {void: 'https://x.org/void.ttl', max_dump_bytes: lots}", "key 'max_dump_bytes': Input should be a valid integer (given 'lots')"),
    ("lod: {void: 'https://x.org/void.ttl', max_dump_bytes: -5}", "key 'max_dump_bytes': Input should be greater than 0"),
    ("lod: {vodi: 'https://x.org/void.ttl'}", "key 'vodi': unknown key"),
    ("rec: {harvest: {type: oai}, schedule: {cron: '0 3 * * *', tz: UTC}}", "key 'schedule.tz': unknown key"),
    ("rec: {harvest: {type: oai}, quality: {max_failure_rate: '20%'}}", "key 'quality.max_failure_rate': Input should be a valid number"),
    ("rec: {harvest: {type: oai}, engine: spork}", "key 'engine': Input should be 'in-process', 'spark' or 'auto'"),
    ("k2n: {repository: {template_index: 'https://x', max_ingest_hours: soon}}", "key 'repository.max_ingest_hours'"),
])
def test_every_key_has_a_type_and_errors_name_entry_key_and_file(tmp_path, text, message):
    """A quoted "false" was read as true (allow_private on!), 'lots' raised a bare ValueError at first use."""
    path = tmp_path / "registry.yaml"
    path.write_text(text + "\n")
    with pytest.raises(ConfigError) as caught:
        load_registry(path)
    assert message in str(caught.value) and str(path) in str(caught.value)
    assert caught.value.provider == text.split(":")[0]


def test_the_documented_keys_load_with_yaml_types():
    registry = parse_registry(yaml.safe_load(
        "bcodmo: {modified: 2015-06-01, void: 'https://lod.bco-dmo.org/void.ttl', allow_private: false, max_dump_bytes: 1000}\n"
        "md: {harvest: {type: oai}, mapping: qdc, mapping_overrides: {dataProvider: {value: X}}, engine: auto,\n"
        "     engine_threshold: 5000, quality: {max_count_drop: 0.15, max_failure_rate: 1}, schedule: false, resourcesync: {}}\n"
        "k2n: {repository: {template_index: 'https://x', default_language: de, start: 2009-01-01T00:00:00+00:00}}\n"
    ), "r.yaml")
    assert registry["md"].get("engine_threshold") == 5000 and registry["bcodmo"].get("allow_private") is False


def test_missing_or_invalid_files(tmp_path):
    with pytest.raises(ConfigError, match="registry file not found"):
        load_registry(tmp_path / "absent.yaml")
    (tmp_path / "bad.yaml").write_text("a: [unclosed")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_registry(tmp_path / "bad.yaml")


def test_settings_defaults_and_overrides(tmp_path):
    settings = Settings.from_env({"INGEST_HOME": str(tmp_path)})
    assert settings.storage_url == str(tmp_path / "storage")
    assert settings.database_url == f"sqlite:///{tmp_path / 'ingest.sqlite3'}"
    assert settings.triplestore == str(tmp_path / "oxigraph")
    s3 = Settings.from_env({"INGEST_HOME": str(tmp_path), "INGEST_STORAGE": "s3://bucket/hub", "INGEST_PARTITION_START": "2024-05-01"})
    assert s3.storage_url == "s3://bucket/hub" and s3.partition_start == date(2024, 5, 1)
    with pytest.raises(ConfigError, match="INGEST_PARTITION_START"):
        Settings.from_env({"INGEST_PARTITION_START": "May 2024"})
