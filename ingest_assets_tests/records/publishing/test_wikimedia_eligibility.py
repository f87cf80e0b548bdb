"""Wikimedia eligibility and metadata, decided as ingestion3 decides them: every assertion of its WikiMapperTest and
WikiMarkupStringTest as parity cases, then DPLA's published documents and ours for the same records (the same
decision on every one), and the institutions table and block list as shipped."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from ingest_assets.core.errors import ConfigError
from ingest_assets.core.settings import Settings
from ingest_assets.records.enrichment.institutions import WIKIDATA_ENTITY, institutions, parse_institutions
from ingest_assets.records.enrichment.vocabularies import wikidata_uri
from ingest_assets.records.mapping import mint_id
from ingest_assets.records.mapping.profiles import PROFILES
from ingest_assets.records.wikimedia.eligibility import (
    Criteria, asset_eligible, block_list, iiif_from_contentdm, institution_eligible, judge, nara_blocked_ids,
    rights_eligible, with_derived_manifest,
)
from ingest_assets.records.wikimedia.markup import escape_wiki, license_code, wiki_markup
from ingest_assets_tests.support.dpla_published import FOLDER, documents, profile_of, publish
from ingest_assets_tests.support.wikimedia import own_table



def nara(dpla_id: str) -> bool:
    """Whether a NARA record's DPLA id is blocked (the block list of NARA's minter, built on first use)."""
    return block_list(lambda local_id: mint_id("nara", local_id))(dpla_id)


def entity(qid: str) -> str:
    return WIKIDATA_ENTITY + qid


# WikiMapperTest's oreAggregation, as the index document DPLA's API serves for it
INDIANA = {
    "id": "4b1bd605bd1d75ee23baadb0e1f24457",
    "provider": {"@id": "http://dp.la/api/contributor/indiana", "name": "Indiana Memory",
                 "exactMatch": [entity("Q83878471")]},
    "dataProvider": {"@id": "http://dp.la/api/contributor/benjamin-harrison-presidential-site",
                     "name": "Benjamin Harrison Presidential Site", "exactMatch": [entity("Q4888783")]},
    "rights": "http://rightsstatements.org/vocab/NoC-US/1.0/",
    "isShownAt": "http://indianamemory.contentdm.oclc.org/cdm/ref/collection/BHPS/id/6341",
    "iiifManifest": "https://indianamemory.contentdm.oclc.org/cdm/collection/p16066coll13/id/71",
    "sourceResource": {"title": ["t"]},
}
# WikiMarkupStringTest's EnrichedRecordFixture.wikimediaEntrichedRecord as an index document (its date's label: the
# prefLabel ingestion3's DateBuilder sets to the provided date, what DPLA's documents carry as displayDate)
BIG_SKY = {
    "id": "4b1bd605bd1d75ee23baadb0e1f24457",
    "provider": {"@id": "http://dp.la/api/contributor/bscdn", "name": "Big Sky Digital Network",
                 "exactMatch": [entity("Q83878447")]},
    "dataProvider": {"name": "Big Sky Digital Network", "exactMatch": [entity("Q83878447")]},
    "rights": "http://rightsstatements.org/vocab/NoC-US/",
    "isShownAt": "https://example.org/record/123",
    "iiifManifest": "https://ark.iiif/item/manifest",
    "mediaMaster": ["https://example.org/record/123.html"],
    "sourceResource": {"creator": ["J Doe"], "title": ["The Title"], "description": ["The description"],
                       "date": [{"displayDate": "2012-05-07", "begin": "2012-05-07", "end": "2012-05-07"}],
                       "identifier": ["us-history-13243", "j-doe-archives-2343"], "type": ["image", "text"]},
}
MARKUP = """== {{int:filedesc}} ==
 {{ Artwork
   | Other fields 1 = {{ InFi | Creator | J Doe }}
   | title = The Title
   | description = The description
   | date = 2012-05-07
   | permission = {{%s}}
   | source = {{ DPLA
       | Q83878447
       | hub = Q83878447
       | url = https://example.org/record/123
       | dpla_id = 4b1bd605bd1d75ee23baadb0e1f24457
       | local_id = us-history-13243; j-doe-archives-2343
   }}
   | Institution = {{ Institution | wikidata = Q83878447 }}
 }}"""


def test_wiki_mapper_test():
    table = institutions()
    # isRightsWikiEligible
    assert rights_eligible("http://rightsstatements.org/vocab/NoC-US/1.0/")
    assert not rights_eligible("http://rightsstatements.org/page/NoC-US/1.0/")
    assert not rights_eligible(None)
    # institutionalEligibility: the hub says upload (NARA, the Obama library does not); the institution does
    # (Georgia's Augusta-Richmond County Public Library); neither does (Georgia's Atlanta-Fulton library)
    assert institution_eligible(entity("Q518155"), entity("Q59661289"), table)
    assert institution_eligible(entity("Q5275908"), entity("Q30267984"), table)
    assert not institution_eligible(entity("Q5275908"), entity("Q4815975"), table)
    # isAssetEligible
    assert asset_eligible("http://iiif.manifest", ["http://media.master.com/image.jpg"])
    assert asset_eligible("http://iiif.manifest", [])
    assert asset_eligible(None, ["http://media.master/image.jpg"])
    assert not asset_eligible(None, [])
    # buildIIIFFromUrl
    assert iiif_from_contentdm("http://www.ohiomemory.org/cdm/ref/collection/p16007coll33/id/126923") == \
        "http://www.ohiomemory.org/iiif/info/p16007coll33/126923/manifest.json"
    assert iiif_from_contentdm("https://digitalgallery.bgsu.edu/collections/item/8911") is None
    # "validate this record"
    assert judge(INDIANA, table, nara) == Criteria(institution=True, asset=True, rights=True, id=True)
    # isIdEligible: 100297392 is in /wiki/ignore-nara.txt (a NARA record's local id)
    assert not nara(mint_id("nara", "not-a-blocked-id"))
    assert nara(mint_id("nara", "100297392"))


def test_wiki_markup_string_test():
    assert wiki_markup(BIG_SKY) == MARKUP % "NoC-US | Q83878447"
    assert wiki_markup({**BIG_SKY, "rights": "http://creativecommons.org/licenses/by-sa/1.0/"}) == MARKUP % "Cc-by-sa-1.0"
    assert escape_wiki("Title with {{ and }}") == "Title with <nowiki>{{</nowiki> and <nowiki>}}</nowiki>"
    assert license_code("http://creativecommons.org/licenses/by-sa/1.0/") == "Cc-by-sa-1.0"
    assert license_code("http://creativecommons.org/licenses/by-sa/2.5/scotland/") == "Cc-by-sa-2.5-scotland"
    assert license_code("http://creativecommons.org/licenses/by/3.0/igo/") == "Cc-by-3.0-igo"


def test_what_dpla_published_is_judged_as_ours(shared_fixtures):
    """DPLA's ingestion3-era documents and ours for the same original records: the same decision for each (none is
    eligible with DPLA's table as shipped, each for its own reasons)."""
    table = institutions()
    expected = {  # what fails, per document
        "ma-9f695d8c.json": ["rights"],  # Boston Public Library may upload, an IIIF manifest, but no rights statement
        "mdl-43a2f678.json": ["institution", "asset"],  # public domain mark, Mia not opted in, no media
        "northwest-heritage-084fd481.json": ["institution"],  # NoC-US, media masters, no Wikidata id for its museum
        "smithsonian-4a338737.json": ["institution"],  # CC0, media masters, the NMAH not opted in
        "maryland-c3ed2a5b.json": ["institution", "rights"],  # In Copyright
    }
    decided = {}
    for path in documents():
        dpla = json.loads(path.read_text(encoding="utf-8"))
        decided[path.name] = judge(with_derived_manifest(dpla), table, nara).failed()
        if profile_of(path) in PROFILES:
            ours, _ = publish(path)
            assert judge(with_derived_manifest(ours), table, nara).failed() == decided[path.name], path.name
    assert {name: decided[name] for name in expected} == expected
    assert not any(failed == [] for failed in decided.values())


