"""VoID parsing and ``modified`` comparison on the real VoID fixtures and GeoLink-style VoIDs."""

import json
from datetime import date, datetime, timezone

import pytest

from ingest_assets.core.errors import ConfigError, FetchError, ParseError, ValidationError
from ingest_assets.linked_data.graphs import GraphState
from ingest_assets.linked_data.importer import ProviderSource, check, fetch_void
from ingest_assets.core.modified import parse_modified
from ingest_assets.linked_data import void as void_module
from ingest_assets.linked_data.void import parse_void
from ingest_assets.core.registry import ProviderEntry, load_registry

UTC = timezone.utc


def test_a_broken_fixture_void_fails_naming_provider_file_and_cause(void_fixtures):
    name = "chembl-rdf-void-2012-10-broken.ttl"
    url = f"https://provider.example/{name}"
    with pytest.raises(ParseError) as caught:
        parse_void((void_fixtures / name).read_bytes(), provider="chembl", url=url)
    assert "line 35" in str(caught.value)
    assert caught.value.provider == "chembl" and caught.value.file == url


@pytest.mark.parametrize(
    ("name", "dataset", "dumps"),
    [
        ("glharvest-test-simple-void.ttl", "http://lod.dataone.org/test", 1),
        ("chembl-rdf-void-pav.ttl", "http://linkedchemistry.info/chembl/void.ttl#ChEMBLRDF", 1),  # pav: dates only
        ("bcodmo-nerc-parameter-vocab-void.rdf", "http://vocab.nerc.ac.uk/collection/P01/current/", 13),
    ],
)
def test_real_voids_without_dcterms_modified_are_read_their_dumps_telling_changes(void_fixtures, name, dataset, dumps):
    void = parse_void((void_fixtures / name).read_bytes(), provider="p", url=f"https://provider.example/{name}")
    assert (void.dataset, void.modified, void.modified_text, void.full, len(void.dumps)) == (dataset, None, None,
                                                                                          True, dumps)


def test_rdfxml_void_is_sniffed_without_extension_or_type(void_fixtures):
    # the BCO-DMO VoID served as text/plain from an extension-less URL: only sniffing finds RDF/XML
    data = (void_fixtures / "bcodmo-nerc-parameter-vocab-void.rdf").read_bytes()
    void = parse_void(data, provider="bcodmo", url="https://provider.example/void", content_type="text/plain")
    assert void.dataset == "http://vocab.nerc.ac.uk/collection/P01/current/" and len(void.dumps) == 13


def test_content_type_chooses_syntax_when_the_extension_does_not(void_fixtures):
    data = (void_fixtures / "chembl-rdf-void-2012-10-broken.ttl").read_bytes()
    with pytest.raises(ParseError, match="not valid turtle"):
        parse_void(data, provider="chembl", url="https://provider.example/void", content_type="text/turtle")


def _void(modified: str, features: str = "glh:FullDump", dumps: str = "<dump.ttl>", dc: str = "dcterms") -> bytes:
    return (
        "@prefix void: <http://rdfs.org/ns/void#> .\n"
        f"@prefix {dc}: <http://purl.org/dc/terms/> .\n"
        "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n"
        "@prefix glh: <http://schema.geolink.org/dev/voc/harvester#> .\n"
        f"<#d> a void:Dataset ; void:feature {features} ; {dc}:modified {modified} ; void:dataDump {dumps} .\n"
    ).encode()


@pytest.mark.parametrize(
    ("literal", "expected"),
    [
        ('"2015-11-05"^^xsd:date', datetime(2015, 11, 5, tzinfo=UTC)),
        ('"2015-11-05+02:00"^^xsd:date', datetime(2015, 11, 4, 22, tzinfo=UTC)),
        ('"2015-11-05T10:00:00-05:00"^^xsd:dateTime', datetime(2015, 11, 5, 15, tzinfo=UTC)),
        ('"2015-11-05T10:00:00Z"^^xsd:dateTime', datetime(2015, 11, 5, 10, tzinfo=UTC)),
        ('"2015-12-04 14:25:44.758604"', datetime(2015, 12, 4, 14, 25, 44, 758604, tzinfo=UTC)),
    ],
)
def test_modified_forms_become_aware_utc(literal, expected):
    void = parse_void(_void(literal), provider="p", url="https://p.example/void.ttl")
    assert void.modified == expected
    assert void.modified_text == literal.split('"')[1]  # the provider's own spelling, for the acknowledgement


