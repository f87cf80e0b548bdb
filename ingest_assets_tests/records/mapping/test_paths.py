"""``Paths`` answers every mapping XPath exactly as lxml does (values and document order), whether it walks
the tree itself or leaves the expression to lxml."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from ingest_assets.core.xml_input import NAMESPACES, parse_document, safe_parser
from ingest_assets.records.mapping.mapper import find_root
from ingest_assets.records.mapping.paths import Paths, strings
from ingest_assets.records.mapping.profiles import PROFILES

FIXTURES = {
    "oai_dc": ["oai-pmh/zenodo-listrecords-oai_dc.xml", "oai-pmh/cyberleninka-listrecords-cyrillic-dcterms.xml"],
    "qdc": ["dpla/provider-maryland-cdm-oai_qdc-record.xml"],
    "mods": ["oai-pmh/harvard-librarycloud-listrecords-mods-resumption.xml", "dpla/provider-montana-repox-getrecord-mods.xml"],
}
MODS = NAMESPACES["mods"]


def lxml_strings(expr: str, root: etree._Element) -> list[str]:
    return strings(etree.XPath(expr, namespaces=NAMESPACES, smart_strings=False)(root))


def profile_expressions(profile) -> list[str]:
    found = []
    for rule in profile.rules.values():
        xpath = rule.get("xpath")
        found.extend(xpath if isinstance(xpath, list) else [xpath] if xpath else [])
    return found


@pytest.mark.parametrize("mapping", sorted(FIXTURES))
def test_profile_xpaths_on_fixture_records(mapping, originals):
    profile = PROFILES[mapping]
    expressions = profile_expressions(profile) + [  # override-style expressions, walked or not
        "dc:identifier | dc:relation", "mods:location/mods:url/@usage | mods:location/mods:url",
        "mods:name/mods:namePart[1]", "string(mods:titleInfo/mods:title)", "*[local-name()='title']",
    ]
    paths = Paths()
    keys = [paths.add(expr) for expr in expressions]
    assert len(set(keys)) == len(set(expressions))  # one id per distinct expression
    parser = safe_parser(remove_comments=True)
    compared = 0
    for name in FIXTURES[mapping]:
        for original in originals(name, "fixture"):
            if original["deleted"]:
                continue
            root = find_root(parse_document(original["document"], parser), profile.root_tags)
            selection = paths.select(root)
            for expr, key in zip(expressions, keys):
                expected = lxml_strings(expr, root)
                assert selection.strings(key) == expected, (original["id"], expr)
                compared += bool(expected)
    assert compared >= 10  # the comparisons were not vacuous


def test_union_order_attributes_and_tests():
    root = etree.fromstring(
        f'<mods xmlns="{MODS}" xmlns:xlink="http://www.w3.org/1999/xlink">'
        '<accessCondition xlink:href=" http://rightsstatements.org/vocab/InC/1.0/ ">In copyright</accessCondition>'
        '<note type="content">first</note><abstract>second</abstract><note>third</note><note type="x">no</note>'
        '<accessCondition>  </accessCondition><accessCondition xlink:href="">plain</accessCondition>'
        '<location><url access="preview" usage="primary display">p</url><url access="raw object">r</url></location>'
        "</mods>"
    )
    cases = {
        "mods:accessCondition/@xlink:href | mods:accessCondition":
            ["In copyright", "http://rightsstatements.org/vocab/InC/1.0/", "plain"],
        "mods:abstract | mods:note[@type='content' or not(@type)]": ["first", "second", "third"],
        "mods:note[not(@type='content') and @type]": ["no"],
        "mods:location/mods:url[(@access='preview' or @access='x') and @usage = \"primary display\"]": ["p"],
        "mods:location/mods:url[@access][not(@usage)]": ["r"],
        # one step under two tests: left to lxml, which gives an element passing both once
        "mods:note[@type] | mods:note[@type='content']": ["first", "no"],
        "mods:location[@x]/mods:url | mods:location/mods:url[@usage]": ["p"],
    }
    paths = Paths()
    keys = {expr: paths.add(expr) for expr in cases}
    selection = paths.select(root)
    for expr, expected in cases.items():
        assert selection.strings(keys[expr]) == expected == lxml_strings(expr, root), expr


def test_bad_expressions_raise_as_lxml_does():
    paths = Paths()
    with pytest.raises(etree.XPathError):
        paths.add("nope:title")
    with pytest.raises(etree.XPathError):
        paths.add("mods:title[")


TAGS = ["a", "b", f"{{{MODS}}}a", f"{{{MODS}}}b"]
NAMES = ["a", "b", "mods:a", "mods:b"]
ATTRIBUTES = ["type", "access", "{http://www.w3.org/1999/xlink}href"]
ATTRIBUTE_NAMES = ["@type", "@access", "@xlink:href"]
VALUES = ["x", "y", "", " x ", "5", "12", " 5.0", ".5", "-3", "1e3", "inf"]


@st.composite
def trees(draw, depth=0):
    element = etree.Element(draw(st.sampled_from(TAGS)))
    for name in ATTRIBUTES:
        if draw(st.booleans()):
            element.set(name, draw(st.sampled_from(VALUES)))
    element.text = draw(st.sampled_from([None, "", "\n", "x", " x ", "x \n y"])  # compared by tests
                        | st.integers(0, 999).map(" t{} ".format))  # order shows
    if depth < 3:
        for child in draw(st.lists(trees(depth + 1) | st.just(etree.Comment("c")), max_size=4)):
            child.tail = draw(st.sampled_from([None, " "]) | st.integers(0, 999).map("tail{}".format))
            element.append(child)
    return element


relative_paths = st.lists(st.sampled_from(NAMES), min_size=1, max_size=2).map("/".join)
predicates = st.recursive(
    st.sampled_from([*ATTRIBUTE_NAMES, "@*"])
    | st.builds("{}{}'{}'".format, st.sampled_from(ATTRIBUTE_NAMES), st.sampled_from(["=", "!="]), st.sampled_from(VALUES))
    | st.builds("{} {} {}".format, st.sampled_from(ATTRIBUTE_NAMES), st.sampled_from(["<", "<=", ">", ">=", "=", "!="]),
                st.sampled_from(["5", "12", "0.5", "1000"]))
    | relative_paths  # reads below the element: a path, or string values compared
    | st.builds("{} {} '{}'".format, relative_paths | st.sampled_from([".", "normalize-space(.)"]),
                st.sampled_from(["=", "!="]), st.sampled_from(["x", " x ", "x y", "x \n y"])),
    lambda inner: st.builds("not({})".format, inner)
    | st.builds("({})".format, inner)
    | st.builds("{} {} {}".format, inner, st.sampled_from(["and", "or"]), inner)
    | st.builds("{}[{}]".format, relative_paths, inner)
    | st.builds("({} | {})[{}]".format, relative_paths, relative_paths, inner),
    max_leaves=4,
)
steps = st.builds(lambda name, tests: name + "".join(f"[{t}]" for t in tests),
                  st.sampled_from(NAMES), st.lists(predicates, max_size=2))
unions = st.builds(lambda first, second, tests: f"({first} | {second})" + "".join(f"[{t}]" for t in tests),
                   steps, steps, st.lists(predicates, max_size=2))  # (a | b)[test]: only as the first step
alternatives = st.builds(lambda first, parts, attribute: "/".join([first, *parts]) + (f"/{attribute}" if attribute else ""),
                         steps | unions, st.lists(steps, max_size=2), st.none() | st.sampled_from(ATTRIBUTE_NAMES))
expressions = st.lists(alternatives, min_size=1, max_size=3).map(" | ".join)


@settings(max_examples=150, deadline=None)
@given(st.lists(expressions, min_size=1, max_size=4), st.lists(trees(), min_size=1, max_size=3))
def test_walk_agrees_with_lxml_on_generated_trees(exprs, roots):
    paths = Paths()
    keys = [paths.add(expr) for expr in exprs]
    conditions = [paths.add_condition(expr) for expr in exprs]  # a path as a condition: does it find a node
    booleans = [etree.XPath(f"boolean({expr})", namespaces=NAMESPACES) for expr in exprs]
    for root in roots:
        selection = paths.select(root)
        for expr, key, condition, boolean in zip(exprs, keys, conditions, booleans):
            assert selection.strings(key) == lxml_strings(expr, root), (expr, etree.tostring(root))
            assert selection.holds(condition) == boolean(root), (expr, etree.tostring(root))


def names_record(*parts: str) -> etree._Element:
    return etree.fromstring(f'<mods xmlns="{MODS}">'
                            + "".join(f"<name><namePart>{part}</namePart></name>" for part in parts) + "</mods>")


def test_rules_over_the_same_items_share_one_set_that_selects_an_item_once_per_record():
    paths = Paths()
    names = paths.child("mods:name")
    assert paths.child("mods:name") is names and paths.child("mods:subject") is not names
    part = names.add("mods:namePart")
    first = names_record("Kay, John", "Owner")
    selection = names.select(first[0], first)
    assert names.select(first[0], first) is selection  # the second rule reads the first one's selection
    assert [names.select(item, first).strings(part) for item in first] == [["Kay, John"], ["Owner"]]
    second = names_record("Buxton")
    assert names.select(second[0], second).strings(part) == ["Buxton"]
    assert names.select(first[1], first).strings(part) == ["Owner"]  # the other record again: selected afresh
    alone = Paths().child("mods:name")
    alone.add("mods:namePart")
    assert alone.select(first[0], first) is not alone.select(first[0], first)  # one rule: nothing kept


def test_nypl_creators_and_contributors_by_role_record_after_record(shared_fixtures):
    """One mapper maps a record, one with the roles swapped, and the first again, as a new mapper maps each."""
    from ingest_assets.core.registry import ProviderEntry
    from ingest_assets.records.mapping import mapper_for

    text = (shared_fixtures / "ingestion3" / "nypl.json").read_text(encoding="utf-8")
    swapped = text.replace(">Engraver<", ">@@<").replace(">Owner<", ">Engraver<").replace(">@@<", ">Owner<")
    assert swapped != text

    def mapper():
        return mapper_for(ProviderEntry("nypl", {"mapping": "nypl"}))

    def original(document: str) -> dict:
        return {"id": "b1", "document": document, "mimetype": "application/json"}

    def names(result) -> tuple:
        source = result.record["sourceResource"]
        return [a["name"] for a in source["creator"]], [a["name"] for a in source["contributor"]]

    one = mapper()
    mapped = [names(one.map(original(document))) for document in (text, swapped, text)]
    assert mapped == [names(mapper().map(original(document))) for document in (text, swapped, text)]
    assert mapped[0] == (["Kay, John (1742-1826)"], ["Contributor"])
    assert mapped[1] == (["Contributor"], ["Kay, John (1742-1826)"])
