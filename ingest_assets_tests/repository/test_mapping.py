"""K2N/DC mapping per the spec's tables, validation against the vocabulary XML files, and the report."""

from datetime import datetime, timezone

import pytest
from rdflib import Literal, URIRef

from ingest_assets.core.errors import ConfigError, ValidationError
from ingest_assets.repository.mapping import map_key_start, map_metadata, map_organisation, page_collection
from ingest_assets.repository.model import DC, K2N, REL, RepositoryObject
from ingest_assets.repository.pids import member_pid, pid_from_uri
from ingest_assets.repository.records import make_record, parse_timestamp
from ingest_assets.repository.report import render_report
from ingest_assets.repository.validation import load_vocabularies, validate

WIKI = "http://www.keytonature.eu/wiki/"


def record_from_index(fields: dict[str, str]):
    """What the TemplateParameterIndex client builds from one <record>."""
    fixed = {"Harvested", "Modified", "TemplateName", "BaseURL", "PageName"}
    return make_record(fields["TemplateName"], fields["BaseURL"], fields["PageName"],
                       {k: v for k, v in fields.items() if k not in fixed},
                       modified=parse_timestamp(fields["Modified"]), harvested=parse_timestamp(fields["Harvested"]))


def test_thalictrum_key_start_field_by_field(thalictrum):
    record = record_from_index(thalictrum)
    mapped = map_key_start(record, default_language="de")
    obj = mapped.obj
    page = "http://www.keytonature.eu/wiki/Thalictrum_in_Mitteleuropa"
    # the spec's translated example
    assert obj.k2n["Harvested"] == ["2010-01-25T00:07:43Z"]
    assert obj.k2n["Modified"] == ["2010-01-24T00:12:39Z"]
    assert obj.k2n["TemplateName"] == ["Key Start"]
    assert obj.dc["title"] == ["Thalictrum in Mitteleuropa"]
    assert obj.k2n["Metadata_Creator"] == ["Ralf Hand"]
    assert obj.k2n["Description"] == ['"*" = siehe separate Schlüssel für Unterarten']
    assert obj.k2n["Audience"] == ["Experten, Interessierte"]
    assert obj.k2n["Creators"] == ["Ralf Hand"]
    assert obj.k2n["Host_Application"] == ["Web Browser"]
    assert obj.k2n["Copyright_Statement"] == ["Copyright reserved by the contributing authors"]
    # the table says "Licensed ...", the example's lower-case "licensed" is taken as a typo
    assert obj.k2n["License_Statement"] == ["Licensed under Creative Commons cc-by-sa 3.0"]
    assert obj.k2n["Best_Quality_Availability"] == ["online (free)"]
    # the other implied values of the table
    assert obj.dc["type"] == ["Identification Tool"]
    assert obj.dc["language"] == ["de"]  # no language parameter: the wiki's default
    assert obj.k2n["Interactivity"] == ["Dynamic"]
    assert obj.k2n["ID_Tool_Structure"] == ["polytomous"]
    assert obj.k2n["Best_Quality_URI"] == [page]
    assert obj.k2n["Resource_ID"] == [page]
    assert "License_URL" not in obj.k2n  # left empty by the spec
    # collaboration limited to: PRESENTLY IGNORE; nothing else is produced
    assert set(obj.k2n) == {"Harvested", "Modified", "TemplateName", "Metadata_Creator", "Description", "Audience",
                            "Creators", "Host_Application", "Copyright_Statement", "License_Statement",
                            "Best_Quality_Availability", "Interactivity", "ID_Tool_Structure", "Best_Quality_URI",
                            "Resource_ID"}
    assert set(obj.dc) == {"title", "type", "language"}
    assert mapped.notes == []
    # identity: an identification-tool member of the page's collection, provided by the wiki
    assert obj.pid == member_pid("id", record.item_xml()) and obj.pid.startswith("K2N:id_")
    assert obj.collection == pid_from_uri(page) == "K2N:www.keytonature.eu_wiki_thalictrum_in_mitteleuropa"
    assert obj.provider == "K2N:www.keytonature.eu_wiki"
    assert obj.harvesting_url == page
    assert mapped.collection_uri == page


