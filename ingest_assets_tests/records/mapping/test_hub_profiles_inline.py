"""Hub profiles on the records ingestion3's tests build inline (IaMappingTest's titles and default data provider,
P2PMappingTest's MODS records, which have no fixture file, SiMappingTest's EDAN variations) and on realistic records
where ingestion3 has no test; the fixture records themselves are checked by the parity data (``parity/<hub>.yaml``,
``test_parity.py``)."""

from __future__ import annotations

import hashlib
import json

import pytest

from ingest_assets.core.registry import ProviderEntry
from ingest_assets.records.mapping import mapper_for
from ingest_assets.records.mapping.preview import read_inputs
from ingest_assets.records.mapping.profiles import PROFILES


def mapped(profile: str, document: dict | str, local_id: str = "1") -> dict:
    text = document if isinstance(document, str) else json.dumps(document)
    mimetype = "application_json" if text.lstrip()[:1] in "{[" else "application_xml"
    result = mapper_for(ProviderEntry(profile.replace("-", ""), {"mapping": profile})).map(
        {"id": local_id, "ingestDate": 1, "document": text, "mimetype": mimetype})
    assert result.record is not None, result.messages
    return result.record


IA_ITEM = {"identifier": "artofdyingwell00bell", "title": "The art of dying well", "mediatype": "texts"}


@pytest.mark.parametrize(("given", "titles"), [
    ({"volume": "vol 1."}, ["The art of dying well, vol 1."]),
    ({"issue": "issue", "volume": "vol 1."}, ["The art of dying well, vol 1., issue"]),
    ({"issue": "issue", "volume": "vol 1.", "title": ["The art of dying well", "Act 2"]},
     ["The art of dying well, vol 1., issue", "Act 2"]),
    ({"issue": "issue", "volume": ["vol 1.", "vol 2."], "title": ["The art of dying well", "Act 2"]},
     ["The art of dying well, vol 1., issue", "Act 2, vol 2."]),
    ({"issue": ["issue 1", "issue 1"], "volume": ["vol 1.", "vol 2."], "title": ["The art of dying well", "Act 2"]},
     ["The art of dying well, vol 1., issue 1", "Act 2, vol 2., issue 1"]),
])
def test_ia_titles_take_their_volumes_and_issues_by_position(given, titles):
    assert mapped("ia", {**IA_ITEM, **given})["sourceResource"]["title"] == titles


def test_ia_data_provider_defaults_to_the_archive_and_consortia_are_intermediate_providers():
    record = mapped("ia", {**IA_ITEM, "contributor": None, "collection": ["americana", "blc"]})
    assert record["dataProvider"] == "Internet Archive"
    assert record["intermediateProvider"] == ["Boston Library Consortium"]
    assert mapped("ia", {**IA_ITEM, "contributor": "Elms College"})["dataProvider"] == "Elms College"


def test_heartland_an_empty_rights_string_is_no_rights():
    document = {"@id": "missouri--1", "isShownAt": "https://example.org/1", "dataProvider": "Missouri State University",
                "rights": "http://rightsstatements.org/vocab/InC/1.0/",
                "sourceResource": {"title": ["t"], "rights": ""}}
    record = mapped("heartland", document, "missouri--1")
    assert record["sourceResource"]["rights"] == []
    assert record["rightsStatement"] == "http://rightsstatements.org/vocab/InC/1.0/"


def test_mississippi_primo_ranges_rights_places_and_identifier_links():
    display = {"title": ["t"], "creationdate": ["1941;1940;1942"], "type": ["text_resource"],
               "rights": ["No known restrictions;http://rightsstatements.org/vocab/NKC/1.0/"],
               "identifier": ["$$Cdcidentifier$$Vhttp://egrove.olemiss.edu/item/1;local 7"],
               "coverage": ["1940s (1940-1949);Canton (Miss.)"], "lds14": ["Madison County"],
               "lds02": ["University of Mississippi"]}
    thumbnail = {"displayLabel": "Thumbnail", "linkURL": "https://example.org/t.jpg"}
    document = {"@id": "https://example.org/pnxs/L/1", "pnx": {"display": display},
                "delivery": {"availabilityLinksUrl": [""], "link": [thumbnail]}}
    record = mapped("mississippi", document, "https://example.org/pnxs/L/1")
    sr = record["sourceResource"]
    assert [d["providedLabel"] for d in sr["date"]] == [["1940-1942"]]
    assert sr["type"] == ["text"] and sr["rights"] == ["No known restrictions"]
    assert record["rightsStatement"] == "http://rightsstatements.org/vocab/NKC/1.0/"
    # an empty delivery link: the web address among the identifiers
    assert record["isShownAt"] == "http://egrove.olemiss.edu/item/1"
    assert sr["identifier"] == ["http://egrove.olemiss.edu/item/1", "local 7"]
    assert [p["name"] for p in sr["spatial"]] == ["Madison County", "Canton (Miss.)"]
    assert record["preview"] == "https://example.org/t.jpg"


