import re
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from ingest_assets.core.errors import ConfigError
from ingest_assets.core.registry import RESERVED_NAMES, OaiHarvest, ProviderEntry, load_registry, parse_registry
from ingest_assets.core.settings import Settings
from ingest_assets.resourcesync.config import CAPABILITY_SETS

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
    assert registry["bcodmo"].settings.modified == datetime(2015, 6, 1, tzinfo=timezone.utc)
    assert registry["rvdata"].settings.modified == datetime(2015, 6, 1, 14, tzinfo=timezone.utc)
    assert registry["rvdata"].settings.void == "http://data.rvdata.us/void.ttl"
    assert [p.name for p in registry.providers_with("void")] == ["bcodmo", "rvdata"]
    assert registry.providers_of("records") == [] and registry["bcodmo"].label == "bcodmo"
    with pytest.raises(ConfigError, match="registry key 'bcodmo.harvest': is missing"):
        registry["bcodmo"].require("harvest")


def test_shipped_registry_and_its_commented_examples_load():
    registry = load_registry("registry.yaml")
    assert isinstance(registry["demo"].settings.harvest, OaiHarvest) and registry["demo"].settings.harvest.allow_private
    text = Path("registry.yaml").read_text()
    examples = parse_registry(yaml.safe_load("\n".join(
        line[2:] for line in text.splitlines() if re.match(r"# *\w+:", line)
    )), "registry.yaml comments")
    assert list(examples) == re.findall(r"^# (\w+):", text, re.MULTILINE) and "maryland" in examples
    assert examples["maryland"].settings.harvest.sets == ["mdlc"]
    assert examples["maryland"].settings.mapping_overrides == {"dataProvider": {"value": "Maryland State Archives"}}
    assert examples["k2n"].require("repository").default_language == "de"
    assert examples["dans"].require("datasets").hosts == ["dataverse.internal.example.org"]
    assert examples["minnesota"].settings.enrichment.skip == ["strip_ending_period"]
    assert examples["maryland"].settings.review.required and examples["maryland"].settings.contact


def test_review_contacts_and_index_tolerance_are_typed():
    entry = parse_registry({"mwdl": {"review": {"required": True, "auto_approve_after": "2d"}, "contact": "a@mwdl.org",
                                     "quality": {"index_count_tolerance": 0.05}}})["mwdl"]
    assert entry.settings.review.auto_approve_after == timedelta(days=2) and entry.settings.contact == ["a@mwdl.org"]
    assert entry.settings.quality.index_count_tolerance == 0.05
    plain = parse_registry({"demo": {}})["demo"].settings
    assert (plain.review.required, plain.review.auto_approve_after, plain.contact) == (False, timedelta(hours=48), [])
    assert parse_registry({"x": {"review": {"required": True, "auto_approve_after": "never"}}})["x"].settings.review \
        .auto_approve_after is None
    for bad, message in (({"review": {"auto_approve_after": 48}}, "x.review.auto_approve_after': must be a positive"),
                         ({"review": {"auto_approve_after": "0h"}}, "must be a positive duration"),
                         ({"review": {"required": "yes"}}, "x.review.required"),
                         ({"contact": ["not an address"]}, "x.contact': 'not an address' is not an e-mail address"),
                         ({"quality": {"index_count_tolerance": 2}}, "x.quality.index_count_tolerance")):
        with pytest.raises(ConfigError, match=re.escape(message)):
            parse_registry({"x": bad})["x"]  # refused: the entry's own error


