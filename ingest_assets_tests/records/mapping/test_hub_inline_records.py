"""Hub profiles on the records ingestion3's MappingTests write inline (DcMappingTest, InMappingTest, ...), the hubs
ingestion3 maps without a test (NJDEMapping, IthakaMapping, SdMapping) on realistic records of their feeds, and what
no ingestion3 test asserts (Mississippi's Primo variations, IA consortia, SI media). The fixture
records are checked by the parity data (``parity/<hub>.yaml``, ``test_parity.py``).

ingestion3's inline records leave out what their feed always has (the metadata element, namespaces): here each is
written as the hub sends it, with the test's values."""

from __future__ import annotations

import hashlib
import json

import pytest
from fastavro.validation import validate

from ingest_assets.core.registry import ProviderEntry
from ingest_assets.records.mapping import mapper_for
from ingest_assets.records.mapping.mapper import mint_id
from ingest_assets_tests.support.mapping import ITHAKA_RECORD, NJDE_RECORD

OAI = "http://www.openarchives.org/OAI/2.0/"
QDC = ('<oai_qdc:qualifieddc xmlns:oai_qdc="http://worldcat.org/xmlschemas/qdc-1.0/" '
       'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" '
       'xmlns:edm="http://www.europeana.eu/schemas/edm/">{}</oai_qdc:qualifieddc>')
MODS = '<mods xmlns="http://www.loc.gov/mods/v3" xmlns:xlink="http://www.w3.org/1999/xlink">{}</mods>'
# what every record needs to be mapped at all, when a test looks at other fields
QDC_REQUIRED = ("<dc:title>t</dc:title><edm:dataProvider>d</edm:dataProvider>"
                "<edm:isShownAt>https://example.org/1</edm:isShownAt>")
MODS_REQUIRED = ('<titleInfo><title>t</title></titleInfo><note type="ownership">d</note>'
                 '<accessCondition type="use and reproduction" xlink:href="http://rightsstatements.org/vocab/InC/1.0/">'
                 'In Copyright</accessCondition>'
                 '<location><url usage="primary display" access="object in context">https://example.org/1</url>'
                 '</location>')


def oai(metadata: str, identifier: str = "oai:hub:1") -> str:
    return (f'<record xmlns="{OAI}"><header><identifier>{identifier}</identifier></header>'
            f"<metadata>{metadata}</metadata></record>")


def mapped(hub: str, document: str, local_id: str = "oai:hub:1") -> dict:
    result = mapper_for(ProviderEntry(hub, {"mapping": hub})).map(
        {"id": local_id, "ingestDate": 1700000000, "document": document, "mimetype": "application_xml"})
    assert result.record is not None, result.messages
    return result.record


def sr(hub: str, document: str) -> dict:
    return mapped(hub, document)["sourceResource"]


def names(values) -> list[str] | None:
    if values is None:
        return None
    return [v if isinstance(v, str) else v.get("name") or v.get("title") or v["providedLabel"][0] for v in values]


def test_dc_inline_records():
    rights = "<dc:rights>rights statement</dc:rights><edm:rights>http://rights.holder.edu</edm:rights>"
    record = mapped("dc", oai(QDC.format(
        QDC_REQUIRED + rights + "<dcterms:format>photograph</dcterms:format><dcterms:format>image</dcterms:format>"
        "<dcterms:format>image/jpeg</dcterms:format><dcterms:language>english</dcterms:language>"
        "<dcterms:language>eng</dcterms:language><Place>Ohio--Terrace Park</Place><Place>Cincinnati, OH</Place>")))
    source = record["sourceResource"]
    assert source["format"] == ["photograph"]  # 'image' is a type word, 'image/jpeg' a file format
    assert names(source["language"]) == ["english", "eng"]
    assert names(source["spatial"]) == ["Ohio--Terrace Park", "Cincinnati, OH"]
    assert source["rights"] == ["rights statement"] and record["rightsStatement"] == "http://rights.holder.edu"


def test_in_inline_records():
    def record(body: str) -> dict:
        return mapped("in", oai(QDC.format("<dc:title>t</dc:title><dcterms:provenance>d</dcterms:provenance>"
                                           "<dc:identifier>https://example.org/1</dc:identifier>" + body)))

    statement = record("<dcterms:accessRights>http://rightsstatements.org/vocab/InC/1.0/</dcterms:accessRights>")
    assert statement["rightsStatement"] == "http://rightsstatements.org/vocab/InC/1.0/"
    assert statement["sourceResource"]["rights"] == []  # a URI is no rights text
    trailing = record("<dcterms:accessRights>http://rightsstatements.org/vocab/InC/1.0;</dcterms:accessRights>")
    assert trailing["rightsStatement"] == "http://rightsstatements.org/vocab/InC/1.0"
    one = record("<dc:rights>http://rightsstatements.org/vocab/NoC-US/1.0/</dc:rights>"
                 "<dcterms:mediator>provider A</dcterms:mediator><dc:type>photograph</dc:type>")
    assert one["intermediateProvider"] == ["provider A"] and one["sourceResource"]["format"] == ["photograph"]
    assert record("<dc:rights>http://rightsstatements.org/vocab/NoC-US/1.0/</dc:rights>")["intermediateProvider"] is None


