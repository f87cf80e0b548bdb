"""The exports assets on a hub's Dagster instance: real records harvested from a file (DPLA's Smithsonian document's
original and ingestion3's SI fixture) and run through the record pipeline, then ``wikimedia_records`` (Gate D, the
export, the report and ``status`` counting it, with the hub's own institutions table); ingestion3's Texas fixture
published beside them, then ``tag_sitemaps``; as the UI materializes them."""

from __future__ import annotations

import gzip
import io
import json
from dataclasses import replace
from datetime import date
from pathlib import Path

import dagster as dg
import pytest
from resync.resource_list import ResourceList
from resync.sitemap import Sitemap

from ingest_assets.cli.main import main
from ingest_assets.definitions import build_definitions
from ingest_assets.records.indexing import open_search_index
from ingest_assets.records.publishing.journal import Journal
from ingest_assets.records.publishing.promotion import Publisher
from ingest_assets.records.publishing.review import Ledger
from ingest_assets.records.publishing.takedowns import Takedowns
from ingest_assets.storage import LocalStorage, layout
from ingest_assets_tests.support.publishing import materialized
from ingest_assets_tests.support.wikimedia import fixture_records, own_table, publish_day

DAY, LATER = date(2026, 1, 15), date(2026, 1, 16)


def materialize(pipeline, asset: str, partition: str | None = None):
    job = build_definitions(pipeline.settings).resolve_implicit_global_asset_job_def().get_subset(
        asset_selection={dg.AssetKey(asset)})
    return job.execute_in_process(partition_key=partition, instance=pipeline.instance, raise_on_error=False)


def parsed_urls(storage: LocalStorage, key: str) -> list[str]:
    """The URLs of a gzipped sitemap of the storage's ``_sitemaps/``, as resync reads them."""
    urls = ResourceList()
    Sitemap().parse_xml(io.BytesIO(gzip.decompress(Path(storage.uri(f"_sitemaps/{key}")).read_bytes())), resources=urls)
    return [r.uri for r in urls]


def command(capsys, *argv) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("search_backend", ["embedded"])
def test_the_exports_of_published_days(pipeline, shared_fixtures, tmp_path, capsys):
    kittens = json.loads((shared_fixtures / "dpla-published" / "smithsonian-4a338737.json").read_text())
    dashiki = (shared_fixtures / "ingestion3" / "si.xml").read_text().split("?>", 1)[1]
    si = tmp_path / "si.xml"
    si.write_text(f"<docs>{kittens['originalRecord']['stringValue']}{dashiki}</docs>", encoding="utf-8")
    pipeline.registry_path.write_text(
        f"si:\n  harvest: {{type: file, format: xml, path: '{si}', record_xpath: '//doc', "
        "id_xpath: 'string(descriptiveNonRepeating/record_ID)'}\n  mapping: si\n")
    # the hub's own institutions table: DPLA's, with the National Museum of American History opted in
    pipeline.settings = replace(pipeline.settings, wiki_institutions=own_table(
        tmp_path, {("Smithsonian Institution", "National Museum of American History"): True}))
    assert pipeline.run("si", DAY).success

    refused = materialize(pipeline, "wikimedia_records", f"{LATER.isoformat()}|si")
    assert not refused.success
    [failure] = [e for e in refused.all_events if e.event_type_value == "STEP_FAILURE"]
    assert "Gate D refused: si 2026-01-16 is not published (it was never indexed)" in \
        failure.step_failure_data.user_failure_data.description

    exported = materialize(pipeline, "wikimedia_records", f"{DAY.isoformat()}|si")
    assert exported.success
    metadata = materialized(exported, "wikimedia_records")[0].metadata
    assert metadata["dagster/row_count"].value == 1 and metadata["read"].value == 2
    assert metadata["failed_rights"].value == 1 and "validated after its flip" in metadata["gate"].value
    storage = LocalStorage(pipeline.settings.storage_url)
    [key] = layout.wiki_outputs(storage, "si", DAY)
    assert metadata["dagster/uri"].value == storage.uri(key)

    report = command(capsys, "report", "si", "--json")
    assert report["wikimedia"]["eligible"] == 1 and report["wikimedia"]["output"] == storage.uri(key)
    assert main(["report", "si"]) == 0 and "### Wikimedia Commons" in capsys.readouterr().out
    [status] = command(capsys, "status", "si", "--json")["providers"]
    assert status["history"][0]["day"] == DAY.isoformat() and status["history"][0]["wikimedia_eligible"] == 1

    with pipeline.settings_engine() as engine:  # Texas's records (tagged texas) published beside them
        publisher = Publisher(open_search_index(pipeline.settings.search), "dpla-map4", Journal(engine), Ledger(engine),
                              Takedowns(engine))
        texas = fixture_records("tx", shared_fixtures / "ingestion3" / "tx.xml")
        assert publish_day(storage, publisher, "tx", DAY, texas)[1].promoted
    sitemaps = materialize(pipeline, "tag_sitemaps")
    assert sitemaps.success
    assert materialized(sitemaps, "tag_sitemaps")[0].metadata["urls"].value == {"aviation": 0, "nwdh": 0, "texas": 1}
    index = Path(storage.uri(layout.sitemap_key("texas", "all_item_urls.xml")))
    sitemap, shards = Sitemap(), ResourceList()
    sitemap.parse_xml(index.open("rb"), resources=shards)
    [shard] = [r.uri for r in shards]
    assert sitemap.parsed_index and shard.startswith("https://sitemaps.dp.la/sitemap/texas/")
    assert parsed_urls(storage, shard.removeprefix("https://sitemaps.dp.la/")) == [f"https://dp.la/item/{texas[0]['id']}"]
