"""Field-by-field mapping of real provider records (oai_dc, CONTENTdm QDC, MODS) from the shared fixtures."""

from __future__ import annotations

import hashlib
import io

import fastavro
import pytest
from fastavro.validation import validate

from ingest_assets.records.mapping import mapper_for
from ingest_assets.core.registry import ProviderEntry

MARYLAND_ID = "oai:collections.digitalmaryland.org:mamo/29817"


def names(entities):
    return [e["name"] for e in entities]


@pytest.fixture
def maryland(originals):
    (original,) = originals("dpla/provider-maryland-cdm-oai_qdc-record.xml", "maryland")
    return original


def test_maryland_qdc_field_by_field(maryland, map_schema):
    mapper = mapper_for(ProviderEntry("maryland", {"mapping": "qdc", "label": "Digital Maryland"}))
    result = mapper.map(maryland)
    assert result.messages == []
    record = result.record
    assert validate(record, map_schema, raise_errors=True)

    assert record["id"] == hashlib.md5(f"maryland--{MARYLAND_ID}".encode()).hexdigest()
    assert record["ingestType"] == "item"
    assert record["ingestDate"] == 1700000000
    assert record["originalRecord"] == maryland["document"]
    assert record["provider"] == "Digital Maryland"
    assert record["dataProvider"] == "Maryland State Archives"  # first ';' value of dc:source
    assert record["isShownAt"] == "http://collections.digitalmaryland.org/cdm/ref/collection/mamo/id/29817"
    assert record["object"] is None
    assert record["preview"] == record["isShownAt"]
    assert record["rightsStatement"] == "http://rightsstatements.org/vocab/NoC-OKLR/1.0/"  # trailing space gone
    assert record["title"] is None

    sr = record["sourceResource"]
    assert sr["title"] == ["Lieutenant Governor Anthony Brown at the Winning with Asthma Program Kick Off Event"]
    assert names(sr["contributor"]) == [
        "Hayden, Edwin Parsons, 1811-1850", "Jessop, Charles", "Jessop, William", "Shipley, Nathan",
    ]
    assert names(sr["creator"]) == ["O'Dell, Mark"]
    assert sr["creator"][0]["providedLabel"] == "O'Dell, Mark"
    assert names(sr["subject"]) == [
        "Brown, Anthony G., 1961-", "Governors--Maryland", "Maryland--Politics and government", "Asthma",
    ]
    assert names(sr["publisher"]) == ["Alfred A. Knopf, Inc."]
    assert sr["description"] == [
        "Photograph of Lieutenant Governor Anthony Brown at the Winning with Asthma Program Kick Off Event "
        "on October 21, 2008."
    ]
    assert sr["date"] == [{"providedLabel": ["2008-10-21"], "begin": None, "end": None}]
    assert sr["temporal"] == [{"providedLabel": ["1970-1979"], "begin": None, "end": None}]
    assert sr["type"] == ["Image"]
    assert sr["format"] == ["Color digital photograph/jpeg"]
    assert sr["identifier"] == ["mamo036830", record["isShownAt"]]
    assert sr["language"] == ["English"]
    assert len(sr["rights"]) == 1 and sr["rights"][0].startswith("This work is licensed under a Creative Commons")
    assert sr["spatial"] is None and sr["collection"] is None and sr["extent"] is None


def test_montana_mods_getrecord_field_by_field(originals, map_schema):
    (original,) = originals("dpla/provider-montana-repox-getrecord-mods.xml", "mt")
    result = mapper_for(ProviderEntry("mt", {"mapping": "mods", "label": "Big Sky Country Digital Network"})).map(
        original
    )
    assert result.messages == []
    record = result.record
    assert validate(record, map_schema, raise_errors=True)
    local_id = "oai:the.european.library.UMr8:oai:scholarworks.umt.edu:goedicke-1008"
    assert record["id"] == hashlib.md5(f"mt--{local_id}".encode()).hexdigest()
    assert record["dataProvider"] == "University of Montana--Missoula. Mansfield Library"  # note type=ownership
    assert record["isShownAt"] == "https://scholarworks.umt.edu/goedicke/9"
    assert record["object"] == "https://scholarworks.umt.edu/goedicke/1008/thumbnail.jpg"
    assert record["preview"] == record["object"]
    assert record["provider"] == "Big Sky Country Digital Network"
    assert record["rightsStatement"] is None
    sr = record["sourceResource"]
    assert sr["title"] == ["Reading notes for 2nd Wind 2001"]
    assert names(sr["creator"]) == ["Goedicke, Patricia"]
    assert sr["contributor"] is None
    assert sr["description"] == ["Description"]  # note type=content, not the ownership note
    assert sr["date"] == [{"providedLabel": ["2001-10-07T07:00:00Z"], "begin": None, "end": None}]
    assert sr["extent"] == ["Extent"]
    assert sr["format"] == ["Format", "jpeg"]
    assert names(sr["publisher"]) == ["Publisher"]
    assert names(sr["subject"]) == [
        "Patricia Goedicke", "American literature--Montana", "American literature--20th century", "documents",
    ]
    assert names(sr["spatial"]) == ["Geographic"]
    assert sr["collection"] == [{"title": "Collection Title", "description": None}]
    assert sr["type"] == ["text"]
    assert sr["rights"][0].startswith("Copyright to this collection is held by the Maureen and Mike Mansfield")


