"""The Elasticsearch mapping (ingest_assets/schemas/search-dpla-map4-mapping.json) covers every field documents carry."""

from __future__ import annotations

import copy
import json

import pytest

from ingest_assets.records.indexing import index_record


@pytest.fixture(scope="module")
def mapping(mapping_file) -> dict:
    return json.loads(mapping_file.read_text("utf-8"))


def field_paths(value, prefix="") -> set[str]:
    """Dotted paths of every leaf value (lists are transparent, as in Elasticsearch)."""
    if isinstance(value, list):
        return set().union(*(field_paths(item, prefix) for item in value)) if value else set()
    if isinstance(value, dict):
        return set().union(*(field_paths(item, f"{prefix}{key}.") for key, item in value.items()))
    return {prefix.rstrip(".")}


def mapped(properties: dict, path: str) -> dict | None:
    head, _, rest = path.partition(".")
    spec = properties.get(head)
    if spec is None or not rest:
        return spec
    return mapped(spec.get("properties", {}), rest)


def every_field_record(record: dict) -> dict:
    """A MAPRecord with every optional MAP4 field filled in (coordinates, rightsHolder, hasView...)."""
    full = copy.deepcopy(record)
    agent = {"name": "Kentucky Historical Society", "providedLabel": "KHS", "note": None, "inScheme": None,
             "exactMatch": None, "closeMatch": None}
    full.update(intermediateProvider=["Kentucky Virtual Library"], hasView=["http://nyx.uky.edu/a.jpg"],
                mediaMaster=["http://nyx.uky.edu/a.tif"], tags=["kentucky"],
                rightsStatement="http://rightsstatements.org/vocab/NoC-US/1.0/")
    full["sourceResource"].update(
        alternative=["Paducah evening sun"], contributor=[agent], rightsHolder=[agent], publisher=[agent],
        genre=[{**agent, "name": "Newspapers"}], isReplacedBy=["sn 85052118"], replaces=["sn 85052117"],
        relation=["http://nyx.uky.edu/dips/xt7cnp1wfn5x"], extent=["1 page"], identifier=["xt7cnp1wfn5x_1"],
        description=["Front page"], collection=[{"title": "Kentucky newspapers", "description": "Daily papers"}],
        temporal=[{"providedLabel": ["1906"], "begin": "1906-01-01", "end": "1906-12-31"}],
        spatial=[{"name": "Paducah, Ky.", "city": "Paducah", "county": "McCracken County", "state": "Kentucky",
                  "country": "United States", "region": "South", "coordinates": "37.0834, -88.6000"}],
    )
    return full


def test_every_document_field_is_mapped(mapping, map_records):
    documents = [json.loads(index_record(r)["document"]) for r in [*map_records, every_field_record(map_records[2])]]
    paths = set().union(*(field_paths(document) for document in documents))
    assert {"sourceResource.spatial.coordinates", "sourceResource.rightsHolder", "mediaMaster", "tags"} <= paths
    unmapped = sorted(path for path in paths if mapped(mapping["mappings"]["properties"], path) is None)
    assert unmapped == []


def test_mapping_is_strict_about_what_it_indexes(mapping):
    properties = mapping["mappings"]["properties"]
    assert mapping["mappings"]["dynamic"] is False
    assert properties["ingestDate"] == {"type": "date"}
    assert mapped(properties, "sourceResource.date.begin")["ignore_malformed"] is True
    assert mapped(properties, "sourceResource.spatial.coordinates")["type"] == "geo_point"


def test_default_search_fields_and_analyzers_exist(mapping):
    settings, properties = mapping["settings"]["index"], mapping["mappings"]["properties"]
    for path in settings["query"]["default_field"]:
        assert mapped(properties, path)["type"] in ("text", "keyword"), path
    analyzers = set(settings["analysis"]["analyzer"])
    assert set(analyzers_used(properties)) == analyzers


def analyzers_used(spec) -> list[str]:
    if isinstance(spec, dict):
        own = [spec["analyzer"]] if isinstance(spec.get("analyzer"), str) else []
        return own + [name for item in spec.values() for name in analyzers_used(item)]
    return []