@pytest.mark.parametrize(
    "text, message",
    [
        ("Bad-Name: {}", "registry entry 'Bad-Name': provider names are lowercase letters and digits, '-' between"),
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
    error = problem_of(path)
    assert message in str(error) and str(path) in str(error)


def test_hyphens_join_the_parts_of_a_name_and_capability_set_names_are_taken():
    """ingestion3's hub names (northwest-heritage, david-rumsey) are names; a '-' that starts, ends or doubles one is
    not, and ResourceSync's capability sets keep theirs."""
    names = ["northwest-heritage", "david-rumsey", "a-1-b", "-lead", "trail-", "double--dash", "linked-data",
             "dataset-files", "repository-objects"]
    registry = parse_registry({name: {} for name in names}, "registry.yaml")
    assert sorted(registry) == ["a-1-b", "david-rumsey", "northwest-heritage"]
    assert "'-' between them" in str(registry.problems["double--dash"])
    assert "capability sets" in registry.problems["linked-data"].message
    assert RESERVED_NAMES == set(CAPABILITY_SETS.values())


def test_a_hyphenated_name_reads_back_from_every_name_made_of_it():
    """Folder and file names, index names, graph IRIs and partition keys are made of the provider name; each is
    read back to the same name."""
    from ingest_assets.defs.records.partitions import partition_key, partition_parts
    from ingest_assets.linked_data.graphs import ProviderGraphs, provider_of
    from ingest_assets.records.indexing.naming import build_name, parse_index
    from ingest_assets.storage import layout

    name, day, started = "northwest-heritage", date(2026, 1, 15), datetime(2026, 1, 16, 2, 3, 4, tzinfo=timezone.utc)
    output = layout.activity_output(name, "harvest", day, started, "OriginalRecord.v1")
    assert output.folder == "northwest-heritage/harvest/20260115/20260116_020304-northwest-heritage-OriginalRecord.v1.avro"
    assert layout.parse_output(output.folder) == output
    export = layout.jsonl_export(name, name, started).rpartition("/")[2]
    assert export == "20260116_020304-northwest-heritage-MAP3_1.IndexRecord.jsonl"
    assert layout.parse_jsonl_export(export) == (started, name)
    index = build_name("dpla-map4", started, lambda _name: False, name)
    assert index == "dpla-map4-northwest-heritage-20260116020304"
    assert parse_index("dpla-map4", index).provider == name and parse_index("dpla-map4", "dpla-map4-20260116020304").provider is None
    assert provider_of(ProviderGraphs(name).name) == name
    assert partition_parts(str(partition_key(name, day))) == (name, day)


def problem_of(path) -> ConfigError:
    """The one problem of a registry file: raised while loading it (the file), else its one refused entry."""
    try:
        registry = load_registry(path)
    except ConfigError as exc:
        return exc
    [problem] = registry.problems.values()
    return problem


def test_a_refused_entry_stops_only_itself(tmp_path):
    path = tmp_path / "registry.yaml"
    path.write_text(f"good: {{harvest: {OAI}}}\nbad: {{harvest: {{type: oai, endpoint: 'https://h.org/oai', metadataprefix: mods}}}}\n"
                    "lod: {void: 'https://x.org/void.ttl'}\nBad-Name: {}\n")
    registry = load_registry(path)
    assert sorted(registry) == ["good", "lod"] and registry.providers_of("records") == ["good"]
    assert sorted(registry.problems) == ["Bad-Name", "bad"] and "bad" not in registry and "good" in registry
    with pytest.raises(ConfigError, match="registry key 'bad.harvest.metadataprefix': unknown key") as refused:
        registry["bad"]
    assert refused.value.provider == "bad" and refused.value.file == str(path)
    with pytest.raises(ConfigError, match="provider 'nope' is not in the registry") as unknown:
        registry["nope"]
    assert unknown.value.hint == "known providers: good, lod"


class Kept:
    def __init__(self):
        self.text = None

    def read(self):
        return self.text

    def write(self, text):
        self.text = text


def test_a_file_that_stops_parsing_runs_on_its_last_good_copy(tmp_path):
    path, kept = tmp_path / "registry.yaml", Kept()
    path.write_text(f"good: {{harvest: {OAI}}}\n")
    assert sorted(load_registry(path, kept)) == ["good"] and kept.text == path.read_text()
    path.write_text("good: {harvest: [unclosed\n")
    fallback = load_registry(path, kept)
    assert sorted(fallback) == ["good"] and fallback.source == str(path)
    assert "registry is not valid YAML" in str(fallback.stale) and "line 2" in str(fallback.stale)
    path.unlink()
    assert "registry file not found" in str(load_registry(path, kept).stale)
    with pytest.raises(ConfigError, match="registry file not found"):
        load_registry(path)  # no copy kept: the error itself
    path.write_text("- not a mapping\n")
    assert "must map provider names" in str(load_registry(path, kept).stale)


def test_bad_block_and_unknown_provider():
    with pytest.raises(ConfigError, match="registry key 'cdl.harvest': Input should be a valid dictionary"):
        parse_registry(yaml.safe_load("cdl: {harvest: oai}"), "r.yaml")["cdl"]
    registry = parse_registry(yaml.safe_load(f"cdl: {{harvest: {OAI}}}"), "r.yaml")
    with pytest.raises(ConfigError, match="provider 'nope' is not in the registry"):
        registry["nope"]


OAI = "{type: oai, endpoint: 'https://h.org/oai'}"


@pytest.mark.parametrize(("text", "message"), [
    # linked data
    ("lod: {void: 'https://x.org/void.ttl', allow_private: 'false'}",
     "key 'lod.allow_private': Input should be a valid boolean (given 'false')"),
    ("lod: {void: 'https://x.org/void.ttl', max_dump_bytes: lots}",
     "key 'lod.max_dump_bytes': Input should be a valid integer (given 'lots')"),
    ("lod: {void: 'https://x.org/void.ttl', max_dump_bytes: -5}", "key 'lod.max_dump_bytes': Input should be greater than 0"),
    ("lod: {vodi: 'https://x.org/void.ttl'}", "key 'lod.vodi': unknown key"),
    ("lod: {void: 'https://x.org/void.ttl', modified: last tuesday}", "key 'lod.modified': 'last tuesday' is not a date"),
    # record harvest, one variant per type
    ("maryland: {harvest: {type: oai, endpoint: 'https://h.org/oai', metadataPrefix: mods}}",
     "key 'maryland.harvest.metadataPrefix': unknown key"),
    ("maryland: {harvest: {type: oai, endpoint: 'https://h.org/oai', metadata_prefix: 5}}",
     "key 'maryland.harvest.metadata_prefix': Input should be a valid string (given 5)"),
    ("dpla: {harvest: {type: api, endpoint: 'https://h.org/api', records_path: d, id_path: id, paging: {style: offset, size: 5}}}",
     "key 'dpla.harvest.paging.size': unknown key"),
    ("dpla: {harvest: {type: api, endpoint: 'https://h.org/api', records_path: d, id_path: id, paging: {style: scroll}}}",
     "key 'dpla.harvest.paging.style': Input should be 'cursor', 'offset', 'page' or 'next' (given 'scroll')"),
    ("dump: {harvest: {type: file, path: /d.zip, format: xml, record_xpath: //r, id_xpath: '@id',"
     " limits: {max_ratio: high}}}", "key 'dump.harvest.limits.max_ratio': Input should be a valid integer (given 'high')"),
    ("dump: {harvest: {type: file, path: /d.jsonl, format: jsonl, id_path: id, recursive: true}}",
     "key 'dump.harvest.recursive': unknown key"),
    ("dump: {harvest: {type: ftp}}", "key 'dump.harvest': Input tag 'ftp' found using 'type' does not match"),
    # the record pipeline's other keys
    (f"rec: {{harvest: {OAI}, schedule: {{cron: '0 3 * * *', tz: UTC}}}}", "key 'rec.schedule.tz': unknown key"),
    (f"rec: {{harvest: {OAI}, quality: {{max_failure_rate: '20%'}}}}",
     "key 'rec.quality.max_failure_rate': Input should be a valid number"),
    (f"rec: {{harvest: {OAI}, engine: spork}}", "key 'rec.engine': Input should be 'in-process', 'spark' or 'auto'"),
    (f"rec: {{harvest: {OAI}, mapping: [qdc]}}", "key 'rec.mapping': Input should be a valid string"),
    (f"rec: {{harvest: {OAI}, mapping_overrides: {{title: 'dc:title'}}}}",
     "key 'rec.mapping_overrides.title': Input should be a valid dictionary (given 'dc:title')"),
    # repository
    ("k2n: {repository: {template_index: 'https://x', max_ingest_hours: soon}}",
     "key 'k2n.repository.max_ingest_hours': Input should be a valid number (given 'soon')"),
    ("k2n: {repository: {template_index: 'https://x', template: Metadata}}", "key 'k2n.repository.template': unknown key"),
    # resourcesync
    (f"rec: {{harvest: {OAI}, resourcesync: {{publish_outputs: 'yes'}}}}",
     "key 'rec.resourcesync.publish_outputs': Input should be a valid boolean (given 'yes')"),
    (f"rec: {{harvest: {OAI}, resourcesync: {{url: 'https://x'}}}}", "key 'rec.resourcesync.url': unknown key"),
])
def test_every_key_has_a_type_and_errors_name_entry_key_and_file(tmp_path, text, message):
    """A quoted "false" was read as true (allow_private on!), 'lots' raised a bare ValueError at first use."""
    path = tmp_path / "registry.yaml"
    path.write_text(text + "\n")
    caught = problem_of(path)
    assert message in str(caught) and str(path) in str(caught)
    assert caught.provider == text.split(":")[0] and caught.file == str(path)


def test_the_documented_keys_load_with_yaml_types():
    registry = parse_registry(yaml.safe_load(
        "bcodmo: {modified: 2015-06-01, void: 'https://lod.bco-dmo.org/void.ttl', allow_private: false, max_dump_bytes: 1000}\n"
        f"md: {{harvest: {OAI}, mapping: qdc, mapping_overrides: {{dataProvider: {{value: X}}}}, engine: auto,\n"
        "     engine_threshold: 5000, quality: {max_count_drop: 0.15, max_failure_rate: 1}, schedule: false, resourcesync: {}}\n"
        "k2n: {repository: {template_index: 'https://x', default_language: de, start: 2009-01-01}}\n"
    ), "r.yaml")
    md, bcodmo, k2n = registry["md"].settings, registry["bcodmo"].settings, registry["k2n"].settings
    assert md.engine_threshold == 5000 and md.schedule is False and md.quality.max_failure_rate == 1.0
    assert md.resourcesync.publish_outputs is False and registry.providers_of("records") == ["md"]
    assert bcodmo.allow_private is False and bcodmo.max_dump_bytes == 1000
    assert k2n.repository.start == datetime(2009, 1, 1) and k2n.repository.source == "https://x"


def test_an_entry_made_in_code_is_checked_the_same_way():
    with pytest.raises(ConfigError, match=r"registry key 'x.harvest.full': Input should be a valid boolean \(given 'yes'\)"):
        ProviderEntry("x", {"harvest": {"type": "oai", "endpoint": "https://h.org/oai", "full": "yes"}})


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


def test_enrichment_block_is_typed():
    registry = parse_registry(yaml.safe_load(
        "mdl: {enrichment: {skip: [strip_ending_period, cleanup_ending_punctuation], dates: parse_date}}\n"
        "cdl: {mapping: cdl}"), "r.yaml")
    settings = registry["mdl"].settings.enrichment
    assert settings.skip == ["strip_ending_period", "cleanup_ending_punctuation"] and settings.dates == "parse_date"
    assert registry["cdl"].settings.enrichment.skip == [] and registry["cdl"].settings.enrichment.dates == "date_builder"
    for bad, key in (("{skip: [strip_periods]}", "mdl.enrichment.skip"), ("{skip: dates}", "mdl.enrichment.skip"),
                     ("{dates: edtf}", "mdl.enrichment.dates"), ("{keep: [title]}", "mdl.enrichment.keep")):
        with pytest.raises(ConfigError, match=f"registry key '{re.escape(key)}'"):
            parse_registry(yaml.safe_load(f"mdl: {{enrichment: {bad}}}"), "r.yaml")["mdl"]  # refused: asking raises


def test_a_private_delivery_placeholder_is_refused_naming_what_to_fill_in():
    """A shipped hub's placeholder (``delivery: private``) loads in the package's registry of hubs; in an operator's
    registry the entry is refused, naming the key and what the hub puts there, and the others run on."""
    placeholder = {"type": "file", "format": "jsonl", "id_path": "uuid", "path": "s3://your-bucket/nypl/",
                   "delivery": "private", "fill_in": {"path": "the S3 prefix NYPL's export zip is copied to"}}
    data = {"nypl": {"harvest": placeholder}, "ok": {"harvest": {**placeholder, "delivery": "public", "fill_in": {}}}}
    assert sorted(parse_registry(data, "hubs.yaml", shipped=True)) == ["nypl", "ok"]
    registry = parse_registry(data, "registry.yaml")
    assert sorted(registry) == ["ok"]
    with pytest.raises(ConfigError, match=re.escape(
            "registry key 'nypl.harvest.path': needs your delivery location: the S3 prefix NYPL's export zip is "
            "copied to (provider 'nypl', file 'registry.yaml')")):
        registry["nypl"]
    for bad, message in (({"fill_in": {}}, "delivery: private and fill_in"),
                         ({"delivery": "public"}, "delivery: private and fill_in"),
                         ({"fill_in": {"params.q": "x"}}, "fill_in names 'params.q', which the block does not hold")):
        with pytest.raises(ConfigError, match=re.escape(message)):
            ProviderEntry("nypl", {"harvest": {**placeholder, **bad}})
