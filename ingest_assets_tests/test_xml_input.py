"""``core/xml_input``: records that use prefixes they never declare are read as ingestion3 reads them (given what the
prefixes mean), with no limit of the hardened parser loosened: every other error stays an error."""

from __future__ import annotations

import io

import pytest
from lxml import etree

from ingest_assets.core.xml_input import (
    NAMESPACES,
    UNDECLARED_URI,
    UnsafeXML,
    iter_elements,
    parse_document,
    parse_xml,
    safe_parser,
)

DC = NAMESPACES["dc"]
RECORD = ('<?xml version="1.0" encoding="UTF-8"?>\n<!-- harvested -->\n<record><metadata>'
          '<oai_qdc:qualifieddc xsi:schemaLocation="x y"><dc:title>Viaduct</dc:title><qdc:extra>e</qdc:extra>'
          '<other:thing>t</other:thing></oai_qdc:qualifieddc></metadata></record>')


def test_undeclared_prefixes_take_the_meanings_given(shared_fixtures):
    root, removed = parse_xml(RECORD.encode(), {**NAMESPACES, "qdc": "urn:example:qdc"})
    metadata = root[0][0]
    assert metadata.tag == "{http://worldcat.org/xmlschemas/qdc-1.0/}qualifieddc" and not removed
    assert [child.tag for child in metadata] == [f"{{{DC}}}title", "{urn:example:qdc}extra",
                                                 f"{{{UNDECLARED_URI}other}}thing"]  # nobody says what other: is
    assert metadata.get(f"{{{NAMESPACES['xsi']}}}schemaLocation") == "x y"
    for name in ("il.xml", "scdl.xml", "vt.xml"):  # ingestion3's records that use undeclared prefixes
        assert parse_xml((shared_fixtures / "ingestion3" / name).read_bytes(), NAMESPACES)[0].tag.endswith("record")


def test_strict_unless_asked_and_every_other_error_stays():
    with pytest.raises(etree.XMLSyntaxError, match="Namespace prefix xsi"):
        parse_xml(RECORD.encode())  # a page without prefixes given: as before
    parser = safe_parser()
    broken = [
        RECORD.replace("</record>", ""),  # not well-formed as well
        "<dc:r>" + "<x>" * 300 + "</x>" * 300 + "</dc:r>",  # deeper than the parser's limit
        "<dc:r>" + "x" * (11 * 1024 * 1024) + "</dc:r>",  # a text node above the parser's limit
    ]
    for text in broken:
        with pytest.raises(etree.XMLSyntaxError):
            parse_document(text, parser, NAMESPACES)
    wide = '<?xml version="1.0" encoding="UTF-16"?><dc:r/>'.encode("utf-16")
    with pytest.raises(etree.XMLSyntaxError):
        parse_xml(wide, NAMESPACES)  # bytes of a wide encoding are never rewritten


def test_a_namespace_name_that_is_no_uri_is_read_percent_encoded(shared_fixtures):
    record = ('<record xmlns:cnt="http://www.w3.o rg/2011/content#" xmlns:x=\'urn:a|b\'><dc:title>T</dc:title>'
              "<cnt:chars>c</cnt:chars><x:y/></record>")
    with pytest.raises(etree.XMLSyntaxError, match="not a valid URI"):
        parse_xml(record.encode())  # without prefixes given: as before
    root = parse_document(record, safe_parser(), NAMESPACES)
    assert [child.tag for child in root] == [f"{{{DC}}}title", "{http://www.w3.o%20rg/2011/content#}chars",
                                             "{urn:a%7Cb}y"]
    txdl = parse_xml((shared_fixtures / "ingestion3" / "txdl.xml").read_bytes(), NAMESPACES)[0]
    assert txdl.tag == "record"  # ingestion3's TxdlMappingTest record declares that 'cnt' namespace
    with pytest.raises(etree.XMLSyntaxError):  # a repaired declaration repairs nothing else
        parse_document(record.replace("</record>", ""), safe_parser(), NAMESPACES)


def test_declared_entities_are_still_refused_and_never_expanded():
    bomb = ('<?xml version="1.0"?><!DOCTYPE record [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;">]>'
            "<record><dc:title>&b;</dc:title></record>")
    with pytest.raises(UnsafeXML):
        parse_xml(bomb.encode(), NAMESPACES)
    title = parse_document(bomb, safe_parser(), NAMESPACES)[0]  # a record: references stay unexpanded
    assert title.tag == f"{{{DC}}}title" and "aaaa" not in etree.tostring(title, encoding="unicode")


def test_streamed_elements_take_a_namespace_name_libxml2_refuses_as_a_uri(shared_fixtures):
    """txdl's records declare ``xmlns:cnt="http://www.w3.o rg/2011/content#"``: libxml2 says so once the document is
    read; the elements were all streamed and the document is not refused (another parse's errors, earlier in the
    thread, do not count). A document that is broken as well still is."""
    with pytest.raises(etree.XMLSyntaxError):
        etree.fromstring(b"<broken>")  # leaves an error in the thread's global log
    record = (shared_fixtures / "ingestion3" / "txdl.xml").read_bytes()
    page = b"<records>" + record.split(b"?>", 1)[1] * 2 + b"</records>"
    assert len(list(iter_elements(io.BytesIO(page), "record"))) == 2
    with pytest.raises(etree.XMLSyntaxError):  # libxml2 names its first error, the URI, but the cut is one too
        list(iter_elements(io.BytesIO(page[:-20]), "record"))
