"""A hub's own profiles in the pipeline: a registry entry naming a profile file, a profiles folder from the settings
(``INGEST_PROFILES``) extending the shipped profiles and vocabularies, the hub settings a registry entry overrides,
and everything refused when the registry loads, naming entry and file."""

from __future__ import annotations

import hashlib

import pytest

from ingest_assets.core.errors import ConfigError
from ingest_assets.core.registry import load_registry
from ingest_assets.core.settings import Settings
from ingest_assets.defs.resources import RegistryResource
from ingest_assets.records.mapping import check_registry, mapper_for, minter_for

MUSEUM = """
description: Example museum object export
source: xml
namespaces: {m: 'urn:example:museum'}
root: [m:object]
id: {xpath: '@id'}
provider: {label: Example Museums Hub, uri: 'http://dp.la/api/contributor/museums', id_prefix: museums}
fields:
  title: {xpath: m:name}
  type: {xpath: m:kind, lookup: museum-kinds}
  isShownAt: {xpath: m:link, first: true}
  rights: {value: Free to use}
  dataProvider: {default: Example Museum}
"""
KINDS = "description: the museum's object kinds as DPLA types\ntable: {Textile: physical object, Photo: image}\n"
RECORD = ('<m:object xmlns:m="urn:example:museum" id="1987.12"><m:name>Quilt</m:name><m:kind>Textile</m:kind>'
          '<m:link>https://collections.example.org/objects/1987.12</m:link></m:object>')


def original(local_id: str = "1987.12") -> dict:
    return {"id": local_id, "ingestDate": 1, "document": RECORD, "mimetype": "application_xml"}


@pytest.fixture
def profiles(tmp_path, monkeypatch):
    """A profiles folder named by INGEST_PROFILES (the settings read again), with a vocabulary of its own."""
    folder = tmp_path / "profiles"
    (folder / "vocabularies").mkdir(parents=True)
    (folder / "vocabularies" / "museum-kinds.yaml").write_text(KINDS)
    monkeypatch.setenv("INGEST_PROFILES", str(folder))
    Settings.current.cache_clear()
    yield folder
    Settings.current.cache_clear()


def registry_file(tmp_path, text: str):
    path = tmp_path / "registry.yaml"
    path.write_text(text)
    return path


def test_a_profile_of_the_profiles_folder_maps_with_its_own_vocabulary(profiles, tmp_path):
    (profiles / "museum.yaml").write_text(MUSEUM)
    path = registry_file(tmp_path, "museum: {mapping: museum}\n")
    registry = RegistryResource(path=str(path)).load()  # checked: profiles compile
    record = mapper_for(registry["museum"]).map(original()).record
    assert record["sourceResource"]["type"] == ["physical object"]  # the folder's vocabulary
    assert record["provider"] == "Example Museums Hub" and record["providerUri"] == "http://dp.la/api/contributor/museums"
    assert record["id"] == hashlib.md5(b"museums--1987.12").hexdigest() == minter_for(registry["museum"])("1987.12")
    assert record["originalId"] == "1987.12" and record["dplaUri"] == f"http://dp.la/api/items/{record['id']}"


def test_a_registry_entry_names_a_profile_file_and_overrides_the_hub(profiles, tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "museum-export.yaml").write_text(MUSEUM)
    path = registry_file(tmp_path, (
        "museum:\n  mapping: mine/museum-export.yaml\n  label: Riverside Museum\n"
        "  provider_uri: 'https://hub.example.org/riverside'\n  id_prefix: false\n"
    ))
    entry = load_registry(path)["museum"]
    record = mapper_for(entry).map(original()).record
    assert (record["provider"], record["providerUri"]) == ("Riverside Museum", "https://hub.example.org/riverside")
    assert record["id"] == hashlib.md5(b"1987.12").hexdigest()  # id_prefix: false, as ingestion3's useProviderName


@pytest.mark.parametrize(("folder_files", "registry", "needle", "names"), [
    ({}, "museum: {mapping: museum}\n", "registry key 'museum.mapping': unknown mapping 'museum'", "registry"),
    ({}, "museum: {mapping: nowhere/museum.yaml}\n", "cannot read the profile", "nowhere/museum.yaml"),
    ({"museum.yaml": MUSEUM.replace("lookup: museum-kinds", "lookup: kinds")}, "museum: {mapping: museum}\n",
     "mapping rule for 'type': unknown vocabulary 'kinds'", "museum.yaml"),
    ({"museum.yaml": MUSEUM}, "museum: {mapping: museum, mapping_overrides: {title: {xpath: 'm:name', clean: shout}}}\n",
     "title", "registry"),
    ({"qdc.yaml": MUSEUM}, "museum: {mapping: oai_dc}\n", "'qdc' is shipped already", "qdc.yaml"),
    ({"vocabularies/dcmi-types.yaml": KINDS}, "museum: {mapping: oai_dc}\n", "'dcmi-types' is shipped already",
     "dcmi-types.yaml"),
])
def test_a_bad_profile_or_rule_is_refused_when_the_registry_loads(profiles, tmp_path, folder_files, registry, needle, names):
    for name, text in folder_files.items():
        (profiles / name).write_text(text)
    path = registry_file(tmp_path, registry)
    with pytest.raises(ConfigError) as caught:
        RegistryResource(path=str(path)).load()["museum"]
    message = str(caught.value)
    assert needle in message
    assert (str(path) if names == "registry" else names) in message


def test_entries_without_a_mapping_are_not_checked(tmp_path):
    registry = load_registry(registry_file(tmp_path, "lod: {void: 'https://example.org/void.ttl'}\n"))
    check_registry(registry)  # nothing to compile, nothing refused


def test_a_refused_entry_stops_only_itself(tmp_path):
    path = registry_file(tmp_path, "bad: {mapping: marc}\ngood: {mapping: oai_dc}\n")
    registry = RegistryResource(path=str(path)).load()
    assert list(registry) == ["good"] and "unknown mapping 'marc'" in str(registry.problems["bad"])
    assert mapper_for(registry["good"]).profile.name == "oai_dc"