def test_a_hubs_own_table_decides_and_contentdm_gets_its_manifest(shared_fixtures, tmp_path):
    smithsonian = json.loads((FOLDER / "smithsonian-4a338737.json").read_text(encoding="utf-8"))
    path = own_table(tmp_path, {("Smithsonian Institution", "National Museum of American History"): True})
    own = parse_institutions(path.read_bytes(), str(path))
    assert judge(smithsonian, own, nara).eligible and not judge(smithsonian, institutions(), nara).eligible
    # a CONTENTdm record without media: WikimediaMetadataExecutor derives its manifest before judging
    unc = json.loads((FOLDER / "ingestion1-era" / "digitalnc-a193ffef.json").read_text(encoding="utf-8"))
    assert with_derived_manifest(unc)["iiifManifest"] == \
        "http://dc.lib.unc.edu/iiif/info/morton_highlights/4143/manifest.json"
    assert with_derived_manifest(smithsonian) is smithsonian  # it has media masters: nothing derived


def test_the_shipped_data():
    table = institutions()
    assert len(table.hubs) == 48 and table.hubs["National Archives and Records Administration"] == "Q518155"
    assert table.hubs["Community Webs"] == ""  # a hub without a Wikidata id: Gate D does not resolve it
    ids = nara_blocked_ids()
    assert len(ids) == 269_021 and ids == sorted(set(ids)) and ids[0] == 77 and 100297392 in ids
    assert replace(Criteria(True, True, True, True), rights=False).failed() == ["rights"]