def test_key_start_id_anchor_language_and_multi_valued_fields(thalictrum):
    fields = {**thalictrum, "id": "k1", "language": "de", "initiated by": "A. Author", "edited by": "B; C",
              "general review by": "R1", "expert review by": "R2", "category": "Botanik; Schlüssel",
              "parent key": "Ranunculaceae", "commonnames": "Wiesenraute", "geoscope": "Mitteleuropa",
              "source": "Hand, R. (2001)", "unknown thing": "x"}
    mapped = map_key_start(record_from_index(fields), default_language="en")
    obj = mapped.obj
    anchor = "http://www.keytonature.eu/wiki/Thalictrum_in_Mitteleuropa#k1"
    assert obj.k2n["Best_Quality_URI"] == obj.k2n["Resource_ID"] == [anchor]
    assert obj.dc["language"] == ["de"]
    assert obj.k2n["Contributors"] == ["A. Author", "B", "C"]
    assert obj.k2n["Reviewer_Names"] == ["R1", "R2"]
    assert obj.k2n["General_Keywords"] == ["Botanik", "Schlüssel"]
    assert obj.k2n["Taxonomic_Coverage"] == ["Ranunculaceae"]
    assert obj.k2n["Common_Names"] == ["Wiesenraute"]
    assert obj.k2n["World_Region_or_Locality"] == ["Mitteleuropa"]
    assert obj.k2n["Published_Source"] == ["Hand, R. (2001)"]
    assert mapped.notes == ["parameter 'unknown thing' has no K2N mapping and was ignored"]


def test_rdf_of_a_key(thalictrum):
    obj = map_key_start(record_from_index(thalictrum), default_language="de").obj
    graph = obj.to_graph()
    node = URIRef(f"info:fedora/{obj.pid}")
    assert (node, DC.title, Literal("Thalictrum in Mitteleuropa")) in graph
    assert (node, K2N.Host_Application, Literal("Web Browser")) in graph
    assert (node, REL.isMemberOfCollection, URIRef(f"info:fedora/{obj.collection}")) in graph
    assert (node, K2N.HarvestingURL, Literal(obj.harvesting_url)) in graph
    back = RepositoryObject.from_turtle(obj.to_turtle(), obj.pid)
    assert (back.kind, back.collection, back.provider, back.harvesting_url) == \
        (obj.kind, obj.collection, obj.provider, obj.harvesting_url)
    assert {k: sorted(v) for k, v in back.k2n.items()} == {k: sorted(v) for k, v in obj.k2n.items()}
    assert b"<dc:title>Thalictrum in Mitteleuropa</dc:title>" in obj.dc_xml()


def test_infobox_organisation_provider_mapping():
    record = make_record("Infobox_Organisation", WIKI, "Naturalis", {
        "name": "Nationaal Natuurhistorisch Museum", "abbreviation": "Naturalis", "type": "Museum",
        "logo": "[[File:Naturalis logo.png|120px]]", "foundation": "1820", "location_country": "NL",
        "location_city": "Leiden", "homepage": "http://www.naturalis.nl/"})
    obj = map_organisation(record).obj
    assert obj.pid == "K2N:www.naturalis.nl" and obj.kind == "provider"
    assert obj.dc == {"type": ["Provider"], "title": ["Naturalis"]}
    assert obj.k2n["Description"] == ["Nationaal Natuurhistorisch Museum"]
    assert obj.k2n["Caption"] == ["Museum"]
    assert obj.k2n["Attribution_Logo_URL"] == [WIKI + "Special:FilePath/Naturalis_logo.png"]
    assert obj.k2n["Country_Names"] == ["NL"] and obj.k2n["City_or_Place_Name"] == ["Leiden"]
    assert obj.k2n["Page_Context_URI"] == ["http://www.naturalis.nl/"]
    assert obj.k2n["Best_Quality_URI"] == [WIKI + "Naturalis"]
    assert "Service_Attribution_URI" not in obj.k2n and obj.provider is None
    no_abbreviation = map_organisation(make_record("Infobox Organisation", WIKI, "X", {
        "name": "Some Society", "type": "Society", "homepage": "http://x.org"})).obj
    assert no_abbreviation.dc["title"] == ["Some Society"] and no_abbreviation.k2n["Description"] == ["Society"]
    with pytest.raises(ValidationError, match="homepage"):
        map_organisation(make_record("Infobox Organisation", WIKI, "Y", {"name": "No home"}))