def test_dc_prefix_bound_to_dcterms_is_accepted():
    void = parse_void(_void('"2016-01-01"^^xsd:date', dc="dc"), provider="p", url="https://p.example/void.ttl")
    assert void.modified == datetime(2016, 1, 1, tzinfo=UTC)
    assert void.full and void.dumps == ("https://p.example/dump.ttl",)


def test_features_and_dumps():
    void = parse_void(
        _void('"2016-01-01"^^xsd:date', "glh:PartialDump, <http://www.w3.org/ns/formats/N-Triples>", "<b.nt>, <a.nt>"),
        provider="p",
        url="https://p.example/data/void.ttl",
    )
    assert not void.full and void.kind == "partial"
    assert void.dumps == ("https://p.example/data/a.nt", "https://p.example/data/b.nt")
    assert void.dump_format.name == "N-Triples"
    # no FullDump or PartialDump feature: a full dump (the LOD cloud's VoIDs do not say)
    assert parse_void(_void('"2016-01-01"^^xsd:date', "<http://www.w3.org/ns/formats/Turtle>"), provider="p",
                      url="https://p.example/void.ttl").kind == "full"


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (_void('"2016-01-01"^^xsd:date', "glh:FullDump, glh:PartialDump"), "both"),
        (_void('""'), "is not a date"),
        (_void('"2016-01-01"^^xsd:date', dumps='"dump.ttl"'), "void:dataDump"),
    ],
)
def test_bad_geolink_voids_name_the_property(body, needle):
    with pytest.raises(ValidationError, match=needle) as caught:
        parse_void(body, provider="p", url="https://p.example/void.ttl")
    assert "provider 'p'" in str(caught.value)


def _subsets_void(top: str, *subsets: str) -> bytes:
    return (
        "@prefix void: <http://rdfs.org/ns/void#> .\n@prefix dcterms: <http://purl.org/dc/terms/> .\n"
        "@prefix glh: <http://schema.geolink.org/dev/voc/harvester#> .\n"
        f"<#all> a void:Dataset ; {top} .\n" + "".join(f"{s} .\n" for s in subsets)
    ).encode()


def test_subsets_each_have_their_own_modified_dumps_and_features():
    void = parse_void(
        _subsets_void(
            "void:feature glh:FullDump, <http://www.w3.org/ns/formats/Turtle> ; void:subset <#b>, <#a>",
            '<#a> dcterms:modified "2016-01-01" ; void:dataDump <a.tar.gz>, <a.ttl>',
            '<#b> dcterms:modified "2016-03-01" ; void:feature glh:PartialDump ; void:dataDump <b.zip>',
        ),
        provider="p",
        url="https://p.example/void.ttl",
    )
    a, b = void.subsets
    assert (a.dataset, a.full, a.dumps, a.dump_format.name) == (
        "https://p.example/void.ttl#a", True, ("https://p.example/a.tar.gz", "https://p.example/a.ttl"), "Turtle")
    assert (b.dataset, b.full, b.modified) == ("https://p.example/void.ttl#b", False, datetime(2016, 3, 1, tzinfo=UTC))
    assert void.modified == b.modified and void.modified_text == "2016-03-01" and not void.full
    assert void.dumps == ("https://p.example/a.tar.gz", "https://p.example/a.ttl", "https://p.example/b.zip")


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (_subsets_void("void:feature glh:FullDump ; void:subset <#a>, [ dcterms:modified \"2016-01-01\" ]",
                       '<#a> dcterms:modified "2016-01-01" ; void:dataDump <a.ttl>'), "is not an IRI"),
        (_subsets_void("void:feature glh:FullDump ; void:subset <#a> ; void:dataDump <all.ttl>",
                       '<#a> dcterms:modified "2016-01-01" ; void:dataDump <a.ttl>'), "dumps belong to the subsets"),
        (_subsets_void("void:feature glh:FullDump ; void:subset <#a>", '<#a> dcterms:modified "2016-01-01"'),
         "lacks void:dataDump"),
        (_subsets_void("void:feature glh:FullDump ; void:subset <#a>",
                       '<#a> dcterms:modified "2016-01-01" ; void:dataDump <a.ttl> ; void:subset <#b>',
                       '<#b> dcterms:modified "2016-01-01" ; void:dataDump <b.ttl>'), "nested void:subset"),
    ],
)
def test_bad_subsets_are_refused_naming_the_subset(body, needle):
    with pytest.raises(ValidationError, match=needle) as caught:
        parse_void(body, provider="p", url="https://p.example/void.ttl")
    assert "provider 'p', file 'https://p.example/void.ttl', record 'https://p.example/void.ttl#" in str(caught.value)