def p2p_record(mods: str, identifier: str = "oai:plains2peaks:1") -> str:
    """An OAI-PMH record as P2PMappingTest builds them (its records are written inline; there is no fixture)."""
    return (f'<record xmlns="http://www.openarchives.org/OAI/2.0/"><header><identifier>\n  {identifier}\n'
            f'</identifier></header><metadata><mods:mods xmlns:mods="http://www.loc.gov/mods/v3">{mods}'
            "<mods:titleInfo><mods:title>t</mods:title></mods:titleInfo><mods:note type='ownership'>Foo</mods:note>"
            "<mods:accessCondition type='use and reproduction'>\n http://rightsstatements.org/vocab/CNE/1.0/\n"
            "</mods:accessCondition><mods:location><mods:url usage='primary display'>"
            "http://digital.denverlibrary.org/utils/getthumbnail/collection/p15330coll22/id/75547</mods:url>"
            "</mods:location></mods:mods></metadata></record>")


P2P_CASES = [  # P2PMappingTest, assertion by assertion: (MODS, field, expected)
    ("<note type='ownership'>Bar</note>", "dataProvider", "Bar"),  # its record's note is in the OAI namespace
    ("<mods:note type='admin'>Foo</mods:note>", "intermediateProvider", ["Foo"]),
    ("<mods:location><mods:url access='preview'>http://cdm16079.contentdm.oclc.org/cdm/ref/collection/p15330coll22/"
     "id/75547</mods:url></mods:location>", "preview",
     "http://cdm16079.contentdm.oclc.org/cdm/ref/collection/p15330coll22/id/75547"),
    ("<mods:name><mods:namePart>Rinehart, A. E. (Alfred Evans)</mods:namePart><mods:role><mods:roleTerm type='text'>"
     "contributor</mods:roleTerm></mods:role></mods:name>", "contributor", ["Rinehart, A. E. (Alfred Evans)"]),
    ("<mods:name><mods:namePart>Rinehart, A. E. (Alfred Evans)</mods:namePart><mods:role><mods:roleTerm type='text'>"
     "creator</mods:roleTerm></mods:role></mods:name>", "creator", ["Rinehart, A. E. (Alfred Evans)"]),
    ("<mods:originInfo><mods:dateCreated keyDate='yes'>[1890-1900?]</mods:dateCreated></mods:originInfo>", "date",
     ["[1890-1900?]"]),
    ("<mods:abstract>Studio portrait of a boy.</mods:abstract>", "description", ["Studio portrait of a boy."]),
    ("<mods:physicalDescription><mods:extent>1 photographic print on card mount : albumen ; 21 x 10 cm. (8 1/2 x 4 in.)"
     "</mods:extent></mods:physicalDescription>", "extent",
     ["1 photographic print on card mount : albumen ; 21 x 10 cm. (8 1/2 x 4 in.)"]),
    ("<mods:recordInfo><mods:recordIdentifier>oai:prlibrary.cvlcollections.org:69</mods:recordIdentifier>"
     "</mods:recordInfo>", "identifier", ["oai:prlibrary.cvlcollections.org:69"]),
    ("<mods:language><mods:languageTerm>English</mods:languageTerm></mods:language>", "language", ["English"]),
    ("<mods:subject><mods:topic>Clothing &amp; dress--19th century</mods:topic></mods:subject><mods:subject>"
     "<mods:name>Milton Bradley</mods:name></mods:subject><mods:subject><mods:genre>Funky outfits</mods:genre>"
     "</mods:subject>", "subject", ["Clothing & dress--19th century", "Milton Bradley", "Funky outfits"]),
    ("<mods:titleInfo type='alternative'><mods:title>Alt Title</mods:title></mods:titleInfo>", "alternative",
     ["Alt Title"]),
    ("<mods:typeOfResource>Image; Sound</mods:typeOfResource>", "type", ["Image", "Sound"]),
    ("<mods:originInfo><mods:publisher>The New York Times</mods:publisher></mods:originInfo>", "publisher",
     ["The New York Times"]),
    ("<mods:physicalDescription><mods:form>Tubular Bells</mods:form></mods:physicalDescription>", "format",
     ["Tubular Bells"]),
    ("<mods:subject><mods:geographic>Bag End</mods:geographic></mods:subject>", "spatial", ["Bag End"]),
    ("<mods:relatedItem type='series'><mods:titleInfo><mods:title>Game of Thrones</mods:title></mods:titleInfo>"
     "</mods:relatedItem>", "relation", ["Game of Thrones"]),
    ("<mods:relatedItem type='host'><mods:titleInfo><mods:title>HBO Videos</mods:title></mods:titleInfo>"
     "</mods:relatedItem>", "collection", ["HBO Videos"]),
    ("<mods:location><mods:url note='iiif-manifest'>http://iiif-manifest//1</mods:url></mods:location>",
     "iiifManifest", "http://iiif-manifest//1"),
]


