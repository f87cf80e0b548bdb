"""The ingest service end to end: fake TemplateParameterIndex -> OCFL or the live Fedora, SQL bookkeeping.

Includes the crash test: the ingest runs as its own process and is killed mid-ingest.
"""

import json
import os
import signal
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from urllib.parse import urlsplit

import pytest

from ingest_assets.core.errors import ConfigError, IngestError
from ingest_assets.core.http import HttpClient
from ingest_assets.repository.bookkeeping import Bookkeeping
from ingest_assets.repository.index import ObjectIndex
from ingest_assets.repository.ingest import IngestSettings, RepositoryIngest
from ingest_assets.repository.mediawiki import MediaWikiApi, WikiPage, WikiTemplateSource, report_poster
from ingest_assets.repository.ocfl import OcflRepository
from ingest_assets.repository.pids import pid_from_uri
from ingest_assets.repository.template_index import TemplateIndexClient, xml_datetime
from ingest_assets.repository.validation import load_vocabularies
from ingest_assets.core.sql import make_engine
from ingest_assets.storage import LocalStorage
from ingest_assets_tests.support import next_second

WIKI = "http://www.keytonature.eu/wiki/"
NOW = datetime.now(timezone.utc)


def after_run() -> str:
    """An edit's Modified time, past the end of the run before it: a unit that run finished later than the edit
    would rightly be skipped (a loaded machine can take seconds between a run's ``until`` and its last unit)."""
    return next_second(datetime.now(timezone.utc))


def stamp(delta: timedelta) -> str:
    return (NOW + delta).strftime("%Y-%m-%d %H:%M:%S")


def metadata(page, collection, modified, **params):
    return {"TemplateName": "Metadata", "BaseURL": WIKI, "PageName": page, "Modified": stamp(modified),
            "Harvested": stamp(modified), "Collection Page": collection, **params}


def wiki_records():
    hour = timedelta(hours=-1)
    return [
        {"TemplateName": "Infobox Organisation", "BaseURL": WIKI, "PageName": "Naturalis", "Modified": stamp(2 * hour),
         "Harvested": stamp(2 * hour), "name": "Naturalis Biodiversity Center", "homepage": "http://www.naturalis.nl/"},
        metadata("Pollen collection", "Pollen collection", hour, Type="Collection", Title="Pollen",
                 **{"Provider Page": "Naturalis", "Resource ID": "urn:uuid:3F2504E0-4F89-11D3-9A0C-0305E82C3301"}),
        metadata("Pollen 1", "Pollen collection", hour, Type="StillImage", Title="''Pinus'' pollen",
                 **{"Provider Page": "Naturalis", "Best Quality URI": "http://img.example.org/p1.jpg"}),
        metadata("Pollen 2", "Pollen collection", hour, Type="StillImage", Title="Abies pollen",
                 **{"Provider Page": "Naturalis", "Best Quality URI": "http://img.example.org/p2.jpg"}),
        metadata("Pollen 3", "Pollen collection", hour, Type="Painting", Title="Not a K2N type",
                 **{"Best Quality URI": "http://img.example.org/p3.jpg"}),
        {"TemplateName": "Key Start", "BaseURL": WIKI, "PageName": "Thalictrum in Mitteleuropa",
         "Modified": stamp(hour), "Harvested": stamp(hour), "title": "Thalictrum in Mitteleuropa",
         "creators": "Ralf Hand", "audience": "Experten, Interessierte"},
    ]


@pytest.fixture
def service_parts(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'ingest.sqlite3'}")
    yield {"engine": engine, "index": ObjectIndex(engine), "books": Bookkeeping(engine),
           "storage": LocalStorage(tmp_path / "storage"), "vocabularies": load_vocabularies()}
    engine.dispose()


def make_service(url, parts, repository):
    return RepositoryIngest(IngestSettings(source=url, provider="k2n", default_language="de"),
                            source=TemplateIndexClient(url, HttpClient(allow_private=True, retries=0), provider="k2n"),
                            repository=repository,
                            index=parts["index"], bookkeeping=parts["books"], vocabularies=parts["vocabularies"],
                            storage=parts["storage"])


