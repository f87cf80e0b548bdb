"""VoIDs with subsets and archive dumps, on the real dumps served by a local site, against both stores."""

import gzip
import hashlib
import tarfile

import pytest

from ingest_assets.linked_data.watch import run_key
from ingest_assets.core.errors import ArchiveError, ParseError
from ingest_assets.linked_data import importer
from ingest_assets.linked_data.importer import ProviderSource, check, cleanup, fetch_void, import_update
from ingest_assets.core.modified import parse_modified
from ingest_assets_tests.support import tar_bytes
from ingest_assets_tests.support.linked_data import (
    CRUISE, FUNDING, LABEL, LINKS, ORGS, PERSONS, RDFXML_BOMB, bcodmo_archives, publish, zipped,
)

def harvest(case, http, url: str, provider: str):
    result = import_update(ProviderSource(provider, url, allow_private=True), case.store, http, case.graphs(provider))
    cleanup(case.store, case.graphs(provider))
    return result


@pytest.mark.parametrize(("merge_fraction", "strategy"), [(importer.MERGE_FRACTION, "copy"), (1.0, "merge")])
def test_only_the_changed_subset_is_fetched_again(store_case, site, http, void_fixtures, monkeypatch,
                                                  merge_fraction, strategy):
    monkeypatch.setattr(importer, "MERGE_FRACTION", merge_fraction)
    url = publish(site, "p", "2015-11-05", "2015-11-05", bcodmo_archives(site, void_fixtures, "p", "Cruise one"))
    first = harvest(store_case, http, url, "p")
    assert first.strategy == "replace"
    assert [f.rdf_format.name for f in first.files] == ["Turtle", "RDF/XML", "RDF/XML", "Turtle", "N-Triples"]
    assert [f.url.removeprefix(site.base) for f in first.files] == [
        "/p/bcodmo.tar.gz!bcodmo/cruise.ttl", "/p/bcodmo.tar.gz!bcodmo/funding.rdf", "/p/persons.zip!persons.rdf",
        f"/f/1/{ORGS}", f"/f/2/{LINKS}.gz"]
    funding = (void_fixtures / FUNDING).read_bytes()  # a member's lineage is its own bytes
    assert (first.files[1].size, first.files[1].sha256) == (len(funding), hashlib.sha256(funding).hexdigest())
    before = store_case.current_triples("p")
    assert len(before) == 1 + 329 + 72 + 329 + 387
    assert f'{CRUISE} {LABEL} "Cruise one"' in before

    site.requested.clear()
    url = publish(site, "p", "2015-11-05", "2015-11-06", bcodmo_archives(site, void_fixtures, "p", "Cruise 1"))
    second = harvest(store_case, http, url, "p")
    assert second.strategy == strategy
    assert site.requested == ["/p/void.ttl", "/p/bcodmo.tar.gz", "/p/persons.zip"]  # not the orgs subset's dumps
    after = store_case.current_triples("p")
    assert after == (before - {f'{CRUISE} {LABEL} "Cruise one"'}) | {f'{CRUISE} {LABEL} "Cruise 1"'}
    state = store_case.graphs("p").read_state(store_case.store)
    assert state.subsets == {url + "#orgs": parse_modified("2015-11-05"), url + "#bcodmo": parse_modified("2015-11-06")}
    assert state.modified_text == "2015-11-06"

    site.requested.clear()
    assert harvest(store_case, http, url, "p").strategy == "unchanged"
    assert site.requested == ["/p/void.ttl"]


def test_a_subset_changing_below_the_newest_date_is_noticed(store_case, site, http, void_fixtures):
    archives = bcodmo_archives(site, void_fixtures, "p", "Cruise one")
    url = publish(site, "p", "2015-11-01", "2015-11-09", archives)
    harvest(store_case, http, url, "p")
    source = ProviderSource("p", url, allow_private=True)
    before = fetch_void(http, source)
    assert not check(source, before, store_case.graphs("p").read_state(store_case.store)).due

    publish(site, "p", "2015-11-02", "2015-11-09", archives)  # the VoID's newest date stays 2015-11-09
    after = fetch_void(http, source)
    found = check(source, after, store_case.graphs("p").read_state(store_case.store))
    assert [part.dataset for part in found.parts] == [url + "#orgs"]
    assert after.modified == before.modified and run_key("p", after) != run_key("p", before)