@pytest.mark.parametrize(("data", "message"), [
    (b"{not json", "the institutions table is not JSON"),
    (b"[]", "must be an object of hubs"),
    (b'{"Hub": []}', "hub 'Hub' of the institutions table is not an object"),
    (b'{"Hub": {"Wikidata": "Q1", "upload": false, "institutions": {"A": 1}}}', "institution 'A' of hub 'Hub'"),
    (b'{"Hub": {"Wikidata": "", "upload": true}}', "gives no Wikidata id"),
])
def test_a_table_that_is_not_one_is_refused_naming_its_file(data, message):
    with pytest.raises(ConfigError, match=message) as refused:
        parse_institutions(data, "/etc/hub/institutions_v2.json")
    assert refused.value.file == "/etc/hub/institutions_v2.json"


def test_a_hubs_own_table_serves_enrichment_and_eligibility_alike(tmp_path, monkeypatch):
    """``INGEST_WIKI_INSTITUTIONS``: the one table of the ``wikidata`` step and of eligibility (read once)."""
    table = tmp_path / "institutions_v2.json"
    table.write_text(json.dumps({"Riverside Hub": {"Wikidata": "Q7337", "upload": False, "institutions": {
        "Millbrook Historical Society": {"Wikidata": "Q7338", "upload": True}}}}), encoding="utf-8")
    settings = Settings.from_env({"INGEST_WIKI_INSTITUTIONS": str(table), "INGEST_SITEMAP_URL": "https://maps.hub.org/",
                                  "INGEST_ITEM_URL": "https://hub.org/item"})
    assert (settings.sitemap_url, settings.item_url) == ("https://maps.hub.org", "https://hub.org/item")
    monkeypatch.setattr(Settings, "current", staticmethod(lambda: settings))
    assert wikidata_uri("Millbrook Historical Society", "Riverside Hub") == entity("Q7338")
    assert institutions().upload == {(entity("Q7337"), entity("Q7338")): True}
    assert wikidata_uri("Minnesota Digital Library") is None  # DPLA's table is not read any more
    gone = Settings.from_env({"INGEST_WIKI_INSTITUTIONS": str(tmp_path / "missing.json")})
    monkeypatch.setattr(Settings, "current", staticmethod(lambda: gone))
    with pytest.raises(ConfigError, match="INGEST_WIKI_INSTITUTIONS\\) cannot be read") as missing:
        institutions()
    assert missing.value.file == str(tmp_path / "missing.json")
    with pytest.raises(ConfigError, match="INGEST_SITEMAP_URL must be an http"):
        Settings.from_env({"INGEST_SITEMAP_URL": "sitemaps.hub.org"})