def test_ingest_update_and_identity_on_ocfl(template_index, service_parts, tmp_path):
    app, url = template_index
    app.records = wiki_records()
    repo = OcflRepository(tmp_path / "ocfl")
    index, books = service_parts["index"], service_parts["books"]
    first = make_service(url, service_parts, repo).run()
    assert not first.refused and first.since is None and not first.failed and not first.problems
    assert [(o.kind, o.uri) for o in first.outcomes] == [
        ("provider", WIKI + "Naturalis"), ("metadata", WIKI + "Pollen_collection"),
        ("keys", WIKI + "Thalictrum_in_Mitteleuropa")]
    provider, pollen, keys = first.outcomes
    assert provider.pid == "K2N:www.naturalis.nl"
    assert pollen.pid == pid_from_uri(WIKI + "Pollen_collection") and pollen.records == 4 and pollen.ingested == 3
    assert [(i.severity, i.record, i.message) for i in pollen.issues] == [
        ("error", "Pollen 3#Metadata[0]", "no PID type code for resource type 'Painting'")]
    assert app.queries_for(template="Metadata", parameter1="Collection Page", value1="Pollen collection")
    delta = app.queries_for(template="Metadata", parameternames="Type;Collection Page")
    assert len(delta) == 1 and "from" not in delta[0] and delta[0]["to"] == xml_datetime(first.until)
    members = index.members(pollen.pid)
    assert len(members) == 2 and all(p.startswith("K2N:im_") for p in members)
    image = repo.get(members[0])
    assert image.provider == "K2N:www.naturalis.nl" and image.collection == pollen.pid  # provider found by page
    assert image.dc["type"] == ["StillImage"] and image.harvesting_url.startswith(WIKI + "Pollen_")
    assert repo.get(pollen.pid).k2n["Resource_ID"] == ["urn:uuid:3F2504E0-4F89-11D3-9A0C-0305E82C3301"]
    (key_pid,) = index.members(keys.pid)
    assert repo.get(key_pid).k2n["Host_Application"] == ["Web Browser"]
    assert repo.get(key_pid).dc["language"] == ["de"]
    assert repo.exists("K2N:www.keytonature.eu_wiki")  # the wiki as provider of key pages
    report = service_parts["storage"].read_bytes(pollen.report_key).decode()
    assert pollen.report_key.startswith("k2n/repository-reports/")
    assert "no PID type code for resource type 'Painting'" in report and "errors: 1; warnings: 0" in report
    assert books.last_success(url) == first.until and books.watchdog_entry(url) is None

    # the collection page is renamed and one image is edited: step 2 (provider + Resource ID) finds the
    # collection, its members are deleted and re-ingested, the collection keeps its PID
    later = after_run()
    renamed = []
    for record in wiki_records()[1:4]:
        record = {**record, "Collection Page": "Pollen (renamed)", "Modified": later}
        if record["PageName"] == "Pollen collection":
            record["PageName"] = "Pollen (renamed)"
        if record["PageName"] == "Pollen 2":
            record["Title"] = "Abies alba pollen"
        renamed.append(record)
    app.records = [wiki_records()[0], *renamed]
    second = make_service(url, service_parts, repo).run()
    assert second.since == first.until and not second.failed
    (outcome,) = second.outcomes
    assert outcome.uri == WIKI + "Pollen_(renamed)" and outcome.pid == pollen.pid
    new_members = index.members(pollen.pid)
    assert len(new_members) == 2 and outcome.removed == 2 and not set(new_members) & set(members)
    for old in members:
        assert not repo.exists(old) and repo.versions(old)[-1] == "v2"  # v2 = tombstone
    assert sorted(repo.get(p).dc["title"][0] for p in new_members) == ["<i>Pinus</i> pollen", "Abies alba pollen"]
    assert repo.versions(pollen.pid) == ["v1", "v2"]  # updated in place: same object, new version


