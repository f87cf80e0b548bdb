"""The glharvest scenarios as behaviour, on the real dumps, against both triple store backends."""

import gzip
import io

import pytest
from pyoxigraph import RdfFormat, parse

from ingest_assets.core.errors import FetchError, IngestError, ParseError
from ingest_assets.linked_data import importer
from ingest_assets.linked_data.export import export
from ingest_assets.linked_data.importer import ProviderSource, cleanup, import_update
from ingest_assets_tests.support.linked_data import PARTIAL

ORGS = "dumps/dataone-organizations-geolink.ttl"  # 387 triples
LINKS = "dumps/bcodmo-rvdata-cruise-links.nt"  # 329, tab-separated
FUNDING = "dumps/bcodmo-funding-geolink-view.rdf"  # 329, rdf:datatype="xsd:string"
PERSONS = "dumps/mblwhoi-geolink-person.rdf"  # 72
BROKEN = "chembl-rdf-void-2012-10-broken.ttl"  # Turtle with a syntax error at line 35
JORNADA = "<https://dataone.org/organization/065fc8ee-bcfe-4a09-986a-8ee7709b715d>"
LABEL = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#label>"


def _harvest(case, site, http, provider, modified, dumps, feature=None, **source):
    kwargs = {"feature": feature} if feature else {}
    url = site.void(f"/{provider}/void.ttl", f'"{modified}"^^xsd:date', dumps, **kwargs)
    result = import_update(
        ProviderSource(provider, url, allow_private=source.pop("allow_private", True), **source),
        case.store,
        http,
        case.graphs(provider),
    )
    cleanup(case.store, case.graphs(provider))
    return result


def test_full_dump_loads_every_file_and_format(store_case, site, http):
    result = _harvest(
        store_case, site, http, "geolink", "2015-11-05",
        [site.fixture(ORGS), site.fixture(LINKS, "2"), site.fixture(FUNDING + ".gz", "3")],
    )
    assert result.strategy == "replace"
    assert [f.triples for f in result.files] == [387, 329, 329]
    assert [f.rdf_format.name for f in result.files] == ["Turtle", "N-Triples", "RDF/XML"]
    triples = store_case.current_triples("geolink")
    assert len(triples) == 387 + 329 + 329
    assert any('"NSF"^^<xsd:string>' in t for t in triples)  # the unexpanded CURIE kept as the IRI it is
    assert any("國立澎湖科技大學" in t for t in triples)


def test_new_subject_is_added(store_case, site, http):
    _harvest(store_case, site, http, "d1", "2015-11-05", [site.fixture(ORGS)])
    before = store_case.current_triples("d1")
    added = site.put("/d1/new.ttl", f"<https://dataone.org/organization/new> {LABEL} \"New Org\" .\n")
    result = _harvest(store_case, site, http, "d1", "2015-11-06", [added], PARTIAL)
    assert result.strategy == "merge"
    after = store_case.current_triples("d1")
    assert after - before == {f'<https://dataone.org/organization/new> {LABEL} "New Org"'}
    assert before <= after


def test_changed_subject_is_replaced_not_duplicated(store_case, site, http):
    _harvest(store_case, site, http, "d1", "2015-11-05", [site.fixture(ORGS)])
    before = store_case.current_triples("d1")
    assert f'{JORNADA} {LABEL} "Jornada LTER"' in before
    changed = site.put("/d1/changed.ttl", f'{JORNADA} {LABEL} "Jornada Basin LTER" .\n')
    _harvest(store_case, site, http, "d1", "2015-11-06", [changed], PARTIAL)
    after = store_case.current_triples("d1")
    about = {t for t in after if t.startswith(JORNADA)}
    assert about == {f'{JORNADA} {LABEL} "Jornada Basin LTER"'}  # isCreatorOf went too: the dump is complete
    assert len(after) == len(before) - 1
    assert {t for t in before if not t.startswith(JORNADA)} <= after