def test_subsets_and_dumps_are_capped(monkeypatch):
    subsets = [f'<#s{n}> dcterms:modified "2016-01-01" ; void:dataDump <s{n}.ttl>, <t{n}.ttl>' for n in range(3)]
    body = _subsets_void(f"void:feature glh:FullDump ; void:subset {', '.join(f'<#s{n}>' for n in range(3))}",
                         *subsets)
    monkeypatch.setattr(void_module, "MAX_SUBSETS", 2)
    with pytest.raises(ValidationError, match=r"3 subsets \(at most 2\)"):
        parse_void(body, provider="p", url="https://p.example/void.ttl")
    monkeypatch.setattr(void_module, "MAX_SUBSETS", 3)
    monkeypatch.setattr(void_module, "MAX_DUMPS", 5)
    with pytest.raises(ValidationError, match=r"6 dumps \(at most 5\)"):
        parse_void(body, provider="p", url="https://p.example/void.ttl")


def test_rdfxml_void_with_entities_is_refused():
    body = (
        b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about="a">'
        b"<rdf:value>&x;</rdf:value></rdf:Description></rdf:RDF>"
    )
    with pytest.raises(ParseError, match="not acceptable XML"):
        parse_void(body, provider="p", url="https://p.example/void.rdf")
    bare = body.replace(b'<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>', b"<!DOCTYPE rdf:RDF>").replace(b"&x;", b"x")
    with pytest.raises(ParseError, match="not acceptable XML.*DOCTYPE"):  # rdflib's SAX reader is handed no DTD at all
        parse_void(bare, provider="p", url="https://p.example/void.rdf")


VOID_TERMS = {
    "void": "http://rdfs.org/ns/void#",
    "dcterms": "http://purl.org/dc/terms/",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "dataDump": {"@id": "void:dataDump", "@type": "@id"},
    "feature": {"@id": "void:feature", "@type": "@id"},
    "modified": {"@id": "dcterms:modified", "@type": "xsd:date"},
}


def _jsonld_void(context) -> bytes:
    return json.dumps({
        "@context": context,
        "@id": "#d",
        "@type": "void:Dataset",
        "feature": "http://schema.geolink.org/dev/voc/harvester#FullDump",
        "modified": "2016-03-03",
        "dataDump": "dump.nt",
    }).encode()


def test_jsonld_void_with_inline_context_is_read():
    void = parse_void(_jsonld_void(VOID_TERMS), provider="p", url="https://p.example/void.jsonld")
    assert void.modified == datetime(2016, 3, 3, tzinfo=UTC) and void.full
    assert void.dumps == ("https://p.example/dump.nt",)


@pytest.mark.parametrize(
    "context",
    [
        lambda ctx: ctx,  # the whole context by reference
        lambda ctx: [{"void": "http://rdfs.org/ns/void#"}, ctx],
        lambda ctx: {**VOID_TERMS, "@version": 1.1, "@import": ctx},
        lambda ctx: {**VOID_TERMS, "feature": {"@id": "void:feature", "@type": "@id", "@context": ctx}},  # scoped
        lambda ctx: "ctx.jsonld",  # relative: resolved against the VoID's own (private) URL
    ],
    ids=["context", "list", "import", "scoped", "relative"],
)
def test_jsonld_void_never_fetches_a_remote_context(site, context):
    # rdflib would fetch these itself, past HttpClient's guard against private addresses (127.0.0.1 here)
    served = site.put("/ctx.jsonld", json.dumps({"@context": VOID_TERMS}), content_type="application/ld+json")
    url = site.base + "/void.jsonld"
    with pytest.raises(ParseError, match="contexts must be inline") as caught:
        parse_void(_jsonld_void(context(served)), provider="p", url=url)
    assert caught.value.provider == "p" and caught.value.file == url
    assert site.requested == []


def test_jsonld_void_that_is_not_json_names_the_file():
    with pytest.raises(ParseError, match="not valid JSON") as caught:
        parse_void(b'{"@context": ', provider="p", url="https://p.example/void.jsonld")
    assert caught.value.file == "https://p.example/void.jsonld"