def test_a_provider_moving_to_subsets_is_replaced_whole(store_case, site, http, void_fixtures):
    harvest(store_case, http, site.void("/p/void.ttl", '"2015-11-05"^^xsd:date', [site.fixture(PERSONS)]), "p")
    url = publish(site, "p", "2015-11-01", "2015-11-01", bcodmo_archives(site, void_fixtures, "p", "Cruise one"))
    assert harvest(store_case, http, url, "p").strategy == "replace"  # subsets have no record yet: all are due
    assert len(store_case.current_triples("p")) == 1 + 329 + 72 + 329 + 387


def _bump_bcodmo(case, site, http, void_fixtures, dumps: list[str]):
    """Import both subsets, then publish a VoID whose bcodmo subset changed to ``dumps``; its import must fail."""
    url = publish(site, "p", "2015-11-05", "2015-11-05", bcodmo_archives(site, void_fixtures, "p", "Cruise one"))
    harvest(case, http, url, "p")
    before, state = case.current_triples("p"), case.graphs("p").read_state(case.store)
    publish(site, "p", "2015-11-05", "2015-11-06", dumps)
    return url, before, state


@pytest.mark.parametrize(
    ("members", "error", "needles"),
    [
        ([("ok.ttl", tarfile.REGTYPE, f'{CRUISE} {LABEL} "x" .\n'.encode()), ("../evil.ttl", tarfile.REGTYPE, b"")],
         ArchiveError, ["unsafe entry name '../evil.ttl'", "bad.tar.gz!../evil.ttl"]),
        ([("passwd.ttl", tarfile.SYMTYPE, b"/etc/passwd")], ArchiveError, ["is a symbolic link", "!passwd.ttl"]),
        ([("bomb.rdf", tarfile.REGTYPE, RDFXML_BOMB.encode())], ParseError,
         ["RDF/XML dump refused", "bad.tar.gz!bomb.rdf"]),
        ([("ok.ttl", tarfile.REGTYPE, b""), ("table.xlsx", tarfile.REGTYPE, b"PK")], ParseError,
         ["archive member 'table.xlsx'", "no parser", ".ttl", ".tar.gz", "bad.tar.gz"]),
    ],
)
def test_a_bad_archive_member_fails_the_subset_and_leaves_the_graph(store_case, site, http, void_fixtures,
                                                                    members, error, needles):
    bad = site.put("/p/bad.tar.gz", tar_bytes(members), "application/gzip")
    url, before, state = _bump_bcodmo(store_case, site, http, void_fixtures, [bad])
    with pytest.raises(error) as caught:
        harvest(store_case, http, url, "p")
    message = str(caught.value)
    assert "provider 'p'" in message and all(needle in message for needle in needles), message
    assert store_case.current_triples("p") == before
    assert store_case.graphs("p").read_state(store_case.store) == state  # no subset's modified advanced


def test_a_zip_with_a_traversal_member_is_refused(store_case, site, http, void_fixtures):
    bad = site.put("/p/bad.zip", zipped({"../../etc/cron.d/x.ttl": b""}), "application/zip")
    url, before, _ = _bump_bcodmo(store_case, site, http, void_fixtures, [bad])
    with pytest.raises(ArchiveError, match=r"unsafe entry name .*bad\.zip!\.\./\.\./etc"):
        harvest(store_case, http, url, "p")
    assert store_case.current_triples("p") == before


@pytest.mark.parametrize("name", ["dump.hdt", "dump.xlsx.gz"])
def test_an_unsupported_dump_format_is_refused(store_case, site, http, void_fixtures, name):
    bad = site.put(f"/p/{name}", gzip.compress(b"\x00binary") if name.endswith(".gz") else b"HDT\x01",
                   "application/octet-stream")
    url, before, _ = _bump_bcodmo(store_case, site, http, void_fixtures, [bad])
    with pytest.raises(ParseError) as caught:
        harvest(store_case, http, url, "p")
    assert f"dump '{name.removesuffix('.gz')}' is in a format with no parser here (supported: .ttl" in str(caught.value)
    assert bad in str(caught.value)
    assert store_case.current_triples("p") == before


def test_dumps_without_an_rdf_extension_are_still_read(store_case, site, http, void_fixtures):
    persons = zipped({"persons.rdf": (void_fixtures / PERSONS).read_bytes()})
    dumps = [
        site.put("/p/export", persons, "application/zip") + "?id=3",  # an archive by its media type
        site.put("/p/release/2015.11.05", f'{CRUISE} {LABEL} "Cruise one" .\n', "text/plain"),  # sniffed
    ]
    result = harvest(store_case, http, site.void("/p/void.ttl", '"2015-11-05"^^xsd:date', dumps), "p")
    assert [(f.url.removeprefix(site.base), f.triples) for f in result.files] == [
        ("/p/export?id=3!persons.rdf", 72), ("/p/release/2015.11.05", 1)]
