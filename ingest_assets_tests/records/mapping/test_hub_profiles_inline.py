"""Hub profiles on what ingestion3's tests leave out: realistic records of hubs it has no test for (sd) or tests
on a placeholder record only (mississippi), and behaviour of its mappings no test asserts (IA consortia, SI media).
Every assertion of its tests, on fixtures and on the records they build inline, is parity data
(``parity/<hub>.yaml``, ``test_parity.py``)."""

from __future__ import annotations

import hashlib
import json


from ingest_assets.core.registry import ProviderEntry
from ingest_assets.records.mapping import mapper_for


def mapped(profile: str, document: dict | str, local_id: str = "1") -> dict:
    text = document if isinstance(document, str) else json.dumps(document)
    mimetype = "application_json" if text.lstrip()[:1] in "{[" else "application_xml"
    result = mapper_for(ProviderEntry(profile.replace("-", ""), {"mapping": profile})).map(
        {"id": local_id, "ingestDate": 1, "document": text, "mimetype": mimetype})
    assert result.record is not None, result.messages
    return result.record


IA_ITEM = {"identifier": "artofdyingwell00bell", "title": "The art of dying well", "mediatype": "texts"}


def test_ia_consortia_collections_are_intermediate_providers():
    record = mapped("ia", {**IA_ITEM, "collection": ["americana", "blc"]})
    assert record["intermediateProvider"] == ["Boston Library Consortium"]
    assert mapped("ia", {**IA_ITEM, "collection": ["americana"]})["intermediateProvider"] is None


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


def si_doc(inner: str, indexed: str = "") -> str:
    """An EDAN record as SiMappingTest writes them inline, with what a record needs to be kept."""
    return (f"<doc><descriptiveNonRepeating><record_ID>nmah_1</record_ID><data_source>NMAH</data_source>"
            f"<title label='Title'>t</title>{inner}</descriptiveNonRepeating><indexedStructured>{indexed}"
            "</indexedStructured><freetext><creditLine label='credit line'>c</creditLine><place>Place</place>"
            "</freetext></doc>")


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