@pytest.mark.parametrize("merge_fraction", [importer.MERGE_FRACTION, 0.0])
def test_blank_nodes_of_a_replaced_subject_go_with_it(store_case, site, http, monkeypatch, merge_fraction):
    _harvest(store_case, site, http, "d1", "2015-11-05", [site.fixture(ORGS)])
    vcard = "http://www.w3.org/2006/vcard/ns#"
    site.put("/d1/address.ttl", f'{JORNADA} <{vcard}hasAddress> [ <{vcard}locality> "Las Cruces" ] .\n')
    _harvest(store_case, site, http, "d1", "2015-11-06", [site.base + "/d1/address.ttl"], PARTIAL)
    monkeypatch.setattr(importer, "MERGE_FRACTION", merge_fraction)
    site.put("/d1/address.ttl", f'{JORNADA} <{vcard}hasAddress> [ <{vcard}locality> "Jornada" ] .\n')
    result = _harvest(store_case, site, http, "d1", "2015-11-07", [site.base + "/d1/address.ttl"], PARTIAL)
    assert result.strategy == ("merge" if merge_fraction else "copy")
    localities = [t for t in store_case.current_triples("d1") if "locality" in t]
    assert len(localities) == 1 and localities[0].endswith('"Jornada"')
    assert len(store_case.current_triples("d1")) == 387 - 2 + 2


def test_same_dump_twice_changes_nothing(store_case, site, http):
    dumps = [site.fixture(ORGS), site.fixture(PERSONS, "2")]
    _harvest(store_case, site, http, "d1", "2015-11-05", dumps)
    first = store_case.current_triples("d1")
    second = _harvest(store_case, site, http, "d1", "2015-11-06", dumps, PARTIAL)
    assert second.strategy == "copy"  # a partial as large as the graph: copy-on-write, then switch
    assert store_case.current_triples("d1") == first
    full_again = _harvest(store_case, site, http, "d1", "2015-11-07", dumps)
    assert full_again.strategy == "replace" and store_case.current_triples("d1") == first
    unchanged = _harvest(store_case, site, http, "d1", "2015-11-07", dumps)
    assert unchanged.strategy == "unchanged" and unchanged.files == ()


def test_full_dump_replaces_the_graph_and_old_versions_are_dropped(store_case, site, http):
    first = _harvest(store_case, site, http, "d1", "2015-11-05", [site.fixture(ORGS)])
    second = _harvest(store_case, site, http, "d1", "2015-11-06", [site.fixture(PERSONS)])
    assert len(store_case.current_triples("d1")) == 72
    assert store_case.store.count(first.state.current) == 0
    assert store_case.graphs("d1").read_state(store_case.store).discard == ()
    assert second.state.modified_text == "2015-11-06"


def test_providers_stay_isolated(store_case, site, http):
    _harvest(store_case, site, http, "alpha", "2015-11-05", [site.fixture(ORGS)])
    alpha = store_case.current_triples("alpha")
    # beta's dump names alpha's graph and repeats alpha's subjects: it still only fills beta's graph
    hostile = site.put(
        "/beta/dump.nq",
        f'{JORNADA} {LABEL} "hijacked" <{store_case.graphs("alpha").name}> .\n',
        "application/n-quads",
    )
    _harvest(store_case, site, http, "beta", "2015-11-06", [site.fixture(PERSONS), hostile], PARTIAL)
    assert store_case.current_triples("alpha") == alpha
    assert f'{JORNADA} {LABEL} "hijacked"' in store_case.current_triples("beta")


@pytest.mark.parametrize("feature", [None, PARTIAL])
def test_failure_in_second_dump_leaves_graph_as_it_was(store_case, site, http, feature):
    _harvest(store_case, site, http, "d1", "2015-11-05", [site.fixture(ORGS)])
    before = store_case.current_triples("d1")
    state = store_case.graphs("d1").read_state(store_case.store)
    with pytest.raises(ParseError) as caught:
        _harvest(store_case, site, http, "d1", "2015-11-06", [site.fixture(PERSONS, "1"), site.fixture(BROKEN, "2")],
                 feature)
    assert "line 35" in str(caught.value) and BROKEN in str(caught.value) and "provider 'd1'" in str(caught.value)
    with pytest.raises(FetchError, match="HTTP 404"):
        _harvest(store_case, site, http, "d1", "2015-11-06", [site.fixture(PERSONS, "1"), site.base + "/gone.nt"],
                 feature)
    assert store_case.current_triples("d1") == before
    assert store_case.graphs("d1").read_state(store_case.store) == state  # modified not advanced


def test_failure_while_applying_leaves_graph_and_cleans_up(store_case, site, http, monkeypatch):
    _harvest(store_case, site, http, "d1", "2015-11-05", [site.fixture(ORGS)])
    before = store_case.current_triples("d1")
    calls = []
    real_load = type(store_case.store).load

    def failing_load(self, graph, path):
        calls.append(graph)
        if len(calls) == 2:
            raise OSError("disk full")
        real_load(self, graph, path)

    monkeypatch.setattr(type(store_case.store), "load", failing_load)
    with pytest.raises(OSError, match="disk full"):
        _harvest(store_case, site, http, "d1", "2015-11-06", [site.fixture(PERSONS, "1"), site.fixture(LINKS, "2")])
    monkeypatch.undo()
    assert store_case.current_triples("d1") == before
    state = store_case.graphs("d1").read_state(store_case.store)
    assert state.discard == () and store_case.store.count(calls[0]) == 0  # the half-built version is gone