def test_maryland_inline_records():
    def record(body: str) -> dict:
        return mapped("maryland", oai(QDC.format(body)))

    single = record("<dc:title>Cover</dc:title><dc:source>Enoch Pratt Free Library</dc:source>"
                    "<dc:rights>https://rightsstatements.org/vocab/CNE/1.0/</dc:rights>"
                    "<dc:identifier>http://collections.digitalmaryland.org/cdm/ref/collection/acfp/id/11016</dc:identifier>")
    assert single["isShownAt"] == "http://collections.digitalmaryland.org/cdm/ref/collection/acfp/id/11016"
    assert single["object"] == "http://collections.digitalmaryland.org/utils/getthumbnail/collection/acfp/id/11016"
    text = ("This work is licensed under a Creative Commons Attribution-NoDerivs 3.0 Unported License. When this "
            "material is used, proper citation must be attributed to the Maryland State Archives.")
    access_only = record("<dc:title>Test Item</dc:title><dc:source>Maryland State Archives</dc:source>"
                         "<dc:identifier>msa_local_001</dc:identifier>"
                         "<dc:identifier>http://collections.digitalmaryland.org/cdm/ref/collection/msa/id/1</dc:identifier>"
                         f"<dcterms:accessRights>{text}</dcterms:accessRights>")
    assert access_only["rightsStatement"] == "https://creativecommons.org/licenses/by-nd/3.0/"
    assert access_only["sourceResource"]["rights"] == [text]
    assert access_only["isShownAt"].endswith("/msa/id/1")  # the first identifier that is a URL
    stated = record("<dc:title>t</dc:title><dc:source>s</dc:source><dc:identifier>https://example.org/x</dc:identifier>"
                    "<dcterms:accessRights>See http://rightsstatements.org/vocab/InC/1.0/ for terms</dcterms:accessRights>")
    assert stated["rightsStatement"] == "http://rightsstatements.org/vocab/InC/1.0/"
    assert stated["object"] is None  # not a CONTENTdm page: no thumbnail made up


def test_michigan_inline_records():
    def source(body: str) -> dict:
        # Michigan's data provider is a content source, not an ownership note (every note is a description)
        required = MODS_REQUIRED.replace("primary display", "primary").replace('<note type="ownership">d</note>', "")
        required += "<recordInfo><recordContentSource>d</recordContentSource></recordInfo>"
        return sr("michigan", oai(MODS.format(required + body)))

    assert names(source("<name><namePart>City of Lansing</namePart></name>")["creator"]) == ["City of Lansing"]
    assert source("<subject><name><namePart>Cats</namePart></name></subject>")["creator"] is None
    assert names(source("<originInfo><dateCreated>2007</dateCreated></originInfo>")["date"]) == ["2007"]
    ranged = source('<originInfo><dateIssued point="start">2007</dateIssued>'
                    '<dateIssued point="end">2008</dateIssued></originInfo>')["date"]
    assert [(d["providedLabel"], d["begin"], d["end"]) for d in ranged] == [(["2007-2008"], "2007", "2008")]
    every = ('<originInfo><dateCreated>2003</dateCreated><dateIssued>2004</dateIssued>'
             '<dateIssued point="start">2007</dateIssued><dateIssued point="end">2008</dateIssued></originInfo>')
    assert names(source(every)["date"]) == ["2003"]
    created = "<originInfo><dateCreated>2003</dateCreated><dateCreated>2005</dateCreated><dateIssued>2004</dateIssued></originInfo>"
    assert names(source(created)["date"]) == ["2003", "2005"]
    note = "Oakland County Historical Resources hosts digitized materials."
    assert source(f"<note>{note}</note>")["description"] == [note]
    assert source('<genre authority="dct">still image</genre>')["format"] == ["still image"]
    assert source("<subject><genre>Cows</genre></subject>")["format"] is None
    for body, subject in [("<subject>Dogs</subject>", "Dogs"), ("<subject><name><namePart>Cats</namePart></name></subject>", "Cats"),
                          ("<subject><genre>Cows</genre></subject>", "Cows"),
                          ("<subject><titleInfo><title>Birds</title></titleInfo></subject>", "Birds")]:
        assert names(source(body)["subject"]) == [subject]
    assert source("<subject><geographic>Ann Arbor</geographic><temporal>1984-1985</temporal></subject>")["subject"] is None
    titles = ("<subject><titleInfo><title>Birds</title></titleInfo></subject>"
              "<relatedItem><titleInfo><title>Collection title</title></titleInfo></relatedItem>")
    assert source(titles)["title"] == ["t"]