@pytest.mark.parametrize(
    ("registry", "void_literal", "due"),
    [
        (date(2015, 10, 1), '"2015-11-05"^^xsd:date', True),  # date-only both sides
        (date(2015, 11, 5), '"2015-11-05"^^xsd:date', False),  # the same day is not newer
        (date(2015, 11, 5), '"2015-11-05T00:00:01Z"^^xsd:dateTime', True),  # a datetime later that day
        # naive registry datetime is UTC; 15:00+01:00 is 14:00 UTC, before 14:25 (a naive compare says newer)
        (datetime(2015, 12, 4, 14, 25, 44, 758604), '"2015-12-04T15:00:00+01:00"^^xsd:dateTime', False),
        ("2015-12-04T14:25:44-08:00", '"2015-12-04T20:00:00Z"^^xsd:dateTime', False),
        (None, '"1999-01-01"^^xsd:date', True),  # never harvested, no registry value
    ],
)
def test_due_compares_time_zone_aware(registry, void_literal, due):
    source = ProviderSource.of(ProviderEntry("p", {"void": "https://p.example/void.ttl", "modified": registry}))
    void = parse_void(_void(void_literal), provider="p", url=source.void_url)
    assert check(source, void, GraphState()).due is due


def test_registry_yaml_forms_with_zones(tmp_path):
    path = tmp_path / "registry.yaml"
    path.write_text(
        "zoned: {modified: 2015-12-04T14:25:44-08:00, void: 'https://z.example/void.ttl'}\n"
        "naive: {modified: 2015-12-04 14:25:44.758604, void: 'https://n.example/void.ttl'}\n"
        "day: {modified: 2015-10-10, void: 'https://d.example/void.ttl'}\n"
    )
    registry = load_registry(path)
    modified = {name: ProviderSource.of(registry[name]).modified for name in registry}
    assert modified == {
        "zoned": datetime(2015, 12, 4, 22, 25, 44, tzinfo=UTC),
        "naive": datetime(2015, 12, 4, 14, 25, 44, 758604, tzinfo=UTC),
        "day": datetime(2015, 10, 10, tzinfo=UTC),
    }


def test_registry_entry_without_void_or_with_bad_modified_is_a_config_error():
    with pytest.raises(ConfigError, match="registry key 'p.void': is missing"):
        ProviderSource.of(ProviderEntry("p", {"modified": "2015-10-10"}))
    with pytest.raises(ConfigError, match="registry key 'p.modified': 'last tuesday' is not a date") as caught:
        ProviderEntry("p", {"void": "https://p.example/void.ttl", "modified": "last tuesday"})
    assert caught.value.provider == "p"


def test_harvested_modified_beats_an_older_registry_value():
    source = ProviderSource.of(ProviderEntry("p", {"void": "https://p.example/void.ttl", "modified": "2015-01-01"}))
    void = parse_void(_void('"2015-11-05"^^xsd:date'), provider="p", url=source.void_url)
    assert not check(source, void, GraphState(modified=parse_modified("2015-11-05T00:00:00Z"))).due


def test_fetch_void_uses_content_type_and_reports_http_errors(site, http):
    served = site.put("/void", _void('"2016-02-02"^^xsd:date'), content_type="text/turtle; charset=utf-8")
    assert fetch_void(http, ProviderSource("p", served, allow_private=True)).modified == datetime(2016, 2, 2, tzinfo=UTC)
    with pytest.raises(FetchError) as caught:
        fetch_void(http, ProviderSource("p", site.base + "/missing.ttl", allow_private=True))
    assert "HTTP 404" in str(caught.value) and "provider 'p'" in str(caught.value)


def test_a_blank_node_dataset_is_named_as_the_file_wrote_it():
    body = (b"_:our-dataset <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://rdfs.org/ns/void#Dataset> .\n"
            b"_:our-dataset <http://purl.org/dc/terms/modified> \"2016-01-01\" .\n"
            b"_:our-dataset <http://rdfs.org/ns/void#feature> <http://lod.dataone.org/fulldump> .\n"
            b"_:our-dataset <http://rdfs.org/ns/void#dataDump> <https://p.example/all.nt> .\n")
    assert parse_void(body, provider="p", url="https://p.example/void.nt").dataset == "_:our-dataset"