@pytest.mark.parametrize(
    ("url", "allow_private", "needle"),
    [
        ("file:///etc/passwd", True, "scheme 'file'"),
        ("http://127.0.0.1:9/dump.ttl", False, "not a public address"),
    ],
)
def test_unsafe_dump_urls_are_refused_before_any_fetch(store_case, site, http, url, allow_private, needle):
    dumps = [site.fixture(ORGS), url] if allow_private else [url]  # the fixture site is private itself
    with pytest.raises(FetchError, match=needle) as caught:
        _harvest(store_case, site, http, "d1", "2015-11-05", dumps, allow_private=allow_private)
    assert caught.value.provider == "d1" and caught.value.file == url
    assert store_case.current_triples("d1") == set()


def test_gzip_bomb_limit_and_plain_size_limit(store_case, site, http):
    with pytest.raises(ParseError, match="expands beyond"):
        _harvest(store_case, site, http, "d1", "2015-11-05", [site.fixture(FUNDING + ".gz")], max_dump_bytes=20_000)
    with pytest.raises(FetchError, match="larger than"):
        _harvest(store_case, site, http, "d1", "2015-11-05", [site.fixture(ORGS)], max_dump_bytes=20_000)
    assert store_case.current_triples("d1") == set()


def test_export_is_the_union_named_by_provider(store_case, site, http):
    _harvest(store_case, site, http, "alpha", "2015-11-05", [site.fixture(ORGS)])
    _harvest(store_case, site, http, "beta", "2015-11-05", [site.fixture(LINKS)])
    nquads, ntriples = io.BytesIO(), io.BytesIO()
    counts = export(store_case.store, ["alpha", "beta", "gamma"], nquads, ntriples, store_case.base)
    assert counts == {"alpha": 387, "beta": 329}
    quads = list(parse(input=nquads.getvalue(), format=RdfFormat.N_QUADS))
    assert {q.graph_name.value for q in quads} == {store_case.graphs("alpha").name, store_case.graphs("beta").name}
    assert len(list(parse(input=ntriples.getvalue(), format=RdfFormat.N_TRIPLES))) == 387 + 329


def test_merge_threshold_chooses_strategy(store_case, site, http, monkeypatch):
    _harvest(store_case, site, http, "d1", "2015-11-05", [site.fixture(ORGS)])
    monkeypatch.setattr(importer, "MERGE_FRACTION", 0.0)
    changed = site.put("/d1/changed.ttl", f'{JORNADA} {LABEL} "Jornada Basin LTER" .\n')
    result = _harvest(store_case, site, http, "d1", "2015-11-06", [changed], PARTIAL)
    assert result.strategy == "copy"
    assert {t for t in store_case.current_triples("d1") if t.startswith(JORNADA)} == {
        f'{JORNADA} {LABEL} "Jornada Basin LTER"'
    }
    assert len(store_case.current_triples("d1")) == 386


def test_concurrent_pointer_move_is_detected(store_case, site, http, monkeypatch):
    _harvest(store_case, site, http, "d1", "2015-11-05", [site.fixture(ORGS)])
    graphs = store_case.graphs("d1")
    before = graphs.read_state(store_case.store)
    intruder = f"{graphs.name}:intruder"
    real_load = type(store_case.store).load

    def load_while_another_import_switches(self, graph, path):
        real_load(self, graph, path)
        self.update(graphs.switch(intruder, before.current, before.modified, "other", before.imported))

    monkeypatch.setattr(type(store_case.store), "load", load_while_another_import_switches)
    with pytest.raises(IngestError, match="pointer changed"):
        _harvest(store_case, site, http, "d1", "2015-11-07", [site.fixture(LINKS)])
    monkeypatch.undo()
    after = graphs.read_state(store_case.store)
    assert after.current == intruder and after.modified_text == "other"  # the other import's switch stands
    assert before.current in after.discard


def test_gzip_dump_without_gz_suffix_is_detected_by_magic(store_case, site, http):
    body = gzip.compress((site.root / LINKS).read_bytes())
    url = site.put("/d1/links", body, "application/octet-stream")
    result = _harvest(store_case, site, http, "d1", "2015-11-05", [url])
    assert result.files[0].triples == 329