def test_harvard_librarycloud_mods_page(originals, map_schema):
    records = originals("oai-pmh/harvard-librarycloud-listrecords-mods-resumption.xml", "harvard")
    mapper = mapper_for(ProviderEntry("harvard", {"mapping": "mods"}))
    results = [mapper.map(original) for original in records]
    assert [r.messages for r in results] == [[]] * 10
    first = results[0].record
    assert validate(first, map_schema, raise_errors=True)
    assert first["provider"] == "harvard"  # no label: the registry name
    assert first["dataProvider"] == "Arnold Arboretum Library (Cambridge), Botany Libraries, Harvard University"
    assert first["isShownAt"] == "https://id.lib.harvard.edu/curiosity/botanical-illustrations/62-arn00007c00001"
    assert first["object"] == "https://nrs.harvard.edu/urn-3:FMUS.ARN:37524536?width=150"
    assert first["hasView"] == ["https://nrs.harvard.edu/urn-3:FMUS.ARN:37524535"]
    sr = first["sourceResource"]
    assert sr["title"] == ["Plate 1. Clematis cylindrica"]
    assert sr["description"] == ["Full color. Reproduced in Herbier Général, page 70, by Mme. Deville, Aumont."]
    assert sr["language"] == ["und"]  # the coded languageTerm wins over the text one
    assert sr["identifier"] == ["arn00007c00001"]  # the record's own, not the host collection's
    assert sr["collection"] == [{"title": "Alfred Riocreux botanical watercolors", "description": None}]
    assert sr["creator"] is None  # the creator belongs to the host collection, not the item
    assert sr["rights"][0].startswith("The collection is available by appointment for research.")
    # ids differ per record and follow the header identifiers
    assert len({r.record["id"] for r in results}) == 10
    assert results[3].record["id"] == hashlib.md5(b"harvard--arn00007c00004").hexdigest()
    assert results[3].record["sourceResource"]["title"] == ["Plate 4. Sollya heterophylla"]

    buffer = io.BytesIO()  # the records survive an Avro round trip unchanged
    fastavro.writer(buffer, map_schema, [r.record for r in results], codec="deflate")
    buffer.seek(0)
    defaulted = {"providerExactMatch": None, "dataProviderUri": None, "dataProviderExactMatch": None, "tags": None}  # enrichment's
    assert list(fastavro.reader(buffer)) == [{**r.record, **defaulted} for r in results]


def test_zenodo_oai_dc_fails_without_data_provider_then_maps_with_override(originals, map_schema):
    records = originals("oai-pmh/zenodo-listrecords-oai_dc.xml", "zenodo")
    default = mapper_for(ProviderEntry("zenodo", {"mapping": "oai_dc"})).map(records[0])
    assert default.record is None and default.failed
    (message,) = default.messages
    assert (message.kind, message.field, message.record) == ("missing_required", "dataProvider", "oai:zenodo.org:13841")
    assert "required" in message.reason

    mapper = mapper_for(ProviderEntry("zenodo", {
        "mapping": "oai_dc", "label": "Zenodo", "mapping_overrides": {"dataProvider": {"value": "Zenodo"}},
    }))
    record = mapper.map(records[0]).record
    assert validate(record, map_schema, raise_errors=True)
    assert record["id"] == hashlib.md5(b"zenodo--oai:zenodo.org:13841").hexdigest()
    assert record["dataProvider"] == "Zenodo"
    assert record["isShownAt"] == "http://zenodo.org/record/13841"
    assert record["preview"] == "http://zenodo.org/record/13841"
    sr = record["sourceResource"]
    assert sr["title"] == [
        "Einsatz von Forschungsinformationssystemen an Universitäten und Hochschulen mit Promotionsrecht in "
        "Deutschland. Ergebnisbericht"
    ]
    assert names(sr["creator"]) == ["Sticht, Kendra"]
    assert sr["date"][0]["providedLabel"] == ["2015-01-08"]
    assert sr["identifier"] == ["http://zenodo.org/record/13841", "doi:10.5281/zenodo.13841"]
    assert sr["rights"] == ["info:eu-repo/semantics/openAccess"]
    assert sr["type"] == ["info:eu-repo/semantics/article"]
    assert sr["publisher"] is None  # <dc:publisher/> is empty
    assert sr["description"][0].startswith("<p>Ergebnisse aus der Masterthesis &bdquo;")  # raw: enrichment cleans
    assert all(mapper.map(r).record is not None for r in records)


