"""Template-record sources: the MediaWiki export fixture, the MediaWiki API and the TemplateParameterIndex."""

from datetime import datetime, timezone

import pytest

from ingest_assets.core.errors import FetchError, ParseError
from ingest_assets.core.http import HttpClient
from ingest_assets.repository.markup import clean
from ingest_assets.repository.mediawiki import MediaWikiApi, WikiTemplateSource, export_pages, template_records
from ingest_assets.repository.template_index import TemplateIndexClient

BASE = "https://docs.webplatform.org/wiki/"


@pytest.fixture
def export(shared_fixtures):
    return shared_fixtures / "mediawiki" / "webplatform-docs-special-export-8pages.xml"


def test_export_pages_latest_revision_and_no_redirects(export):
    pages = {page.title: page for page in export_pages(str(export))}
    # 8 pages, two of them redirects (one in the WPD: namespace 3000)
    assert set(pages) == {"css/properties/border-radius", "css/functions/blur", "dom/EventTarget/addEventListener",
                          "ja/concepts/programming/programming basics", "tutorials/html5 form features",
                          "concepts/programming/javascript/overview"}
    radius = pages["css/properties/border-radius"]
    # revision 69320 has the higher id but an older timestamp: the newest edit is 69319
    assert (radius.revision_id, radius.timestamp) == (69319, datetime(2014, 9, 8, 19, 5, 22, tzinfo=timezone.utc))
    assert pages["ja/concepts/programming/programming basics"].text.startswith("{{Page_Title|プログラミングの基礎}}")


def test_template_records_named_parameters_nested_templates_and_cleaning(export):
    page = next(p for p in export_pages(str(export)) if p.title == "css/properties/border-radius")
    wanted = ["CSS_Property", "External Attribution", "cSS_Property_Value", "css property value"]
    records = template_records(page, wanted, base_url=BASE, source_url=str(export))
    names = [r.template for r in records]  # only the first letter is case-insensitive (MediaWiki rule)
    assert names == ["CSS Property", "CSS Property Value", "CSS Property Value", "CSS Property Value",
                     "CSS Property Value", "External Attribution"]
    prop = records[0]
    assert prop.page_url == "https://docs.webplatform.org/wiki/css/properties/border-radius"
    assert prop.get("Initial value") == "0" and prop.get("css_object_model_property") == "borderRadius"
    # nested {{CSS Property Value|...}} templates are flattened, neighbours separated by "; "
    values = prop.get("values")
    assert values.startswith("length; Denotes the size of the circle radius")
    assert "for more details.; percentage; Denotes the size of the corner radius" in values
    # [[css/data_types/length|CSS &lt;length&gt; data types]] -> its label, entity decoded once
    assert "unit allowed in CSS <length> data types." in records[1].get("description")
    attribution = records[-1]
    assert attribution.get("MDN_link") == "Border-radius"  # [url label] -> label
    assert attribution.get("HTML5Rocks_link") == ""  # empty parameters are dropped
    assert attribution.modified == page.timestamp
    assert len({r.item_xml() for r in records}) == len(records)


def test_japanese_page_records(export):
    page = next(p for p in export_pages(str(export)) if p.title.startswith("ja/"))
    (title,) = template_records(page, ["Page Title"], base_url=BASE, source_url="x")
    assert title.get("1") == "プログラミングの基礎"
    assert title.page_url == BASE + "ja/concepts/programming/programming_basics"


def test_markup_cleaning():
    text = ("''Thalictrum'' in '''Mittel'''europa, [[Ranunculaceae|Hahnenfußgewächse]] [[Category:Keys]]"
            "[[File:Logo.png|thumb]] [https://example.org Quelle] {{Taxon|T. minus}}{{Taxon|T. flavum}}"
            "<!-- hidden --> &amp; {{#if:x|y}}<ref>note</ref><br/>next")
    assert clean(text) == ("<i>Thalictrum</i> in <b>Mittel</b>europa, Hahnenfußgewächse Quelle "
                           "T. minus; T. flavum &\nnext")


def test_broken_export_names_the_file(tmp_path):
    broken = tmp_path / "broken.xml"
    broken.write_text("<mediawiki><page><title>x</title><revision><text>{{A}}</text></revision>")
    with pytest.raises(ParseError, match="broken.xml"):
        list(export_pages(str(broken)))


def test_mediawiki_api_pages_embedding_with_continuation(export, mediawiki_api):
    pages = list(export_pages(str(export)))
    app, api_url = mediawiki_api(pages)
    api = MediaWikiApi(api_url, HttpClient(allow_private=True), batch=2)
    since = datetime(2014, 7, 1, tzinfo=timezone.utc)
    found = list(api.pages_embedding("Flags", since=since))
    assert [p.title for p in found] == ["css/properties/border-radius", "css/functions/blur",
                                        "dom/EventTarget/addEventListener", "tutorials/html5 form features"]
    assert app.queries[0]["geititle"] == "Template:Flags" and app.queries[0]["rvslots"] == "main"
    assert [q.get("geicontinue") for q in app.queries] == [None, "2", "4"]
    records = template_records(found[0], ["Flags"], base_url=BASE, source_url="api")
    assert records[0].get("state") == "Ready to Use"