def test_jsonld_dump_never_fetches_a_remote_context(store_case, site, http):
    # pyoxigraph has no document loader: a context by reference is a parse error, never a request
    context = site.put("/ctx.jsonld", '{"@context": {"label": "http://www.w3.org/2000/01/rdf-schema#label"}}',
                       "application/ld+json")
    dump = site.put("/d1/dump.jsonld", f'{{"@context": "{context}", "@id": "http://x.example/a", "label": "a"}}',
                    "application/ld+json")
    with pytest.raises(ParseError, match="remote context") as caught:
        _harvest(store_case, site, http, "d1", "2015-11-05", [dump])
    assert caught.value.provider == "d1" and caught.value.file == dump
    assert "/ctx.jsonld" not in site.requested and "/d1/dump.jsonld" in site.requested
    assert store_case.current_triples("d1") == set()


ONTOLOGY_BODY = (
    '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://example.org/onto#">'
    '<rdf:Description rdf:about="&ex;cruise"><ex:legs rdf:datatype="&xsd;integer">5</ex:legs>'
    "<ex:note>{note}</ex:note></rdf:Description></rdf:RDF>"
)


def _rdfxml(dtd: str, note: str = "plain") -> str:
    return f'<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [\n{dtd}\n]>\n' + ONTOLOGY_BODY.format(note=note)


ABBREVIATIONS = '<!ENTITY xsd "http://www.w3.org/2001/XMLSchema#">\n<!ENTITY ex "http://example.org/onto#">'


def test_rdfxml_dump_with_namespace_abbreviation_entities_is_imported(store_case, site, http):
    dump = site.put("/d1/onto.rdf", _rdfxml(ABBREVIATIONS), "application/rdf+xml")
    _harvest(store_case, site, http, "d1", "2015-11-05", [dump])
    assert (
        '<http://example.org/onto#cruise> <http://example.org/onto#legs> "5"^^<http://www.w3.org/2001/XMLSchema#integer>'
        in store_case.current_triples("d1")
    )


@pytest.mark.parametrize(("dtd", "note", "needle"), [
    # entities built from entities grow geometrically (10^5 characters here; a billion with a few more lines)
    (ABBREVIATIONS + '<!ENTITY a "aaaaaaaaaa">' + "".join(
        f'<!ENTITY {n} "{("&" + p + ";") * 10}">' for p, n in zip("abcd", "bcde")), "&e;", "not a plain text"),
    (ABBREVIATIONS + '<!ENTITY secret SYSTEM "file:///etc/hostname">', "&secret;", "is external"),
    (ABBREVIATIONS + '<!ENTITY % p "<!ENTITY q \'x\'>"> %p;', "plain", "parameter entities"),
], ids=["nested-expansion", "external-entity", "parameter-entity"])
def test_rdfxml_dump_whose_dtd_could_expand_is_refused_before_parsing(store_case, site, http, dtd, note, needle):
    dump = site.put("/d1/onto.rdf", _rdfxml(dtd, note), "application/rdf+xml")
    with pytest.raises(ParseError, match=f"RDF/XML dump refused: .*{needle}") as caught:
        _harvest(store_case, site, http, "d1", "2015-11-05", [dump])
    assert caught.value.provider == "d1" and caught.value.file == dump
    assert store_case.current_triples("d1") == set()


def _nested_rdfxml(depth: int) -> str:
    """``top ex:p n0``, ``n0 ex:p n1``... ``depth`` levels deep: ``depth`` triples."""
    nested = "".join(f'<ex:p><rdf:Description rdf:about="http://example.org/n{n}">' for n in range(depth))
    return ('<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://example.org/onto#">'
            f'<rdf:Description rdf:about="http://example.org/top">{nested}'
            f'{"</rdf:Description></ex:p>" * depth}</rdf:Description></rdf:RDF>')


def test_rdfxml_dump_nested_too_deeply_is_refused_before_parsing(store_case, site, http):
    """Nesting costs pyoxigraph quadratic time (a small file pinned an import and its provider's one slot)."""
    dump = site.put("/d1/deep.rdf", _nested_rdfxml(400), "application/rdf+xml")
    with pytest.raises(ParseError, match="RDF/XML dump refused: elements nest deeper than 256") as caught:
        _harvest(store_case, site, http, "d1", "2015-11-05", [dump])
    assert caught.value.provider == "d1" and caught.value.file == dump
    assert store_case.current_triples("d1") == set()
    _harvest(store_case, site, http, "d1", "2015-11-05", [site.put("/d1/fine.rdf", _nested_rdfxml(60), "application/rdf+xml")])
    assert len(store_case.current_triples("d1")) == 60