def test_cyberleninka_has_no_rights_and_gets_them_from_overrides(originals, map_schema):
    records = originals("oai-pmh/cyberleninka-listrecords-cyrillic-dcterms.xml", "cyberleninka")
    assert len(records) == 54
    failed = mapper_for(ProviderEntry("cyberleninka", {"mapping": "oai_dc"})).map(records[0])
    assert [(m.kind, m.field) for m in failed.messages] == [("missing_required", "rights")]

    mapper = mapper_for(ProviderEntry("cyberleninka", {"mapping": "oai_dc", "mapping_overrides": {
        "rightsStatement": {"value": "http://rightsstatements.org/vocab/CNE/1.0/"},
        "dataProvider": {"value": "CyberLeninka"},
        "object": {"xpath": "dc:identifier[@linktype='thumbnail']"},
        "isShownAt": {"xpath": "dc:identifier[@linktype='fulltext']"},
    }}))
    record = mapper.map(records[0]).record
    assert validate(record, map_schema, raise_errors=True)
    assert record["dataProvider"] == "CyberLeninka"
    assert record["rightsStatement"] == "http://rightsstatements.org/vocab/CNE/1.0/"
    assert record["sourceResource"]["rights"] == []
    assert record["isShownAt"] == (
        "http://cyberleninka.ru/article/n/o-vychislenii-postoyannyh-vhodyaschih-v-otsenki-lineynyh-form"
    )
    assert record["object"] == record["preview"] == "http://cyberleninka.ru/article_covers/14074026.png"
    sr = record["sourceResource"]
    assert sr["title"] == ["О ВЫЧИСЛЕНИИ ПОСТОЯННЫХ, ВХОДЯЩИХ В ОЦЕНКИ ЛИНЕЙНЫХ ФОРМ"]
    assert names(sr["creator"]) == ["ИВАНКОВ П.Л."]
    assert sr["subject"] is None  # <dc:subject></dc:subject> is empty
    assert sr["format"] == ["text/html"]
    assert sum(mapper.map(r).record is not None for r in records) == 54


def test_collection_records_map_alongside_items(originals, map_schema):
    (item,) = originals("dpla/provider-montana-repox-getrecord-mods.xml", "mt")
    collection = {**item, "id": item["id"] + "-collection", "document": item["document"].replace(
        "<typeOfResource>text</typeOfResource>", '<typeOfResource collection="yes">text</typeOfResource>')}
    assert collection["document"] != item["document"]
    mapper = mapper_for(ProviderEntry("mt", {"mapping": "mods"}))
    as_item, as_collection = mapper.map(item).record, mapper.map(collection).record
    assert (as_item["ingestType"], as_item["title"]) == ("item", None)
    assert as_collection["ingestType"] == "collection"
    assert as_collection["title"] == "Reading notes for 2nd Wind 2001"  # MAP's record-level title: collections only
    assert as_collection["sourceResource"]["title"] == ["Reading notes for 2nd Wind 2001"]
    assert validate(as_collection, map_schema, raise_errors=True)

    wrong = mapper_for(ProviderEntry("mt", {"mapping": "mods", "mapping_overrides": {"ingestType": {"value": "series"}}}))
    result = wrong.map(item)
    assert result.record["ingestType"] == "item"
    assert [(m.kind, m.field, m.value) for m in result.messages] == [("invalid_value", "ingestType", "series")]


def test_dc_type_collection_marks_a_collection_record(originals):
    records = originals("oai-pmh/zenodo-listrecords-oai_dc.xml", "zenodo")
    mapper = mapper_for(ProviderEntry("zenodo", {"mapping": "oai_dc",
                                                 "mapping_overrides": {"dataProvider": {"default": "Zenodo"}}}))
    first = records[0]
    assert "<dc:type>" in first["document"]
    document = first["document"].replace("<dc:type>", "<dc:type>Collection</dc:type><dc:type>", 1)
    record = mapper.map({**first, "document": document}).record
    assert record["ingestType"] == "collection" and record["title"] == record["sourceResource"]["title"][0]
    assert record["dataProvider"] == "Zenodo"  # the default a hub sets once for the provider
    assert mapper.map(first).record["ingestType"] == "item"


def test_qdc_is_part_of_is_the_collection(maryland):
    document = maryland["document"].replace(
        "<dcterms:temporal>", "<dcterms:isPartOf>Maryland State Archives Special Collections; Photographs"
        "</dcterms:isPartOf><dcterms:temporal>", 1)
    assert document != maryland["document"]
    sr = mapper_for(ProviderEntry("maryland", {"mapping": "qdc"})).map({**maryland, "document": document}).record[
        "sourceResource"]
    assert [c["title"] for c in sr["collection"]] == ["Maryland State Archives Special Collections", "Photographs"]
    assert sr["relation"] is None