def test_ingest_on_fedora_is_one_transaction_per_collection(template_index, service_parts, fedora):
    app, url = template_index
    app.records = [r for r in wiki_records() if r["TemplateName"] == "Key Start"]
    repo = fedora.repo
    make_service(url, service_parts, repo).run()
    edited = {**app.records[0], "description": "neu", "Modified": after_run()}
    app.records = [edited]
    fedora.proxy.requests.clear()
    result = make_service(url, service_parts, repo).run()
    assert not result.failed
    requests = fedora.proxy.requests
    (opened,) = [r for r in requests if r.method == "POST"]
    tx = opened.reply["Location"]
    assert (opened.path, requests[0]) == (f"{fedora.root}/fcr:tx", opened)
    assert (requests[-1].method, fedora.proxy.url + requests[-1].path) == ("PUT", tx)
    deletes = [r.path for r in requests if r.method == "DELETE"]
    assert len(deletes) == 2 and deletes[1] == deletes[0] + "/fcr:tombstone"  # old key + its tombstone
    assert all(r.headers.get("Atomic-ID") == tx for r in requests[1:-1])
    collection = repo.object_url(pid_from_uri(WIKI + "Thalictrum_in_Mitteleuropa")).removeprefix(fedora.proxy.url)
    updates = [r for r in requests if r.method == "PUT" and r.path == collection]
    assert len(updates) == 1 and updates[0].status == 204  # the collection keeps its identity
    assert repo.get(pid_from_uri(WIKI + "Thalictrum_in_Mitteleuropa")).dc["title"] == ["Thalictrum in Mitteleuropa"]


def run_process(url, tmp_path, max_duration):
    command = [sys.executable, "-m", "ingest_assets.cli", "repository", "--template-index", url,
               "--database", f"sqlite:///{tmp_path / 'ingest.sqlite3'}", "--repository", str(tmp_path / "ocfl"),
               "--storage", str(tmp_path / "storage"), "--allow-private", "--max-duration", str(max_duration)]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "INGEST_HOME": str(tmp_path / "home")})


def test_crash_restart_skips_no_interval_and_ingests_nothing_twice(template_index, tmp_path):
    app, url = template_index
    alpha = [metadata("Alpha collection", "Alpha collection", timedelta(minutes=-30), Type="Collection", Title="A"),
             *(metadata(f"Alpha {i}", "Alpha collection", timedelta(minutes=-30), Type="Sound",
                        **{"Best Quality URI": f"http://snd.example.org/a{i}.mp3"}) for i in range(2))]
    beta = [metadata("Beta collection", "Beta collection", timedelta(minutes=-20), Type="Collection", Title="B"),
            *(metadata(f"Beta {i}", "Beta collection", timedelta(minutes=-20), Type="Movie",
                       **{"Best Quality URI": f"http://mv.example.org/b{i}.mp4"}) for i in range(2))]
    app.records = alpha + beta
    engine = make_engine(f"sqlite:///{tmp_path / 'ingest.sqlite3'}")
    books, index = Bookkeeping(engine), ObjectIndex(engine)
    previous = NOW - timedelta(hours=1)  # a previous interval ended successfully here
    books.finish(books.claim(url), previous)
    app.hold_value = "Beta collection"  # the ingest is killed while it fetches the second collection

    crashed = run_process(url, tmp_path, 3600)
    assert app.reached.wait(60), crashed.communicate()
    crashed.send_signal(signal.SIGKILL)
    crashed.wait(10)
    assert books.watchdog_entry(url) is not None and books.last_success(url) == previous
    alpha_uri, beta_uri = WIKI + "Alpha_collection", WIKI + "Beta_collection"
    assert books.last_success(url, alpha_uri) is not None and books.last_success(url, beta_uri) is None
    alpha_members = index.members(pid_from_uri(alpha_uri))
    assert len(alpha_members) == 2

    refused = run_process(url, tmp_path, 3600)  # the dead ingest's watchdog is still fresh
    out, err = refused.communicate(timeout=60)
    assert refused.returncode == 3 and json.loads(out)["refused"], err

    app.hold_value = None
    app.release.set()
    app.queries.clear()
    restarted = run_process(url, tmp_path, 0.5)  # MaximumIngestDuration passed: a crash is assumed
    out, err = restarted.communicate(timeout=60)
    assert restarted.returncode == 0, err
    summary = json.loads(out)
    # no interval skipped: the restart asks again from the last general success
    delta = app.queries_for(template="Metadata", parameternames="Type;Collection Page")
    assert [q["from"] for q in delta] == [xml_datetime(previous)]
    assert {(u["uri"], u["skipped"]) for u in summary["units"]} == {(alpha_uri, True), (beta_uri, False)}
    # no double ingest: Alpha is not fetched nor written again
    assert app.queries_for(value1="Alpha collection") == []
    assert len(app.queries_for(value1="Beta collection")) == 1
    repo = OcflRepository(tmp_path / "ocfl")
    assert index.members(pid_from_uri(alpha_uri)) == alpha_members
    for pid in [*alpha_members, pid_from_uri(alpha_uri)]:
        assert repo.versions(pid) == ["v1"]
    beta_members = index.members(pid_from_uri(beta_uri))
    assert len(beta_members) == 2 and all(repo.versions(p) == ["v1"] for p in beta_members)
    assert all(index.get(p)["state"] == "live" for p in [*alpha_members, *beta_members])
    assert books.watchdog_entry(url) is None
    assert books.last_success(url) == datetime.fromisoformat(summary["until"])
    engine.dispose()