def test_mwdl_a_bare_primo_record_and_its_page():
    primo = "http://www.exlibrisgroup.com/xsd/primo/primo_nm_bib"
    record = mapped("mwdl", f'<PrimoNMBib xmlns="{primo}"><record><control><recordid>\n  digcoll_slc_27works_598\n'
                            "</recordid></control><display><title>t</title><lds03>Bushnell University</lds03>"
                            "<rights>r</rights></display></record></PrimoNMBib>")
    assert record["isShownAt"] == ("https://utah-primoprod.hosted.exlibrisgroup.com/primo-explore/fulldisplay?"
                                   "docid=digcoll_slc_27works_598&context=L&vid=MWDL")
    assert record["dataProvider"] == "Bushnell University" and record["object"] is None


def test_nc_inline_records():
    def record(body: str, identifier: str = "oai:hub:1") -> dict:
        return mapped("nc", oai(MODS.format(MODS_REQUIRED + body), identifier))

    dated = record('<originInfo><dateCreated keyDate="yes">1996-05-13</dateCreated><dateCreated>1997</dateCreated>'
                   "</originInfo><accessCondition>rights statement.</accessCondition>")["sourceResource"]
    assert names(dated["date"]) == ["1996-05-13"] and dated["rights"] == ["rights statement."]
    assert record("<subject><topic>Dogs</topic></subject>")["sourceResource"]["subject"][0]["name"] == "Dogs"
    duke = mapped("nc", oai(MODS.format(MODS_REQUIRED.replace('<note type="ownership">d</note>', "")
                                        + '<note type="ownership">Duke University Libraries</note>')))
    assert duke["dataProvider"] == "Duke University Libraries" and duke["intermediateProvider"] is None


def test_virginias_media_that_are_type_words_or_file_formats():
    dplava = ('<mdRecord xmlns="http://dplava.lib.virginia.edu" xmlns:dcterms="http://purl.org/dc/terms/" '
              'xmlns:edm="http://www.europeana.eu/schemas/edm/"><dcterms:identifier>uva-lib:1</dcterms:identifier>'
              "<dcterms:title>t</dcterms:title><dcterms:provenance>d</dcterms:provenance>"
              "<dcterms:rights>http://rightsstatements.org/vocab/NoC-US/1.0/</dcterms:rights>"
              "<edm:isShownAt>https://example.org/1</edm:isShownAt>{}</mdRecord>")
    media = "<dcterms:medium>image</dcterms:medium><dcterms:medium>photograph</dcterms:medium>"
    assert sr("virginias", dplava.format(media))["format"] == ["photograph"]
    assert sr("virginias", dplava.format("<dcterms:medium>image/jpeg</dcterms:medium>"))["format"] is None


def test_njde_on_a_record_of_its_feed(map_schema):
    record = mapped("njde", NJDE_RECORD, "oai:njde:rutgers-lib:12345")
    assert validate(record, map_schema, raise_errors=True)
    assert record["id"] == mint_id("njde", "oai:njde:rutgers-lib:12345") and record["provider"] == "NJ/DE Digital Collective"
    assert record["providerUri"] == "http://dp.la/api/contributor/njde"
    assert record["dataProvider"] == "Rutgers University Libraries"  # the first
    assert record["rightsStatement"] == "http://rightsstatements.org/vocab/NoC-US/1.0/"  # the rights that are URIs
    assert record["sourceResource"]["rights"] == []  # NJDEMapping maps no rights text
    assert record["isShownAt"] == "https://rucore.libraries.rutgers.edu/rutgers-lib/12345/"
    assert record["object"].endswith("/12345/thumbnail.jpg")
    source = record["sourceResource"]
    assert names(source["subject"]) == ["Iron industry and trade", "Industrial buildings"]
    assert names(source["collection"]) == ["New Jersey Postcards"] and names(source["date"]) == ["1900-1910"]
    assert source["identifier"] == ["https://doi.org/doi:10.7282/T3NJDE01"]
    assert source["extent"] == ["1 photographic print"] and source["type"] == ["Image"]


