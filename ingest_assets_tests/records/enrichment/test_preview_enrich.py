"""``ingest-assets map --enrich``: the enriched index document beside the mapped one, the steps that changed each
field, and the enrichment report, on a record DPLA published (its original, as Minnesota sent it)."""

from __future__ import annotations

import json

import pytest

from ingest_assets.cli.main import main


@pytest.fixture
def mdl_original(shared_fixtures, tmp_path):
    document = json.loads((shared_fixtures / "dpla-published" / "mdl-95af8138.json").read_text(encoding="utf-8"))
    path = tmp_path / "mdl.json"
    path.write_text(document["originalRecord"]["stringValue"], encoding="utf-8")
    return path


ARGS = ["map", "--profile", "mdl", "--provider", "minnesota", "--label", "Minnesota Digital Library"]


def test_json_shows_both_documents_and_the_steps(mdl_original, capsys):
    assert main([*ARGS, "--enrich", "--format", "json", str(mdl_original)]) == 0
    out = json.loads(capsys.readouterr().out)
    (entry,) = out["records"]
    assert entry["id"] == "95af8138a557ca7f6e5397661e3aa686"  # DPLA's id for this item
    assert entry["jsonld"]["sourceResource"]["creator"] == ["Soule, John P."]  # as mapped
    assert entry["enriched"]["sourceResource"]["creator"] == ["Soule, John P"]  # as DPLA published it
    assert entry["enriched"]["dataProvider"] == {
        "@id": "http://dp.la/api/contributor/minnesota-historical-society",
        "exactMatch": ["http://www.wikidata.org/entity/Q1937351"], "name": "Minnesota Historical Society"}
    assert entry["enrichment"] == {"creator": ["strip_ending_period"], "dataProvider": ["wikidata", "data_provider_uri"],
                                   "genre": ["capitalize_first_char"], "provider": ["wikidata"],
                                   "subject": ["strip_ending_period"]}
    enrichment = out["summary"]["enrichment"]
    assert enrichment["records"] == enrichment["improved"] == 1
    assert enrichment["steps"]["strip_ending_period creator"] == 1 and enrichment["fields"]["subject"]["changed"] == 1


def test_table_puts_them_side_by_side_and_skip_keeps_the_period(mdl_original, capsys):
    assert main([*ARGS, "--enrich", "--skip", "strip_ending_period", str(mdl_original)]) == 0
    out = capsys.readouterr().out
    assert "mapped" in out.splitlines()[1] and "enriched" in out.splitlines()[1]
    changed = [line for line in out.splitlines() if " | " in line]
    assert any('"Image"' in line and '"image"' in line for line in changed)  # genre: capitalised
    assert not any("Soule" in line for line in changed)  # skipped: the creator keeps its period
    assert "   ~ genre: capitalize_first_char" in out
    assert "enrichment: 1 of 1 records changed" in out


def test_options_need_enrich(mdl_original, capsys):
    assert main([*ARGS, "--skip", "dates", str(mdl_original)]) == 2  # one line, as every command mistake
    assert "--skip and --dates need --enrich" in capsys.readouterr().err
    assert main([*ARGS, "--enrich", "--skip", "no_such_step", str(mdl_original)]) == 2
    assert "invalid choice: 'no_such_step'" in capsys.readouterr().err
