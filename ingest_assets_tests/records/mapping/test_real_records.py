"""Real records DPLA published map whole (``support/real_records.py``), and ingestion1's rendering of them is written
back to the hub's document faithfully (``support/ingestion1.py``): rendered again the way ingestion1 rendered it,
the written document gives the stored originalRecord back, key for key."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from lxml import etree

from ingest_assets_tests.support.ingestion1 import FLAT_DC, FLAT_DC_OWN, MODS, UnknownShape, delivered, parsed
from ingest_assets_tests.support.real_records import ERAS, contributor_of, documents, figures

INGESTION1 = ERAS["ingestion1"]
XML_SHAPES_KEPT_WHOLE = {"oai": ("header", "metadata", "about"), "marc": None, "nara-arc": None, "primo": None}
DROPPED = {"_id", "_rev", "id", "provider", "collection", "ingestType", "ingestDate"}
FLAT_NAMES = {element: name for name, element in reversed(FLAT_DC.items())}  # dc:identifier -> handle


def test_every_real_record_of_a_hub_with_a_profile_maps_whole(shared_fixtures):
    found = figures()
    assert Counter(o.era for o in found.outcomes) == {"ingestion3": 12, "ingestion1": 76}
    print("\n" + found.table())
    broken = [(o.era, o.document, o.profile, [(m.kind, m.field, m.reason) for m in o.result.messages])
              for o in found.outcomes if o.profile is not None and not o.whole]
    assert not broken, f"records that no longer map whole: {broken}"
    # the hubs ingestion3 has no mapping for are named, with the reason, not skipped in silence
    unmapped = sorted((o.era, o.document) for o in found.outcomes if o.profile is None)
    assert unmapped == [("ingestion1", "esdn-bf12d2a3.json"), ("ingestion1", "illinois-3dc5c8e9.json"),
                        ("ingestion1", "usc-003f7a50.json"), ("ingestion3", "esdn-bf12d2a3.json")]
    assert all(o.note for o in found.outcomes if o.profile is None)
    # every other record is mapped by its hub's own profile, but those of a format the hub no longer delivers
    retired = sorted((o.document, o.profile.rsplit("/", 1)[-1]) for o in found.outcomes if o.profile != o.bound)
    assert retired == [("georgia-ddb468bc.json", "oai_dc"), ("mdl-6f84fc97.json", "oai_dc"),
                       *((f"nara-{n}.json", "nara-arc.yaml") for n in
                         ("29129512", "2918bd63", "331e1437", "421eb243", "4c8ede4b", "6a7a5b5e", "8e7a9ede"))]


def test_each_document_is_read_as_the_shape_its_hub_delivered(shared_fixtures):
    shapes = Counter()
    for era, path in documents():
        if era == "ingestion1":
            dpla = json.loads(path.read_text(encoding="utf-8"))
            shapes[contributor_of(dpla), delivered(dpla["originalRecord"], contributor_of(dpla)).shape] += 1
    assert shapes == {
        ("hathitrust", "marc"): 26, ("mwdl", "primo"): 11, ("scdl-usc", "flat-dc"): 10, ("scdl-clemson", "flat-dc"): 1,
        ("nara", "nara-arc"): 7, ("digital-commonwealth", "oai"): 5, ("nypl", "nypl-solr"): 5,
        ("mdl", "mdl-api"): 2, ("mdl", "flat-dc"): 1, ("the_portal_to_texas_history", "oai"): 2,
        ("digitalnc", "oai"): 1, ("esdn", "oai"): 1, ("gpo", "oai"): 1, ("georgia", "flat-dc"): 1,
        ("uiuc", "flat-dc"): 1, ("usc", "flat-dc"): 1,
    }


def rendered(element: etree._Element, outer: dict | None = None) -> object:
    """``element`` as ingestion1's xmltodict rendered it (attr_prefix='', '#text', names as written, declarations
    as keys, repeated names as lists), to compare with a stored originalRecord."""
    outer = outer or {}
    out: dict = {}
    for prefix, uri in element.nsmap.items():
        if outer.get(prefix) != uri:
            out["xmlns" if prefix is None else f"xmlns:{prefix}"] = uri
    names = {uri: prefix for prefix, uri in element.nsmap.items()}
    for name, value in element.attrib.items():
        qname = etree.QName(name)
        out[f"{names[qname.namespace]}:{qname.localname}" if qname.namespace else name] = value
    for child in element.iterchildren(etree.Element):
        key = f"{child.prefix}:{etree.QName(child).localname}" if child.prefix else etree.QName(child).localname
        value = rendered(child, element.nsmap)
        out[key] = [*out[key], value] if isinstance(out.get(key), list) else [out[key], value] if key in out else value
    text = element.text if (element.text or "").strip() else ""  # white space alone is no text to xmltodict
    if not out:
        return text or None
    if text:
        out["#text"] = text
    return out


def stored_and_written_back(shape: str, original: dict, document) -> tuple[object, object]:
    """(what the written document must render back to, what it renders back to) for one shape."""
    if shape == "nypl-solr":  # the MODS element, inside the Solr document
        mods = etree.fromstring(json.loads(document.document)["solr_doc_hash"]["mods_st"])
        return ({k: v for k, v in original.items()
                 if k not in DROPPED and not k.startswith("tmp_") and k != "rightsStatementURI"}, rendered(mods))
    root = parsed(document)
    if shape == "flat-dc":  # the DC elements under their flattened names, the header's as ingestion1 put them
        header, metadata = (rendered(part, root.nsmap) for part in root.iterchildren())
        back = {FLAT_NAMES[k]: v for k, v in next(iter(metadata.values())).items() if not k.startswith("xmlns")}
        back.update({"id": header.pop("identifier"), **header})
        return {k: v for k, v in original.items() if k not in FLAT_DC_OWN}, back
    kept = XML_SHAPES_KEPT_WHOLE[shape]
    return {k: v for k, v in original.items() if (k in kept if kept else k not in DROPPED)}, rendered(root)


@pytest.mark.parametrize("shape", sorted([*XML_SHAPES_KEPT_WHOLE, "nypl-solr", "flat-dc"]))
def test_a_written_document_renders_back_to_the_stored_original(shared_fixtures, shape):
    """Every key, attribute or element, and every text of the stored rendering is in the written document, where
    xmltodict would have found it; the writer adds only the declarations of the envelope the record was cut from."""
    compared = 0
    for path in sorted(INGESTION1.glob("*.json")):
        dpla = json.loads(path.read_text(encoding="utf-8"))
        document = delivered(dpla["originalRecord"], contributor_of(dpla))
        if document.shape != shape:
            continue
        expected, back = stored_and_written_back(shape, dpla["originalRecord"], document)
        for key in [key for key in back if key.startswith("xmlns") and key not in expected]:
            del back[key]  # the envelope's declarations (OAI-PMH, MARC 21, Primo's search namespace, MODS)
        assert back == expected, path.name
        compared += 1
    assert compared


def test_attributes_and_elements_are_told_apart_as_the_format_defines_them(shared_fixtures):
    def root(name: str) -> etree._Element:
        dpla = json.loads((INGESTION1 / name).read_text(encoding="utf-8"))
        return parsed(delivered(dpla["originalRecord"], contributor_of(dpla)))

    marc = root("hathi-00001367.json")  # MARC: tag, ind1, ind2 and code are attributes
    assert marc.xpath("string(m:controlfield[@tag='001'])", namespaces={"m": "http://www.loc.gov/MARC21/slim"}) == "011985187"
    assert marc.xpath("string(m:datafield[@tag='100' and @ind1='1']/m:subfield[@code='a'])",
                      namespaces={"m": "http://www.loc.gov/MARC21/slim"}) == "Adams, R. N."
    nc = root("digitalnc-a193ffef.json")  # MODS without text beside: 'usage' and 'access' are MODS attributes
    url = nc.xpath("//m:location/m:url[@usage='primary display']", namespaces={"m": MODS})
    assert [u.get("access") for u in url] == ["object in context"]
    assert nc.tag == "{http://www.openarchives.org/OAI/2.0/}record"
    nara = root("nara-29129512.json")  # no public schema: every member an element
    assert nara.xpath("string(creators/creator[creator-type='Most Recent']/num)") == "1"
    primo = root("mwdl-0a73968f.json")  # the search document's attributes
    assert primo.get("RANK") == "0.79999995" and primo.get("ID") == "2008828"


def test_flattened_dc_becomes_the_oai_record_ingestion1_flattened(shared_fixtures):
    dpla = json.loads((INGESTION1 / "scdl-07b3e8d1.json").read_text(encoding="utf-8"))
    record = parsed(delivered(dpla["originalRecord"], "scdl-clemson"))
    ns = {"o": "http://www.openarchives.org/OAI/2.0/", "dc": "http://purl.org/dc/elements/1.1/",
          "dcterms": "http://purl.org/dc/terms/", "qdc": "http://epubs.cclrc.ac.uk/xmlns/qdc/"}
    assert record.xpath("string(o:header/o:identifier)", namespaces=ns) == dpla["originalRecord"]["id"]
    assert record.xpath("o:metadata/qdc:qualifieddc/dc:identifier/text()", namespaces=ns) == \
        [dpla["originalRecord"]["handle"]] if isinstance(dpla["originalRecord"]["handle"], str) else dpla["originalRecord"]["handle"]
    assert record.xpath("o:metadata/qdc:qualifieddc/dcterms:medium/text()", namespaces=ns) == [dpla["originalRecord"]["medium"]]
    assert not record.xpath("//*[local-name()='label' or local-name()='status']")  # ingestion1's own keys


def test_nypl_and_mdl_records_go_into_the_envelope_their_hubs_deliver_now(shared_fixtures):
    dpla = json.loads((INGESTION1 / "nypl-73a769ca.json").read_text(encoding="utf-8"))
    solr = json.loads(delivered(dpla["originalRecord"], "nypl").document)
    assert solr["uuid"] == "510d47e0-ea68-a3d9-e040-e00a18064a99"
    assert solr["solr_doc_hash"]["useStatementURI_rtxt"] == ["http://rightsstatements.org/vocab/UND/1.0/"]
    mods = etree.fromstring(solr["solr_doc_hash"]["mods_st"])
    assert mods.tag == f"{{{MODS}}}mods" and mods.findtext(f"{{{MODS}}}titleInfo/{{{MODS}}}title") == "The Kittens."
    assert not mods.xpath("//*[starts-with(local-name(), 'tmp_')]")
    dpla = json.loads((INGESTION1 / "mdl-36516d02.json").read_text(encoding="utf-8"))
    api = json.loads(delivered(dpla["originalRecord"], "mdl").document)
    assert api["attributes"]["metadata"] == dpla["originalRecord"]["record"]


def test_what_fits_no_known_shape_is_refused_by_name():
    with pytest.raises(UnknownShape, match="hub 'x'"):
        delivered({"foo": "bar"}, "x")
    with pytest.raises(UnknownShape, match="never wrote: \\['frobnicate'\\]"):
        delivered({"datestamp": "2014-01-01", "handle": "h", "frobnicate": "?"}, "x")