def test_metadata_collection_and_member():
    collection = make_record("Metadata", WIKI, "Pollen collection", {
        "Type": "Collection", "Title": "Pollen", "Collection Page": "Pollen collection",
        "Resource ID": "urn:uuid:3F2504E0-4F89-11D3-9A0C-0305E82C3301", "Provider Page": "Naturalis"})
    image = make_record("Metadata", WIKI, "Pollen 1", {
        "Type": "StillImage", "Title": "Pollen grain", "Collection Page": "Pollen collection",
        "Best Quality URI": "http://img.example.org/1.jpg", "Country Codes": "NL; DE", "Language": "en"})
    coll = map_metadata(collection, provider_pid="K2N:www.naturalis.nl").obj
    assert coll.kind == "collection" and coll.pid == pid_from_uri(WIKI + "Pollen_collection")
    assert coll.k2n["Resource_ID"] == ["urn:uuid:3F2504E0-4F89-11D3-9A0C-0305E82C3301"]
    assert coll.k2n["Best_Quality_URI"] == [WIKI + "Pollen_collection"]
    assert coll.provider == "K2N:www.naturalis.nl"
    member = map_metadata(image)
    assert member.obj.pid.startswith("K2N:im_") and member.obj.collection == coll.pid
    assert member.obj.provider is None and member.collection_uri == WIKI + "Pollen_collection"
    assert member.obj.k2n["Country_Codes"] == ["NL", "DE"] and member.obj.dc["language"] == ["en"]
    assert map_metadata(image, provider_pid="K2N:p").obj.pid == member.obj.pid  # PID: the record, not context


def test_validation_against_vocabularies_and_rules():
    vocabularies = load_vocabularies()
    assert {v.name for v in vocabularies} == {  # the specification's ten controlled vocabularies
        "Type", "Subtype", "Offline Use", "Interactivity", "Host Application", "Target System", "ID Tool Structure",
        "Exchange Formats", "Country Codes", "Languages"}
    obj = RepositoryObject("K2N:im_x", "member", dc={"type": ["stillimage"], "language": ["de", "xx"],
                                                     "title": ["A, B, C"]},
                           k2n={"Country_Codes": ["DE", "QQ", "DE"], "Interactivity": ["Dynamic", "Static"]})
    issues = validate(obj, vocabularies, record="Page#Metadata[0]", url=WIKI + "Page")
    found = {(i.severity, i.field, i.message) for i in issues}
    assert ("error", "Best_Quality_URI", "mandatory field Best_Quality_URI is missing") in found
    assert ("warning", "dc:language", "'xx' is not in vocabulary Languages") in found
    assert ("warning", "Country_Codes", "'QQ' is not in vocabulary Country Codes") in found
    assert ("warning", "Country_Codes", "repeated values: DE") in found
    assert ("error", "Interactivity", "single-valued field has 2 values: Dynamic; Static") in found
    assert any(i.field == "dc:title" and "more than one comma" in i.message for i in issues)
    assert obj.dc["type"] == ["StillImage"]  # vocabulary spelling
    bad_uri = RepositoryObject("K2N:im_y", "member", dc={"type": ["Image"]}, k2n={"Best_Quality_URI": ["ftp:/x"]})
    assert [i.severity for i in validate(bad_uri, vocabularies, record="r", url="")] == ["error"]
    unknown_type = RepositoryObject("K2N:im_z", "member", dc={"type": ["Painting"]},
                                    k2n={"Best_Quality_URI": ["http://x.org/1"]})
    assert [(i.severity, i.field) for i in validate(unknown_type, vocabularies, record="r", url="")] == \
        [("error", "dc:type")]