KEY_PAGE = """Ein Schlüssel.
{{Key Start
|id=thalictrum
|title=''Thalictrum'' in Mitteleuropa
|creators=Ralf Hand
|description="*" = siehe separate Schlüssel für Unterarten
|audience=Experten, Interessierte
|collaboration limited to=Ralf Hand
|language=de
}}
{{Lead|1|Blätter [[Fieder]]n|2}}
"""


def test_ingest_from_the_mediawiki_api_and_post_the_report(mediawiki_api, service_parts, tmp_path):
    page = WikiPage("Thalictrum in Mitteleuropa", 0, 7, datetime(2010, 1, 24, 0, 12, 39, tzinfo=timezone.utc),
                    KEY_PAGE)
    app, api_url = mediawiki_api([page])
    http = HttpClient(allow_private=True, retries=0)
    service = RepositoryIngest(
        IngestSettings(source=api_url, provider="k2n"),
        source=WikiTemplateSource.from_api(MediaWikiApi(api_url, http), base_url=WIKI),
        repository=OcflRepository(tmp_path / "ocfl"), index=service_parts["index"],
        bookkeeping=service_parts["books"], vocabularies=service_parts["vocabularies"],
        post_report=report_poster("k2n", api_url, "K2N_BOT", "K2N_BOT_PASSWORD", http,
                                  {"K2N_BOT": "Bot@ingest", "K2N_BOT_PASSWORD": "secret"}.get))
    result = service.run()
    (outcome,) = result.outcomes
    assert outcome.kind == "keys" and not outcome.error and outcome.ingested == 2
    (key_pid,) = service_parts["index"].members(outcome.pid)
    key = OcflRepository(tmp_path / "ocfl").get(key_pid)
    assert key.dc["title"] == ["<i>Thalictrum</i> in Mitteleuropa"] and key.dc["language"] == ["de"]
    assert key.k2n["Best_Quality_URI"] == [WIKI + "Thalictrum_in_Mitteleuropa#thalictrum"]
    report = app.edits["Thalictrum in Mitteleuropa/Metadata aggregation report"]
    assert "Records: 1; objects ingested: 2; errors: 0; warnings: 0" in report
    assert "[[Category:Metadata aggregation reports]]" in report
    login, edit = (q for q in app.queries if q.get("action") in ("login", "edit"))
    assert login["lgname"] == "Bot@ingest" and edit["token"] == "csrf-token+\\\\"


def test_a_report_poster_needs_an_api_and_both_secrets_it_names():
    http = HttpClient(allow_private=True, retries=0)
    assert report_poster("k2n", None, "K2N_BOT", "K2N_BOT_PASSWORD", http, {}.get) is None  # no wiki_api: no reports
    with pytest.raises(ConfigError, match="wiki_user_env / wiki_password_env") as refused:
        report_poster("k2n", "http://127.0.0.1:9/w/api.php", "K2N_BOT", "K2N_BOT_PASSWORD", http, {"K2N_BOT": "b"}.get)
    assert refused.value.provider == "k2n"