def _values(record: dict, field: str):
    value = record.get(field, record["sourceResource"].get(field))
    if not isinstance(value, list):
        return value
    return [v if isinstance(v, str) else v.get("name") or v.get("title") or v["providedLabel"][0] for v in value]


@pytest.mark.parametrize(("mods", "field", "expected"), P2P_CASES, ids=[case[1] for case in P2P_CASES])
def test_p2p_mods_as_its_ingestion3_test_writes_it(mods, field, expected):
    record = mapped("p2p", p2p_record(mods), "oai:plains2peaks:1")
    assert _values(record, field) == expected
    assert record["sourceResource"]["title"] == ["t"]  # an alternative title is not a title


def test_p2p_ids_data_provider_rights_and_landing_page(tmp_path):
    identifier = "oai:plains2peaks:Pine_River_2019-01:oai:prlibrary.cvlcollections.org:54"
    entry = ProviderEntry("p2p", {"mapping": "p2p"})
    (tmp_path / "p2p.xml").write_text(p2p_record("", identifier), encoding="utf-8")
    (original,) = read_inputs([str(tmp_path / "p2p.xml")], PROFILES["p2p"], entry.name)
    assert original["id"] == identifier  # the header's identifier, trimmed
    record = mapper_for(entry).map(original).record
    assert record["dplaUri"] == "http://dp.la/api/items/9314d4b80e857cbc478d9c7d281fd14e"
    assert record["dataProvider"] == "Foo"
    assert record["rightsStatement"] == "http://rightsstatements.org/vocab/CNE/1.0/"
    assert record["isShownAt"] == "http://digital.denverlibrary.org/utils/getthumbnail/collection/p15330coll22/id/75547"
    assert record["provider"] == "Plains to Peaks Collective"
    assert record["providerUri"] == "http://dp.la/api/contributor/p2p"
    assert "<record" in record["originalRecord"]


def si_doc(inner: str, indexed: str = "") -> str:
    """An EDAN record as SiMappingTest writes them inline, with what a record needs to be kept."""
    return (f"<doc><descriptiveNonRepeating><record_ID>nmah_1</record_ID><data_source>NMAH</data_source>"
            f"<title label='Title'>t</title>{inner}</descriptiveNonRepeating><indexedStructured>{indexed}"
            "</indexedStructured><freetext><creditLine label='credit line'>c</creditLine><place>Place</place>"
            "</freetext></doc>")


def si_places(indexed: str) -> list[dict]:
    return mapped("si", si_doc("", indexed))["sourceResource"]["spatial"]


def test_si_landing_page_from_the_guid_else_the_record_id():
    assert mapped("si", si_doc("<guid>http://example.com/12345</guid>"))["isShownAt"] == "http://example.com/12345"
    assert mapped("si", si_doc(""))["isShownAt"] == "http://collections.si.edu/search/results.htm?q=record_ID=nmah_1&repo=DPLA"


def test_si_places_from_geolocations_else_free_text():
    assert [p["name"] for p in si_places("")] == ["Place"]
    (country,) = si_places("<geoLocation><L2 type='Country'>Country</L2></geoLocation>")
    assert country["country"] == "Country" and country["name"] == "Country"  # MAP's Place needs a name: its parts
    (point,) = si_places("<geoLocation><points><point><latitude type='decimal'>100.1</latitude>"
                         "<longitude type='decimal'>24.2</longitude></point></points></geoLocation>")
    assert point["coordinates"] == "100.1,24.2" and point["name"] == "100.1,24.2"