def test_wiki_template_source_answers_index_queries_from_an_export(export):
    source = WikiTemplateSource.from_export(str(export), base_url=BASE)
    changed = list(source.modified("Flags", datetime(2014, 8, 1, tzinfo=timezone.utc), None))
    assert [(r.page, r.get("state")) for r in changed] == [("css/properties/border-radius", "Ready to Use"),
                                                           ("dom/EventTarget/addEventListener", "Ready to Use"),
                                                           ("tutorials/html5 form features", "Ready to Use")]
    (not_ready,) = source.where("Flags", "State", "Not Ready")
    assert not_ready.page == "concepts/programming/javascript/overview"
    assert not_ready.get("compatibility") == "Outdated, Incomplete" and source.problems == []
    bare = [r for r in source.modified("Flags", None, None) if r.page.startswith("ja/")]
    assert [r.params for r in bare] == [{}]  # the Japanese page's bare {{Flags}}


def test_template_index_client_parses_and_keeps_going_after_a_bad_record(template_index, thalictrum):
    app, url = template_index
    app.records = [thalictrum, {**thalictrum, "Modified": "not a date", "PageName": "Broken key"},
                   {**thalictrum, "PageName": "Aconitum", "title": "''Aconitum'' in [[Europa]]"}]
    client = TemplateIndexClient(url, HttpClient(allow_private=True), provider="k2n")
    records = list(client.modified("Key Start", datetime(2010, 1, 1, tzinfo=timezone.utc), None,
                                   parameternames=["title", "creators"]))
    assert app.queries[-1] == {"template": "Key Start", "from": "2010-01-01T00:00:00",
                               "parameternames": "title;creators"}
    assert [r.ref for r in records] == ["Thalictrum in Mitteleuropa#Key Start[0]", "Aconitum#Key Start[0]"]
    assert records[0].params == {"title": "Thalictrum in Mitteleuropa", "creators": "Ralf Hand"}
    assert records[0].modified == datetime(2010, 1, 24, 0, 12, 39, tzinfo=timezone.utc)
    assert records[1].get("title") == "<i>Aconitum</i> in Europa"
    (problem,) = client.problems
    assert "Broken key" in str(problem) and url in str(problem) and "'k2n'" in str(problem)
    list(client.where("Key Start", "Collection Page", "X"))
    assert app.queries[-1] == {"template": "Key Start", "parameter1": "Collection Page", "value1": "X"}


def test_a_registry_wiki_export_is_a_template_source(tmp_path):
    """``repository: {wiki_export: FILE, base_url: ...}``: the packaged demo wiki answers as an index would."""
    from importlib.resources import files

    from ingest_assets.defs.repository.assets import ingest_settings, template_source
    from ingest_assets.core.errors import ConfigError
    from ingest_assets.core.registry import ProviderEntry

    export = str(files("ingest_assets.demo") / "wiki-export.xml")
    entry = ProviderEntry("wiki", {"repository": {"wiki_export": export, "base_url": "http://wiki.example/wiki/"}})
    assert ingest_settings(entry).source == export
    source = template_source(entry, HttpClient())
    assert isinstance(source, WikiTemplateSource)
    items = list(source.where("Metadata", "Collection Page", "Glass plates"))
    assert sorted(r.page for r in items) == ["Glass plate 1", "Glass plate 2", "Glass plate 3", "Glass plates"]
    with pytest.raises(ConfigError, match="wiki_api or wiki_export with base_url"):
        ingest_settings(ProviderEntry("wiki", {"repository": {"wiki_export": export}}))


EXPORT_PAGE = """<page><title>{title}</title><ns>0</ns><id>{id}</id><revision><id>{id}</id>
<timestamp>2026-01-10T10:00:00Z</timestamp><text>{{{{Flags|state=Ready&nbsp;to&nbsp;Use}}}} {extra}</text></revision></page>"""


def test_entity_references_in_an_export_are_resolved_or_that_pages_problem(tmp_path):
    """lxml ends a text at an unresolved entity reference: the page text (and its template) was silently cut."""
    export = tmp_path / "export.xml"
    export.write_text(
        '<!DOCTYPE mediawiki SYSTEM "http://www.mediawiki.org/dtd/export.dtd">\n'
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/">'
        + EXPORT_PAGE.format(title="Good", id=1, extra="caf&eacute;")
        + EXPORT_PAGE.format(title="Strange", id=2, extra="&site-only;")
        + EXPORT_PAGE.format(title="Also good", id=3, extra="")
        + "</mediawiki>"
    )
    source = WikiTemplateSource.from_export(str(export), base_url=BASE)
    records = list(source.modified("Flags", None, None))
    assert [(r.page, r.get("state")) for r in records] == [("Good", "Ready\u00a0to\u00a0Use"), ("Also good", "Ready\u00a0to\u00a0Use")]
    [problem] = source.problems
    assert problem.record == "Strange" and "&site-only;" in str(problem) and problem.file == str(export)

    declared = tmp_path / "declared.xml"
    declared.write_text('<!DOCTYPE mediawiki [<!ENTITY x "boom">]>\n<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/">'
                        + EXPORT_PAGE.format(title="X", id=1, extra="&x;").replace("&nbsp;", " ") + "</mediawiki>")
    with pytest.raises(ParseError, match="declares entities"):
        list(export_pages(str(declared), file=str(declared)))


def test_a_template_index_that_fails_is_named_with_its_provider(http_server):
    def down(environ, start_response):
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"no such index"]

    url = http_server(app=down) + "/TemplateParameterIndex"
    client = TemplateIndexClient(url, HttpClient(allow_private=True, retries=0), provider="k2n")
    with pytest.raises(FetchError) as err:
        list(client.where("Key Start", "Collection Page", "X"))
    assert err.value.status == 404 and err.value.provider == "k2n" and "'k2n'" in str(err.value)
    assert err.value.file.startswith(url)
