"""The hub profiles on records beyond their ingestion3 fixtures: NARA's inline variations (NaraMappingTest's own
inline records), MDL's rights forms, Calisphere (CdlMapping's field list). The fixture records themselves are
checked by the parity data (``parity/nara.yaml``, ``parity/mdl.yaml``, ``test_parity.py``)."""

from __future__ import annotations

import hashlib
import json

import pytest
from fastavro.validation import validate

from ingest_assets.records.mapping import mapper_for
from ingest_assets.core.registry import ProviderEntry
from ingest_assets_tests.support.mapping import CALISPHERE

NARA_NS = "http://description.das.nara.gov/"
MDL_ID = "https://archive.mpr.org/stories/2014/08/14/hmong-vendors-learn-the-law-on-legal-drug"


def names(entities):
    return [e["name"] for e in entities]


def labels(timespans):
    return [label for t in timespans for label in t["providedLabel"]]


def original(local_id: str, document: str, mimetype: str) -> dict:
    return {"id": local_id, "ingestDate": 1700000000, "provider": "p", "document": document, "mimetype": mimetype,
            "deleted": False}


def nara_mapper():
    return mapper_for(ProviderEntry("nara", {"mapping": "nara", "label": "National Archives and Records Administration"}))


def nara_item(body: str) -> dict:
    """A NARA item document as ingestion3's inline test examples write them."""
    return original("51046777", f'<item xmlns="{NARA_NS}"><naId>51046777</naId><title>t</title>{body}</item>',
                    "application_xml")


def test_nara_both_most_recent_creators_and_a_default_data_provider():
    record = nara_mapper().map(nara_item("""
        <parentFileUnit><parentSeries><creatingOrganizationArray>
          <creatingOrganization><creator><termName>Department of Defense. U.S. Marine Corps. ca. 1947-</termName>
            </creator><creatorType><termName>Most Recent</termName></creatorType></creatingOrganization>
          <creatingOrganization><creator><termName>Department of the Navy. U.S. Marine Corps. 1834-9/18/1947</termName>
            </creator><creatorType><termName>Most Recent</termName></creatorType></creatingOrganization>
        </creatingOrganizationArray></parentSeries></parentFileUnit>
        <useRestriction><status><termName>Undetermined</termName></status></useRestriction>""")).record
    assert names(record["sourceResource"]["creator"]) == [
        "Department of Defense. U.S. Marine Corps. ca. 1947-", "Department of the Navy. U.S. Marine Corps. 1834-9/18/1947",
    ]
    assert record["dataProvider"] == "National Archives and Records Administration"  # no reference unit: the default
    assert record["rightsStatement"] == "http://rightsstatements.org/vocab/CNE/1.0/"


def test_nara_previews_need_an_image_type_and_get_their_scheme_repaired():
    def digital_object(filename: str, kind: str) -> str:
        return (f"<digitalObject><accessFilename>{filename}</accessFilename>"
                f"<objectType><termName>{kind}</termName></objectType></digitalObject>")

    mapper = nara_mapper()
    invalid = nara_item("<digitalObjectArray>" + digital_object("https://x.example/a.jpg", "NOT VALID")
                        + "</digitalObjectArray><useRestriction><status><termName>Unrestricted</termName></status>"
                        "</useRestriction>")
    record = mapper.map(invalid).record
    assert record["object"] is None and record["preview"] == record["isShownAt"]
    mangled = nara_item("<digitalObjectArray>"
                        + digital_object("https//abcd.s3.amazonaws.com/TB149/images/2514.jpg", "Image (JPG)")
                        + "</digitalObjectArray><useRestriction><status><termName>Unrestricted</termName></status>"
                        "</useRestriction>")
    assert mapper.map(mangled).record["object"] == "https://abcd.s3.amazonaws.com/TB149/images/2514.jpg"