def test_si_rights_from_the_media_else_the_credit_line():
    media = ("<online_media mediaCount='3'><media thumbnail='' rights='rights attr'>http://ids.si.edu/1</media>"
             "<media thumbnail='' rights='rights attr 2'>http://ids.si.edu/2</media></online_media>")
    assert mapped("si", si_doc(media))["sourceResource"]["rights"] == ["rights attr", "rights attr 2"]
    assert mapped("si", si_doc(""))["sourceResource"]["rights"] == ["c"]


@pytest.mark.parametrize(("inner", "statement"), [
    ("<objectRights label='Restrictions &amp; Rights'>\n  No Known Copyright\n</objectRights>",
     "http://rightsstatements.org/vocab/NKC/1.0/"),
    ("<media><usage><access>CC0</access></usage></media><media><usage><access>usage conditions apply</access></usage>"
     "</media>", "http://rightsstatements.org/vocab/InC/1.0/"),
    ("<media><usage><access>CC0</access></usage></media><media><usage><access>CC0</access></usage></media>",
     "http://creativecommons.org/publicdomain/zero/1.0/"),
])
def test_si_rights_statements_from_object_rights_else_media_usage(inner, statement):
    assert mapped("si", si_doc(inner))["rightsStatement"] == statement


def test_si_object_prefers_the_ids_service_and_preview_is_the_first_thumbnail():
    media = ("<online_media><media thumbnail='https://ids.si.edu/ids/deliveryService/id/ark:/65665/m35/90'>"
             "<usage><access>CC0</access></usage>\n  https://example.org/master.tif\n</media>"
             "<media thumbnail='https://ids.si.edu/t2'><usage><access>CC0</access></usage>\n"
             "  https://ids.si.edu/ids/deliveryService/id/ark:/65665/m3d9</media></online_media>")
    record = mapped("si", si_doc(media))
    assert record["object"] == "https://ids.si.edu/ids/deliveryService/id/ark:/65665/m3d9"
    assert record["preview"] == "https://ids.si.edu/ids/deliveryService/id/ark:/65665/m35/90"


def test_sd_maps_mdl_records_with_its_own_id_prefix():
    """ingestion3 has no SdMappingTest: SdMapping is MdlMapping minting with 'sd'. A South Dakota record as the MDL
    API serves it (the shape of ingestion3's mdl.json)."""
    url = "https://sddigitalarchives.contentdm.oclc.org/digital/collection/sdmuseums/id/511"
    metadata = {
        "dataProvider": "South Dakota State Historical Society", "isShownAt": url,
        "object": "https://sddigitalarchives.contentdm.oclc.org/digital/api/singleitem/collection/sdmuseums/id/511/thumbnail",
        "rights": "http://rightsstatements.org/vocab/NoC-US/1.0/",
        "sourceResource": {
            "title": "Main Street, Deadwood", "type": "image", "creator": ["Grabill, John C. H."],
            "date": {"displayDate": "1888", "begin": "1888", "end": "1888"},
            "spatial": [{"name": ["Deadwood", "South Dakota"], "coordinates": "44.3767, -103.7296"}],
            "subject": [{"name": "Streets"}, {"name": "Mining towns"}], "format": ["1x2 in.", "albumen print"],
        },
    }
    document = {"id": "sdmuseums:511", "type": "documents", "attributes": {"metadata": metadata}}
    record = mapped("sd", document, url)
    assert record["id"] == hashlib.md5(f"sd--{url}".encode()).hexdigest()
    assert (record["provider"], record["providerUri"]) == ("Minnesota Digital Library", "http://dp.la/api/contributor/mdl")
    assert record["rightsStatement"] == "http://rightsstatements.org/vocab/NoC-US/1.0/"
    sr = record["sourceResource"]
    assert [(p["name"], p["coordinates"]) for p in sr["spatial"]] == [("Deadwood", "44.3767, -103.7296")]
    assert [s["name"] for s in sr["subject"]] == ["Streets", "Mining towns"] and sr["format"] == ["albumen print"]
    assert [(d["providedLabel"], d["begin"]) for d in sr["date"]] == [(["1888"], "1888")]
