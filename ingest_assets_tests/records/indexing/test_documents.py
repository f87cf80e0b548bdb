"""IndexRecord documents built from MAPRecords, checked against DPLA's own search documents."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest_assets.core.errors import ValidationError
from ingest_assets.records.indexing import deletion_record, index_record
from ingest_assets.records.indexing.documents import dumps


def test_document_matches_dpla_api_item(map_records, dpla_sources):
    usc, source = map_records[0], dpla_sources[0]
    record = index_record(usc)
    doc = json.loads(record["document"])
    assert record["id"] == "4d85a6bd965dde8352c8235c43fe1c44" and record["deleted"] is False
    for key in ("id", "@id", "@context", "@type", "aggregatedCHO", "ingestDate", "ingestType", "isShownAt", "object"):
        assert doc[key] == source[key], key
    assert doc["ingestDate"] == "2022-01-18T20:18:54.259Z"
    assert doc["provider"] == {"name": "California Digital Library"}
    assert doc["dataProvider"] == {"name": "University of Southern California Digital Library"}
    sr, expected = doc["sourceResource"], source["sourceResource"]
    assert sr["@id"] == expected["@id"] == "http://dp.la/api/items/4d85a6bd965dde8352c8235c43fe1c44#SourceResource"
    for key in ("title", "creator", "description", "extent", "format", "identifier", "publisher", "relation",
                "rights", "spatial", "subject", "type", "collection", "date", "temporal"):
        assert sr[key] == expected[key], key
    assert "originalRecord" not in doc and "preview" not in doc


def test_provider_uri_gives_the_provider_as_dpla_documents_have_it(map_records, dpla_sources):
    for record, source in zip(map_records, dpla_sources):
        doc = json.loads(index_record({**record, "providerUri": source["provider"]["@id"]})["document"])
        assert doc["provider"] == source["provider"]


def test_legacy_single_values_and_languages(map_records, dpla_sources):
    unt, kentucky = (json.loads(index_record(r)["document"]) for r in map_records[1:])
    assert unt["sourceResource"]["subject"][0] == {
        "name": "Williams, Byrd M. (Byrd Moore), IV, 1951- -- Photograph collections",
        "scheme": "http://id.loc.gov/authorities#conceptscheme",
    }
    # DPLA stored the label as its own "code"; ISO 639-3 knows it as zxx
    assert unt["sourceResource"]["language"] == [{"name": "No linguistic content", "iso639_3": "zxx"}]
    assert kentucky["sourceResource"]["language"] == [{"name": "English", "iso639_3": "eng"}]
    assert kentucky["sourceResource"]["date"] == [{"begin": "1906", "end": "1906", "displayDate": "1906"}]
    assert kentucky["sourceResource"]["creator"] == ["Paducah sun (Paducah, Ky. : 1898)"]
    assert kentucky["provider"] == {"name": "Kentucky Digital Library"}
    assert kentucky["ingestDate"] == "2019-09-23T16:39:08.052Z"


def test_document_bytes_are_deterministic_and_compact(map_records):
    record = map_records[2]
    shuffled = dict(reversed(list(copy.deepcopy(record).items())))
    shuffled["sourceResource"] = dict(reversed(list(shuffled["sourceResource"].items())))
    document = index_record(record)["document"]
    assert index_record(shuffled)["document"] == document
    parsed = json.loads(document)
    assert document == json.dumps(parsed, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    assert list(parsed) == sorted(parsed) and list(parsed["sourceResource"]) == sorted(parsed["sourceResource"])


def test_ingest_date_seconds_and_empty_values_dropped(map_records):
    record = copy.deepcopy(map_records[2])
    record["ingestDate"] = 1569256748
    record["object"] = None
    record["sourceResource"]["description"] = ["", "  "]
    record["rightsStatement"] = "http://rightsstatements.org/vocab/InC/1.0/"
    record["hasView"] = ["http://nyx.uky.edu/dips/xt7cnp1wfn5x/data/0358/0358.jpg"]
    doc = json.loads(index_record(record)["document"])
    assert doc["ingestDate"] == "2019-09-23T16:39:08.000Z"
    assert "object" not in doc and "description" not in doc["sourceResource"]
    assert doc["rights"] == "http://rightsstatements.org/vocab/InC/1.0/"
    assert doc["hasView"] == [{"@id": "http://nyx.uky.edu/dips/xt7cnp1wfn5x/data/0358/0358.jpg"}]


@pytest.mark.parametrize("field, value, message", [
    ("id", "", "record id must be a non-empty string"),
    ("id", "x" * 513, "longer than 512 bytes"),
    ("id", "broken \ud800 id", "record id is not writable as UTF-8"),
    ("isShownAt", None, "has no isShownAt"),
    ("provider", ["a", "b"], "provider must be a string or an agent"),
    ("ingestDate", "2019-09-23", "ingestDate must be a UNIX timestamp"),
])
def test_bad_map_record_names_provider_and_record(map_records, field, value, message):
    record = copy.deepcopy(map_records[2])
    record[field] = value
    with pytest.raises(ValidationError, match=message) as caught:
        index_record(record)
    if field not in ("id", "provider"):
        assert "record '7781509fd5609a093a5c58dcf5017d4d'" in str(caught.value)
        assert "provider 'Kentucky Digital Library'" in str(caught.value)


def test_missing_title_is_rejected(map_records):
    record = copy.deepcopy(map_records[0])
    record["sourceResource"]["title"] = []
    with pytest.raises(ValidationError, match="has no sourceResource.title"):
        index_record(record)


def test_deletion_record():
    assert deletion_record("7781509fd5609a093a5c58dcf5017d4d") == {
        "id": "7781509fd5609a093a5c58dcf5017d4d", "document": "", "deleted": True,
    }
    with pytest.raises(ValidationError):
        deletion_record("")
    with pytest.raises(ValidationError, match="not writable as UTF-8"):
        deletion_record("gone \ud800")


def test_index_languages_agree_with_enrichment():
    """The index reads languages through enrichment's table (ingestion3's): enriched names and the codes a record
    that was not enriched may still hold give the same name, with the ISO 639-3 code of that name."""
    from ingest_assets.records.enrichment.vocabularies import language_name
    from ingest_assets.records.indexing.documents import _language

    for value in ("en-US", "English", "fre", "Hawaiian", "eng"):
        name = language_name(value)
        assert _language(value) == _language(name) == {"name": name, "iso639_3": _language(name)["iso639_3"]}
    assert _language("eng")["iso639_3"] == "eng" and _language("fre")["iso639_3"] == "fra"
    assert _language("Klingon-ish") == {"name": "Klingon-ish"}


def test_the_iiif_manifest_is_at_the_top_level_as_dpla_documents_carry_it(map_records, dpla_sources):
    carried = [(r, s) for r, s in zip(map_records, dpla_sources) if s.get("iiifManifest")]
    assert carried  # the UNT search hit has one
    for record, source in carried:
        doc = json.loads(index_record({**record, "iiifManifest": source["iiifManifest"]})["document"])
        assert doc["iiifManifest"] == source["iiifManifest"]
    assert "iiifManifest" not in json.loads(index_record(map_records[0])["document"])


def test_map_records_written_before_the_extension_fields_stay_readable(map_records):
    """iiifManifest, originalId, dplaUri, mediaMaster and tags are defaulted: an output written without them reads,
    indexes and is written again with the current schema."""
    import io

    import fastavro

    from ingest_assets.storage.avro import MAP_RECORD, load_schema

    current = load_schema(MAP_RECORD)
    added = ("iiifManifest", "originalId", "dplaUri", "mediaMaster", "tags")
    older = {**current, "fields": [f for f in current["fields"] if f["name"] not in added]}
    record = {k: v for k, v in map_records[0].items() if k not in added}
    written = io.BytesIO()
    fastavro.writer(written, fastavro.parse_schema(older), [record])
    written.seek(0)
    (as_written,) = fastavro.reader(written)
    written.seek(0)
    (as_current,) = fastavro.reader(written, reader_schema=fastavro.parse_schema(current))
    assert [as_current[name] for name in added] == [None] * len(added)
    assert index_record(as_written)["document"] == index_record(as_current)["document"]
    again = io.BytesIO()
    fastavro.writer(again, fastavro.parse_schema(current), [as_written])  # enrichment re-run on an old mapping


def test_media_masters_are_at_the_top_level_as_dpla_documents_carry_them(map_records, shared_fixtures):
    published = json.loads((shared_fixtures / "dpla-published" / "northwest-heritage-084fd481.json").read_text())
    doc = json.loads(index_record({**map_records[0], "mediaMaster": published["mediaMaster"]})["document"])
    assert doc["mediaMaster"] == published["mediaMaster"] and len(doc["mediaMaster"]) == 1
    assert "mediaMaster" not in json.loads(index_record({**map_records[0], "mediaMaster": []})["document"])


_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)  # any text a UTF-8 record can hold


@settings(max_examples=300, deadline=None)
@given(st.recursive(_TEXT, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
                    max_leaves=20))
def test_document_text_is_the_stdlib_json_text(value):
    """orjson writes what ``json.dumps(ensure_ascii=False, separators=(",", ":"), sort_keys=True)`` did: stored
    IndexRecords and their content hashes do not change with the encoder."""
    document = {"sourceResource": value, "id": "x"}
    assert dumps(document) == json.dumps(document, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def test_a_lone_surrogate_is_a_validation_error_naming_the_record(map_records):
    record = copy.deepcopy(map_records[2])
    record["sourceResource"]["title"] = ["broken \ud800 title"]  # what json.loads gives for a JSON hub's "\ud800"
    with pytest.raises(ValidationError, match="not writable as JSON") as caught:
        index_record(record)
    assert caught.value.record == json.loads(index_record(map_records[2])["document"])["id"]