def test_fedora_transaction_abandoned_by_a_crash(template_index, service_parts, fedora):
    """A crashed ingest leaves an open fcr:tx holding its resources: the restart gets 409, the unit fails
    and the interval stays open; once Fedora expires the transaction the next run ingests it."""
    app, url = template_index
    app.records = [r for r in wiki_records() if r["TemplateName"] == "Key Start"]
    repo = fedora.repo
    books = service_parts["books"]
    collection = repo.object_url(pid_from_uri(WIKI + "Thalictrum_in_Mitteleuropa"))
    _, headers, _ = repo.call("POST", repo.transaction_endpoint())  # the crashed process: began, wrote, never finished
    crashed = headers["Location"]
    repo.call("PUT", collection, {"Atomic-ID": crashed, "Content-Type": "text/turtle",
                                  "Link": '<http://www.w3.org/ns/ldp#BasicContainer>; rel="type"'}, b"")
    blocked = make_service(url, service_parts, repo).run()
    (outcome,) = blocked.outcomes
    assert "409" in outcome.error and books.last_success(url) is None and books.watchdog_entry(url) is None
    assert books.last_success(url, WIKI + "Thalictrum_in_Mitteleuropa") is None
    ours = [r for r in fedora.proxy.requests if r.method == "POST" and r.reply.get("Location") not in (None, crashed)]
    assert [r.method for r in fedora.proxy.calls(path=urlsplit(ours[-1].reply["Location"]).path)] == ["DELETE"]
    repo.call("DELETE", crashed)  # what Fedora does when the transaction's Atomic-Expires passes: roll it back
    done = make_service(url, service_parts, repo).run()
    assert done.since is None and not done.failed and books.last_success(url) == done.until
    assert repo.get(pid_from_uri(WIKI + "Thalictrum_in_Mitteleuropa")).dc["title"] == ["Thalictrum in Mitteleuropa"]


def test_records_of_another_wiki_and_a_failing_report_post(template_index, service_parts, tmp_path):
    app, url = template_index
    other_wiki = {**wiki_records()[2], "BaseURL": "http://other.example.org/wiki/", "PageName": "Pollen 9"}
    app.records = [*wiki_records()[1:4], other_wiki]

    def refuse(title, text):
        raise IngestError("MediaWiki API error protectedpage: This page has been protected")

    service = make_service(url, service_parts, OcflRepository(tmp_path / "ocfl"))
    service.post_report = refuse
    other, outcome = service.run().outcomes  # one unit per wiki: same page name, different collections
    assert other.uri == "http://other.example.org/wiki/Pollen_collection" and other.ingested == 2
    assert not outcome.error and outcome.ingested == 3 and "protectedpage" in outcome.report_error
    assert [i.message for i in outcome.issues] == [
        "belongs to collection http://other.example.org/wiki/Pollen_collection, not ingested here"]
    assert service_parts["index"].members(outcome.pid) != service_parts["index"].members(other.pid)
    assert service_parts["books"].last_success(url, WIKI + "Pollen_collection") is not None


def by_page(index, repo, collection_pid):
    """``{harvesting page: pid}`` of a collection's members."""
    return {repo.get(pid).harvesting_url.removeprefix(WIKI): pid for pid in index.members(collection_pid)}