def test_nara_files_of_the_old_export_bucket_are_linked_at_the_catalogs_media_address():
    """NaraMappingTest's 'correct preview URLs that begin with https://opaexport-conv.s3.amazonaws.com/': the file at
    the item's media address (its naId); every object's file is a master file (NaraMapping.mediaMaster)."""
    old = "https://opaexport-conv.s3.amazonaws.com/TB149/Civil_War_Service_Index/M545-CW_ServRecdIndexUnion_MI/M545_0042"
    record = nara_mapper().map(nara_item(
        f"<digitalObjectArray><digitalObject><accessFilename>{old}/images/2514.jpg</accessFilename>"
        "<objectType><termName>Image (JPG)</termName></objectType></digitalObject>"
        "<digitalObject><accessFilename>https//abcd.s3.amazonaws.com/TB149/2514.pdf</accessFilename>"
        "<objectType><termName>Portable Document File (PDF)</termName></objectType></digitalObject>"
        "</digitalObjectArray><useRestriction><status><termName>Unrestricted</termName></status></useRestriction>")).record
    moved = ("https://catalog.archives.gov/OpaAPI/media/51046777/content/TB149/Civil_War_Service_Index/"
             "M545-CW_ServRecdIndexUnion_MI/M545_0042/images/2514.jpg")
    assert record["object"] == moved
    assert record["mediaMaster"] == [moved, "https://abcd.s3.amazonaws.com/TB149/2514.pdf"]


@pytest.mark.parametrize(("status", "specific", "expected"), [
    ("Restricted - Fully", ["Trademark"], "http://rightsstatements.org/vocab/NoC-OKLR/1.0/"),
    ("Restricted - Fully", ["Copyright"], "http://rightsstatements.org/vocab/InC/1.0/"),
    ("Restricted - Partly", ["Donor Restrictions"], "http://rightsstatements.org/vocab/InC/1.0/"),
    ("Restricted - Possibly", ["Public Law 101-246"], "http://rightsstatements.org/vocab/NKC/1.0/"),
    ("Restricted - Possibly", [], "http://rightsstatements.org/vocab/UND/1.0/"),
    ("Undetermined", ["N/A"], "http://rightsstatements.org/vocab/CNE/1.0/"),
    ("Restricted - Possibly", ["Public Law 101-246", "Service Mark"], None),  # competing statements: none
])
def test_nara_rights_statements_from_use_restrictions(status, specific, expected):
    restrictions = "".join(f"<specificUseRestriction><termName>{s}</termName></specificUseRestriction>"
                           for s in specific)
    result = nara_mapper().map(nara_item(
        f"<useRestriction><status><termName>{status}</termName></status>"
        f"<specificUseRestrictionArray>{restrictions}</specificUseRestrictionArray></useRestriction>"))
    assert result.record["rightsStatement"] == expected
    assert result.record["sourceResource"]["rights"] == [status, *specific]


def mdl_mapper():
    return mapper_for(ProviderEntry("minnesota", {"mapping": "mdl", "label": "Minnesota Digital Library"}))


@pytest.mark.parametrize(("rights", "statement", "texts"), [
    ("free text rights statement", None, ["free text rights statement"]),
    ("http://mhs.org/copyright", None, ["http://mhs.org/copyright"]),
    ("text of cc statement; http://creativecommons.org/", None, ["text of cc statement; http://creativecommons.org/"]),
    ("", None, []),
])
def test_mdl_rights_text_and_statements(rights, statement, texts):
    document = {"attributes": {"metadata": {
        "rights": rights, "title": "t", "isShownAt": "https://example.org/x", "dataProvider": "d",
        "sourceResource": {"title": "t"},
    }}}
    result = mdl_mapper().map(original("x", json.dumps(document), "application_json"))
    if texts:
        assert result.record["rightsStatement"] == statement
        assert result.record["sourceResource"]["rights"] == texts
    else:  # neither a rights text nor a statement: the record is refused
        assert result.failed and [m.field for m in result.messages] == ["rights"]



def cdl_mapper():
    return mapper_for(ProviderEntry("cdl", {"mapping": "cdl", "label": "California Digital Library"}))


