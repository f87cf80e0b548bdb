"""``ingest-assets map``: previewing a profile on files (XML, OAI-PMH pages, JSON, JSON lines) and on a provider's
newest harvest output, writing nothing."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
from lxml import etree

from ingest_assets.cli.main import main
from ingest_assets.core.http import HttpClient
from ingest_assets.core.registry import load_registry
from ingest_assets.records.harvest import StorageCheckpoint, harvest_records
from ingest_assets.records.mapping.mapper import ProviderSettings, build_mapper, mapper_for
from ingest_assets.records.preview import preview, read_inputs
from ingest_assets.records.mapping.profiles import PROFILES
from ingest_assets.core.settings import Settings
from ingest_assets.storage.activities import RecordStream, write_activity
from ingest_assets.storage.avro import ORIGINAL_RECORD
from ingest_assets_tests.support.mapping import CALISPHERE, HUB_RECORDS
from ingest_assets_tests.support.parity import PARTIAL_RECORD
from ingest_assets_tests.support.parity import hubs as parity_hubs

OAI = "{http://www.openarchives.org/OAI/2.0/}"


def run_json(capsys, *argv) -> tuple[int, dict]:
    code = main(["map", *argv, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def test_nara_item_file_prints_json_ld_and_coverage(shared_fixtures, capsys):
    code, out = run_json(capsys, "--profile", "nara", "--provider", "nara", "--label",
                         "National Archives and Records Administration",
                         str(shared_fixtures / "dpla" / "provider-nara-item.xml"))
    assert code == 0
    (entry,) = out["records"]
    assert entry["local_id"] == "2132862"  # from the profile's id rule
    assert entry["id"] == "805598afebf2c093272a5a044938be59" and entry["messages"] == []
    jsonld = entry["jsonld"]
    assert jsonld["@id"] == "http://dp.la/api/items/805598afebf2c093272a5a044938be59"
    assert jsonld["provider"] == {"@id": "http://dp.la/api/contributor/nara",
                                  "name": "National Archives and Records Administration"}
    assert jsonld["dataProvider"] == {"name": "National Archives at Chicago"}
    assert jsonld["sourceResource"]["title"] == ["Photograph of Aerial View of Silver Island Lake"]
    assert jsonld["sourceResource"]["extent"] == ["14 pages"]
    summary = out["summary"]
    assert (summary["attempted"], summary["mapped"], summary["failed"]) == (1, 1, 0)
    assert summary["coverage"]["extent"] == 1 and summary["coverage"]["publisher"] == 0
    assert summary["coverage"]["providerUri"] == 1 and summary["coverage"]["temporal"] == 0


def test_oai_page_table_output(shared_fixtures, tmp_path, capsys):
    page = shared_fixtures / "oai-pmh" / "zenodo-listrecords-oai_dc.xml"
    headers = [h.findtext(f"{OAI}identifier") for h in etree.parse(str(page)).iter(f"{OAI}header")]
    code, out = run_json(capsys, "--profile", "oai_dc", "--provider", "zenodo", str(page))
    assert [e["local_id"] for e in out["records"]] == headers and len(headers) > 1
    # Zenodo's oai_dc has no dc:publisher: every record lacks its dataProvider ...
    assert out["summary"]["failed"] == len(headers) and code == 1
    assert {m["field"] for e in out["records"] for m in e["messages"]} == {"dataProvider"}
    # ... which the hub sets once for the provider
    overrides = tmp_path / "zenodo.yaml"
    overrides.write_text("dataProvider: {default: Zenodo}\n")
    argv = ["--profile", "oai_dc", "--provider", "zenodo", "--override", str(overrides), str(page)]
    code, out = run_json(capsys, *argv)
    summary = out["summary"]
    assert code == 0 and summary["mapped"] == summary["attempted"] == len(headers)
    assert {e["jsonld"]["dataProvider"]["name"] for e in out["records"]} == {"Zenodo"}
    assert summary["coverage"]["title"] == summary["coverage"]["dataProvider"] == len(headers)

    main(["map", *argv, "--limit", "1"])
    table = capsys.readouterr().out
    assert table.count("\n== ") + table.startswith("== ") == 1  # one record shown, all counted
    assert f"{len(headers)} records: {len(headers)} mapped, 0 failed" in table
    assert f"title                 {len(headers):>6}  100.0%" in table


def test_json_lines_with_a_broken_line_and_an_override_file(tmp_path, capsys):
    second = {**CALISPHERE, "id": "ark:/13030/second", "url_item": "https://calisphere.org/item/ark:/13030/second/"}
    lines = tmp_path / "calisphere.jsonl"
    lines.write_text(json.dumps(CALISPHERE) + "\n" + '{"id": "broken",\n' + json.dumps(second) + "\n")
    overrides = tmp_path / "overrides.yaml"
    overrides.write_text("dataProvider: {value: USC Digital Library}\ntemporal: null\n")
    code, out = run_json(capsys, "--profile", "cdl", "--provider", "cdl", "--override", str(overrides), str(lines))
    assert code == 1  # a record failed
    assert [e["local_id"] for e in out["records"]] == ["ark:/13030/kt2g5019mv", "calisphere.jsonl:2",
                                                      "ark:/13030/second"]
    broken = out["records"][1]
    assert broken["jsonld"] is None and broken["messages"][0]["kind"] == "unparseable"
    assert [e["jsonld"]["dataProvider"] for e in out["records"] if e["jsonld"]] == [{"name": "USC Digital Library"}] * 2
    assert out["summary"]["coverage"]["temporal"] == 0 and out["summary"]["coverage"]["subject"] == 2


def test_a_solr_page_is_split_by_the_profiles_records_path(tmp_path):
    page = tmp_path / "select.json"
    page.write_text(json.dumps({"responseHeader": {"status": 0}, "response": {"numFound": 2, "start": 0, "docs": [
        CALISPHERE, {**CALISPHERE, "id": "ark:/13030/second"}]}}))
    originals = list(read_inputs([str(page)], PROFILES["cdl"], "cdl"))
    assert [o["id"] for o in originals] == ["ark:/13030/kt2g5019mv", "ark:/13030/second"]
    assert json.loads(originals[0]["document"]) == CALISPHERE and originals[0]["mimetype"] == "application_json"


def test_a_format_the_profile_does_not_read_is_reported_per_record(shared_fixtures, capsys):
    code, out = run_json(capsys, "--profile", "nara",
                         str(shared_fixtures / "dpla" / "provider-minnesota-mdl-json.json"))
    assert code == 1
    (entry,) = out["records"]
    assert "reads XML documents, not application_json" in entry["messages"][0]["reason"]


def harvest(storage, started: datetime, records: list[dict]) -> None:
    write_activity(storage, RecordStream(records, started=started), provider="calif", activity="harvest",
                   day=started.date(), started=started, schema=ORIGINAL_RECORD, partition="x")


def test_the_newest_harvest_output_of_a_provider(tmp_storage, monkeypatch, capsys):
    def row(record: dict) -> dict:
        return {"id": record["id"], "ingestDate": 1, "provider": "calif", "document": json.dumps(record),
                "mimetype": "application_json", "deleted": False}

    harvest(tmp_storage, datetime(2026, 3, 1, 6, tzinfo=timezone.utc), [row({**CALISPHERE, "id": "old"})])
    harvest(tmp_storage, datetime(2026, 3, 2, 6, tzinfo=timezone.utc),
            [row(CALISPHERE), {**row(CALISPHERE), "id": "gone", "document": "", "deleted": True}])
    before = sorted(p.relative_to(tmp_storage.root) for p in tmp_storage.root.rglob("*"))

    report = preview(build_mapper(ProviderSettings("calif", "Calisphere"), PROFILES["cdl"], {}),
                     read_inputs(["harvest:calif"], PROFILES["cdl"], "calif", tmp_storage), _Sink(), output="json")
    assert (report.attempted, report.mapped, report.deleted) == (2, 1, 1)

    monkeypatch.setenv("INGEST_STORAGE", str(tmp_storage.root))
    Settings.current.cache_clear()
    try:
        code, out = run_json(capsys, "--profile", "cdl", "harvest:calif")
    finally:
        Settings.current.cache_clear()
    assert code == 0
    assert [e["local_id"] for e in out["records"]] == ["ark:/13030/kt2g5019mv", "gone"]  # not the older 'old'
    assert out["records"][0]["id"] == out["records"][0]["jsonld"]["id"]  # minted with the harvest's provider
    assert sorted(p.relative_to(tmp_storage.root) for p in tmp_storage.root.rglob("*")) == before  # wrote nothing


class _Sink:
    def write(self, text: str) -> int:
        return len(text)


@pytest.mark.parametrize(("argv", "needle"), [
    (["--profile", "marc", "x.xml"], "unknown mapping 'marc'; hint: known profiles: bhl, cdl, "),
    (["--profile", "my-museum.yaml", "x.xml"], "cannot read the profile"),
    (["--profile", "oai_dc", "missing.xml"], "cannot read the input"),
    (["--profile", "oai_dc", "harvest:nobody"], "no complete harvest output"),
])
def test_errors_are_one_line(tmp_path, monkeypatch, capsys, argv, needle):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("INGEST_STORAGE", str(tmp_path / "storage"))
    Settings.current.cache_clear()
    try:
        assert main(["map", *argv]) == 2
    finally:
        Settings.current.cache_clear()
    err = capsys.readouterr().err
    assert err.startswith("ingest-assets map: ") and needle in err and err.count("\n") == 1


def test_a_broken_json_document_is_named_not_read_as_lines(tmp_path, capsys):
    broken = tmp_path / "record.json"
    broken.write_text(json.dumps(CALISPHERE, indent=2)[:-3])
    assert main(["map", "--profile", "cdl", str(broken)]) == 2
    err = capsys.readouterr().err
    assert "not well-formed JSON" in err and str(broken) in err


def test_broken_xml_input_is_named(tmp_path, capsys):
    broken = tmp_path / "page.xml"
    broken.write_bytes(b"<OAI-PMH><ListRecords><record>")
    assert main(["map", "--profile", "oai_dc", str(broken)]) == 2
    err = capsys.readouterr().err
    assert "not readable XML" in err and str(broken) in err


@pytest.mark.parametrize("hub", sorted({*(hub.hub for hub in parity_hubs()), *HUB_RECORDS}))
def test_each_hub_profile_maps_its_ingestion3_fixture_from_the_command_line(shared_fixtures, capsys, tmp_path, hub):
    """Its ingestion3 test's fixture, the first record that test writes inline (pa, harvard; a partial one gets
    what it lacks as overrides, as the parity data maps it), or a realistic record of its feed (njde, ithaka:
    ingestion3 tests neither)."""
    own_first = sorted(parity_hubs([hub]), key=lambda h: h.name != h.hub)
    data = own_first[0].data if own_first else {"records": {hub: HUB_RECORDS.get(hub)}}
    label = (data.get("registry") or {}).get("label")  # a profile several hubs share: the hub's own label
    options = ["--label", label] if label else []
    if "fixture" in data:
        path = shared_fixtures / "ingestion3" / data["fixture"]
    else:
        path = tmp_path / f"{hub}.xml"
        path.write_text(next(iter(data["records"].values())), encoding="utf-8")
        overrides = tmp_path / "partial.yaml"
        overrides.write_text(json.dumps(PARTIAL_RECORD), encoding="utf-8")
        options += ["--override", str(overrides)]
    code, out = run_json(capsys, "--profile", hub, *options, str(path))
    assert code == 0, out["records"][0]["messages"]
    (entry,) = out["records"]
    assert entry["jsonld"]["provider"]["name"] == (label or PROFILES[hub].provider.label)
    assert entry["jsonld"]["@id"] == f"http://dp.la/api/items/{entry['id']}"


def test_a_file_of_several_records_is_split_below_the_document_element(shared_fixtures, tmp_path):
    one = (shared_fixtures / "ingestion3" / "tx.xml").read_text()
    two = one.replace("metapth2355", "metapth9999").replace("partner:UNT", "partner:SMU")
    page = tmp_path / "records.xml"
    page.write_text(f"<records>{one}{two}</records>")
    originals = list(read_inputs([str(page)], PROFILES["tx"], "tx"))
    assert [o["id"] for o in originals] == ["info:ark/67531/metapth2355", "info:ark/67531/metapth9999"]
    records = [build_mapper(ProviderSettings("tx", "Texas", None, "texas"), PROFILES["tx"], {}).map(o).record
               for o in originals]
    assert [r["dataProvider"] for r in records] == ["UNT Libraries", "Southern Methodist University Libraries"]


def test_a_registry_provider_is_previewed_with_the_ids_its_harvest_mints(shared_fixtures, tmp_path, tmp_storage,
                                                                         monkeypatch, capsys):
    """A provider of the registry harvesting a file by its own record_xpath and id_xpath (here a dump's oai_dc
    records, identified by their dc:identifier, not the OAI header), with its own id_prefix: previewed with
    --provider, the file is read as its harvest reads it and mapped as its pipeline maps, so the preview's DPLA
    ids are the ones the harvest mints (it showed ids minted from the OAI headers with the name 'zen')."""
    page = shared_fixtures / "oai-pmh" / "zenodo-listrecords-oai_dc.xml"
    registry = tmp_path / "registry.yaml"
    registry.write_text(
        "zen:\n  label: Zenodo\n  id_prefix: zenodo\n  mapping: oai_dc\n"
        "  mapping_overrides: {dataProvider: {default: Zenodo}}\n"
        f"  harvest: {{type: file, path: '{page}', format: xml, record_xpath: //oai_dc:dc,\n"
        "            id_xpath: 'normalize-space(dc:identifier[1])', namespaces: {oai_dc: "
        "'http://www.openarchives.org/OAI/2.0/oai_dc/', dc: 'http://purl.org/dc/elements/1.1/'}}\n")
    entry = load_registry(registry)["zen"]
    mapper = mapper_for(entry)
    harvested = [mapper.map(r).record["id"] for r in harvest_records(
        entry, started=datetime(2026, 3, 1, tzinfo=timezone.utc), window=None, http=HttpClient(),
        checkpoint=StorageCheckpoint(tmp_storage, "zen"))]
    assert len(harvested) == 7 and mapper.mint("http://zenodo.org/record/13841") in harvested

    monkeypatch.setenv("INGEST_REGISTRY", str(registry))
    Settings.current.cache_clear()
    try:
        code, out = run_json(capsys, "--provider", "zen", str(page))  # the profile is the provider's mapping
    finally:
        Settings.current.cache_clear()
    assert code == 0 and [e["id"] for e in out["records"]] == harvested
    assert out["records"][0]["local_id"] == "http://zenodo.org/record/13841"
    assert {e["jsonld"]["provider"]["name"] for e in out["records"]} == {"Zenodo"}  # the entry's label