def test_a_record_failing_validation_keeps_the_object_of_its_previous_version(template_index, service_parts,
                                                                             tmp_path):
    app, url = template_index
    collection, pollen_1, pollen_2 = wiki_records()[1:4]
    app.records = [collection, pollen_1, pollen_2]
    repo, index = OcflRepository(tmp_path / "ocfl"), service_parts["index"]
    (first,) = make_service(url, service_parts, repo).run().outcomes
    before = by_page(index, repo, first.pid)
    assert set(before) == {"Pollen_1", "Pollen_2"}
    # Pollen 1 is edited into an invalid record, Pollen 2 leaves the wiki
    app.records = [collection, {**pollen_1, "Type": "Painting", "Modified": next_second(datetime.now(timezone.utc))}]
    (second,) = make_service(url, service_parts, repo).run().outcomes
    assert [i.message for i in second.issues] == ["no PID type code for resource type 'Painting'"]
    assert second.removed == 1 and second.kept == 1
    assert by_page(index, repo, first.pid) == {"Pollen_1": before["Pollen_1"]}
    assert repo.get(before["Pollen_1"]).dc["type"] == ["StillImage"] and not repo.exists(before["Pollen_2"])


def key_start(key_id, modified):
    return {"TemplateName": "Key Start", "BaseURL": WIKI, "PageName": "Thalictrum in Mitteleuropa",
            "Modified": modified, "Harvested": modified, "id": key_id, "title": f"Key {key_id}",
            "creators": "Ralf Hand"}


def test_records_the_index_could_not_read_are_kept_and_retried(template_index, service_parts, tmp_path):
    app, url = template_index
    hour_ago = stamp(timedelta(hours=-1))
    alpha = [metadata("Alpha collection", "Alpha collection", timedelta(hours=-1), Type="Collection", Title="A"),
             *(metadata(f"Alpha {i}", "Alpha collection", timedelta(hours=-1), Type="Sound",
                        **{"Best Quality URI": f"http://snd.example.org/a{i}.mp3"}) for i in (1, 2))]
    keys = [key_start("one", hour_ago), key_start("two", hour_ago)]
    app.records = [*alpha, *keys]
    repo, index, books = OcflRepository(tmp_path / "ocfl"), service_parts["index"], service_parts["books"]
    first = make_service(url, service_parts, repo).run()
    alpha_out, keys_out = first.outcomes
    alpha_uri, keys_uri = alpha_out.uri, keys_out.uri
    restart = {uri: books.last_success(url, uri) for uri in (alpha_uri, keys_uri)}
    alpha_1, alpha_2 = (by_page(index, repo, alpha_out.pid)[f"Alpha_{i}"] for i in (1, 2))
    key_1, key_2 = sorted(index.members(keys_out.pid), key=lambda pid: repo.get(pid).dc["title"])

    # the index answers Alpha 1 and key one with a Modified time it cannot give; Alpha 2 and key two are edited
    later = after_run()
    app.records = [alpha[0], {**alpha[1], "Modified": "yesterday"}, {**alpha[2], "Title": "A2", "Modified": later},
                   {**keys[0], "Modified": "yesterday"}, {**keys[1], "description": "neu", "Modified": later}]
    second = make_service(url, service_parts, repo).run()
    assert not second.failed and len(second.problems) == 3  # Alpha 1 twice (delta and collection), key one
    assert all("bad Modified/Harvested time" in problem for problem in second.problems)
    for pid in (alpha_1, alpha_2, key_1, key_2):
        assert repo.exists(pid) and index.get(pid)["state"] == "live"
    assert books.last_success(url) == first.until  # the interval is asked again
    assert {uri: books.last_success(url, uri) for uri in restart} == restart  # and its units are not skipped
    assert [(o.uri, o.removed, o.kept) for o in second.outcomes] == [(alpha_uri, 0, 2), (keys_uri, 0, 2)]

    # the index reads them again (unchanged; key one with its page's time): the next cycle re-ingests both
    # units and only then removes the replaced objects
    app.records[1], app.records[3] = alpha[1], {**keys[0], "Modified": later}
    third = make_service(url, service_parts, repo).run()
    assert third.since == first.until and not third.failed and not third.problems
    assert [(o.uri, o.skipped, o.removed, o.kept) for o in third.outcomes] == [(alpha_uri, False, 1, 0),
                                                                               (keys_uri, False, 1, 0)]
    assert alpha_1 in index.members(alpha_out.pid) and key_1 in index.members(keys_out.pid)
    assert not repo.exists(alpha_2) and not repo.exists(key_2)
    assert books.last_success(url) == third.until and books.last_success(url, alpha_uri) > restart[alpha_uri]