def test_cdl_calisphere_solr_record_field_by_field(map_schema):
    document = json.dumps(CALISPHERE)
    result = cdl_mapper().map(original(CALISPHERE["id"], document, "application_json"))
    assert result.messages == []
    record = result.record
    assert validate(record, map_schema, raise_errors=True)

    assert record["id"] == hashlib.md5(b"cdl--ark:/13030/kt2g5019mv").hexdigest()
    assert record["provider"] == "California Digital Library"
    assert record["providerUri"] == "http://dp.la/api/contributor/cdl"
    assert record["dataProvider"] == "University of Southern California, USC Libraries Special Collections"
    assert record["intermediateProvider"] == ["University of Southern California Digital Library"]
    assert record["isShownAt"] == "https://calisphere.org/item/ark:/13030/kt2g5019mv/"
    assert record["object"] == record["preview"] == (
        "https://thumbnails.calisphere.org/clip/150x150/6a1c2c1b2f0e7bd33f0d4b67a3e8a1e2"
    )
    assert record["rightsStatement"] == "http://rightsstatements.org/vocab/UND/1.0/"

    sr = record["sourceResource"]
    assert sr["title"] == ["Mission San Juan Capistrano, ruins of the great stone church"]
    assert sr["alternative"] == ["San Juan Capistrano mission"]
    assert names(sr["creator"]) == ["Pierce, C.C. (Charles C.), 1861-1946"]
    assert names(sr["contributor"]) == ["California Historical Society"]
    assert labels(sr["date"]) == ["circa 1900"]
    assert sr["description"] == CALISPHERE["description"]
    assert names(sr["subject"]) == ["Missions--California", "San Juan Capistrano (Calif.)", "Church buildings"]
    assert names(sr["spatial"]) == ["San Juan Capistrano (Calif.)"]
    assert labels(sr["temporal"]) == ["1900-1909"]
    assert sr["type"] == ["image"]
    assert sr["format"] == ["photographic print"]  # the DPLA type and the dimensions are not formats
    assert sr["extent"] == ["1 photographic print", "8 x 10 in."]
    assert names(sr["genre"]) == ["photographs"]
    assert sr["identifier"] == ["CHS-1234", "ark:/13030/kt2g5019mv"]
    assert sr["language"] == ["English"]
    assert names(sr["publisher"]) == ["California Historical Society"]
    assert sr["relation"] == ["Title Insurance and Trust, and C.C. Pierce Photography Collection"]
    assert sr["rights"] == [
        "Please contact the contributing institution for more information regarding the copyright.",
        "Copyright undetermined.", "USC Libraries",
    ]
    assert [c["title"] for c in sr["collection"]] == [
        "Title Insurance and Trust, and C.C. Pierce Photography Collection, 1860-1960"
    ]


def test_cdl_data_provider_and_intermediate_provider_from_repositories():
    mapper = cdl_mapper()
    alone = {**CALISPHERE, "repository_name": ["Sacramento Public Library"]}
    del alone["campus_name"]
    record = mapper.map(original("a", json.dumps(alone), "application_json")).record
    assert record["dataProvider"] == "Sacramento Public Library"
    assert record["intermediateProvider"] is None
    neither = {k: v for k, v in CALISPHERE.items() if k not in ("campus_name", "repository_name")}
    failed = mapper.map(original("b", json.dumps(neither), "application_json"))
    assert failed.failed and [(m.kind, m.field) for m in failed.messages] == [("missing_required", "dataProvider")]


def test_json_profiles_refuse_xml_and_broken_json():
    mapper = cdl_mapper()
    xml = mapper.map(original("a", "<x/>", "application_xml"))
    assert xml.failed and "reads JSON documents" in xml.messages[0].reason
    broken = mapper.map(original("a", '{"id": ', "application_json"))
    assert broken.failed and "not well-formed JSON" in broken.messages[0].reason
    deep = mapper.map(original("a", "[" * 100_000 + "]" * 100_000, "application_json"))
    assert deep.failed and [m.kind for m in deep.messages] == ["unparseable"]