def test_an_identification_key_is_checked_against_subtype_target_system_and_exchange_formats():
    key = make_record("Metadata", WIKI, "Lichens of Italy", {
        "Type": "Identification Tool", "Title": "Lichens of Italy", "Collection Page": "Keys",
        "Best Quality URI": "http://dryades.units.it/italic/", "Subtype": "color-photo",
        "Target System": "WinXP; Symbian OS; Amiga", "Exchange Formats": "sdd1.1; DELTA; Lucid3"})
    obj = map_metadata(key).obj
    issues = validate(obj, load_vocabularies(), record="Lichens of Italy#Metadata[0]", url=WIKI + "Lichens_of_Italy")
    assert {(i.severity, i.field, i.message) for i in issues} == {
        ("warning", "Target_System", "'Amiga' is not in vocabulary Target System"),
        ("warning", "Exchange_Formats", "'Lucid3' is not in vocabulary Exchange Formats"),
    }  # freely extensible lists: warnings, the object is written
    assert obj.k2n["Subtype"] == ["Color-photo"] and obj.k2n["Exchange_Formats"] == ["SDD1.1", "DELTA", "Lucid3"]


def test_vocabulary_folder_errors(tmp_path):
    with pytest.raises(ConfigError):
        load_vocabularies(tmp_path / "missing")
    (tmp_path / "Bad.xml").write_text("<vocabulary name='x'><term>a</term></vocabulary>")
    with pytest.raises(ConfigError, match="Bad.xml"):
        load_vocabularies(tmp_path)
    (tmp_path / "Bad.xml").write_text("<vocabulary name='Subtype' field='Subtype' severity='error'>"
                                      "<term>Photograph</term></vocabulary>")
    (vocabulary,) = load_vocabularies(tmp_path)
    assert vocabulary.terms == {"Photograph"}


def test_report_in_mediawiki_syntax():
    vocabularies = load_vocabularies()
    obj = RepositoryObject("K2N:im_x", "member", dc={"type": ["Image"], "language": ["xx"]})
    issues = validate(obj, vocabularies, record="Pollen 1#Metadata[0]", url=WIKI + "Pollen_1")
    text = render_report(collection_title="Pollen | collection", collection_url=WIKI + "Pollen_collection",
                         generated=datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc), records=3, ingested=2,
                         issues=issues)
    assert text.startswith("== Metadata aggregation report: <nowiki>Pollen | collection</nowiki> ==\n")
    assert "Records: 3; objects ingested: 2; errors: 1; warnings: 1" in text
    assert ("| [http://www.keytonature.eu/wiki/Pollen_1 <nowiki>Pollen 1#Metadata[0]</nowiki>] || "
            "<nowiki>Best_Quality_URI</nowiki> || <nowiki>mandatory field Best_Quality_URI is missing</nowiki>") in text
    assert text.count('{| class="wikitable sortable"') == 2 and text.count("|}") == 2
    assert text.rstrip().endswith("[[Category:Metadata aggregation reports]]")
    implied = page_collection(WIKI, "Thalictrum in Mitteleuropa")
    assert implied.dc["title"] == ["Thalictrum in Mitteleuropa"] and implied.provider == "K2N:www.keytonature.eu_wiki"
    assert implied.k2n["Resource_ID"] == [WIKI + "Thalictrum_in_Mitteleuropa"]