def test_ithaka_on_the_record_its_mapping_carries(map_schema):
    record = mapped("ithaka", ITHAKA_RECORD, "2841861")
    assert validate(record, map_schema, raise_errors=True)
    assert record["id"] == mint_id("artstor", "2841861")
    assert (record["provider"], record["providerUri"]) == ("Artstor", "http://dp.la/api/contributor/artstor")
    assert record["dataProvider"] == "Ithaka"
    assert record["isShownAt"] == "https://www.jstor.org/stable/10.2307/community.2841861"
    assert record["object"] == "https://forum.jstor.org/oai/thumbnail?id=2841861"
    source = record["sourceResource"]
    assert source["title"][0].startswith("Hooigracht. 's GRAVENHAGE.") and source["title"][1] == "overall"
    assert names(source["creator"]) == ["Probably Grand Bazar de la Paix (publisher, Dutch, act. ca.1907-1914)"]
    assert names(source["contributor"]) == ["Watkinson Library", "Trinity College", "Hartford"]
    assert names(source["subject"])[:2] == ["Postcards", "Netherlands"] and len(source["subject"]) == 6
    assert source["identifier"] == ["Box 12.54-10", "534724"]  # not the media and viewer links
    assert source["type"] == ["Picture postcard", "cardstock", "paper", "9 x 14 cm (3.54 x 5.51 inches) approximately"]
    assert source["format"] == ["Picture postcard", "cardstock", "paper"]
    assert source["extent"] == ["9 x 14 cm (3.54 x 5.51 inches) approximately"]
    assert names(source["spatial"]) == ["Dutch"] and source["rights"][0].startswith("This digital collection")


@pytest.mark.parametrize("hub", ["njde", "ithaka"])
def test_a_record_without_its_link_is_refused_naming_the_field(hub):
    document = NJDE_RECORD if hub == "njde" else ITHAKA_RECORD
    stripped = document.replace("ImageViewer:", "Viewer:").replace("<edm:isShownAt>", "<edm:other>").replace(
        "</edm:isShownAt>", "</edm:other>")
    result = mapper_for(ProviderEntry(hub, {"mapping": hub})).map(
        {"id": "x", "ingestDate": 1, "document": stripped, "mimetype": "application_xml"})
    assert result.record is None and [m.field for m in result.messages] == ["isShownAt"]


# ---- the JSON hubs (and SI) -----------------------------------------------------------------------------------


def mapped_any(profile: str, document: dict | str, local_id: str = "1") -> dict:
    """A JSON (or XML) record mapped as a registry entry of the profile's hub would map it."""
    text = document if isinstance(document, str) else json.dumps(document)
    mimetype = "application_json" if text.lstrip()[:1] in "{[" else "application_xml"
    result = mapper_for(ProviderEntry(profile.replace("-", ""), {"mapping": profile})).map(
        {"id": local_id, "ingestDate": 1, "document": text, "mimetype": mimetype})
    assert result.record is not None, result.messages
    return result.record


IA_ITEM = {"identifier": "artofdyingwell00bell", "title": "The art of dying well", "mediatype": "texts"}


def test_ia_consortia_collections_are_intermediate_providers():
    record = mapped_any("ia", {**IA_ITEM, "collection": ["americana", "blc"]})
    assert record["intermediateProvider"] == ["Boston Library Consortium"]
    assert mapped_any("ia", {**IA_ITEM, "collection": ["americana"]})["intermediateProvider"] is None


def test_mississippi_primo_ranges_rights_places_and_identifier_links():
    display = {"title": ["t"], "creationdate": ["1941;1940;1942"], "type": ["text_resource"],
               "rights": ["No known restrictions;http://rightsstatements.org/vocab/NKC/1.0/"],
               "identifier": ["$$Cdcidentifier$$Vhttp://egrove.olemiss.edu/item/1;local 7"],
               "coverage": ["1940s (1940-1949);Canton (Miss.)"], "lds14": ["Madison County"],
               "lds02": ["University of Mississippi"]}
    thumbnail = {"displayLabel": "Thumbnail", "linkURL": "https://example.org/t.jpg"}
    document = {"@id": "https://example.org/pnxs/L/1", "pnx": {"display": display},
                "delivery": {"availabilityLinksUrl": [""], "link": [thumbnail]}}
    record = mapped_any("mississippi", document, "https://example.org/pnxs/L/1")
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
    record = mapped_any("si", si_doc(media))
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
    record = mapped_any("sd", document, url)
    assert record["id"] == hashlib.md5(f"sd--{url}".encode()).hexdigest()
    assert (record["provider"], record["providerUri"]) == ("Minnesota Digital Library", "http://dp.la/api/contributor/mdl")
    assert record["rightsStatement"] == "http://rightsstatements.org/vocab/NoC-US/1.0/"
    sr = record["sourceResource"]
    assert [(p["name"], p["coordinates"]) for p in sr["spatial"]] == [("Deadwood", "44.3767, -103.7296")]
    assert [s["name"] for s in sr["subject"]] == ["Streets", "Mining towns"] and sr["format"] == ["albumen print"]
    assert [(d["providedLabel"], d["begin"]) for d in sr["date"]] == [(["1888"], "1888")]
