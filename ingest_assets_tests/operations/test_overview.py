"""The hub overview and its status page, on real record pipeline outputs: counts over the days that have data
(not a window ending yesterday), last good day, the recorded last failure, a refused registry entry; the
``hub_status`` asset writes the page and the UI's table; ``serve-resourcesync``'s app serves it."""

from __future__ import annotations

import json
import re
from datetime import date, datetime, timezone
from wsgiref.util import setup_testing_defaults

import dagster as dg
import pytest

from ingest_assets.cli.main import main
from ingest_assets.core.registry import load_registry
from ingest_assets.core.settings import Settings
from ingest_assets.definitions import build_definitions
from ingest_assets.demo.oai_server import serve_in_thread
from ingest_assets.demo.samples import sample_records
from ingest_assets.operations.failures import Failure, record_failure
from ingest_assets.operations.overview import build_overview
from ingest_assets.operations.page import render_page
from ingest_assets.storage.counts import day_counts
from ingest_assets.records.indexing import DEFAULT_ALIAS, open_search_index
from ingest_assets.resourcesync.server import ResourceSyncApp
from ingest_assets.storage import LocalStorage
from ingest_assets.storage.layout import status_page_key

pytestmark = pytest.mark.xdist_group("overview")  # the module's hub (pipeline runs) is built once, on one xdist worker

DAYS = (date(2026, 1, 14), date(2026, 1, 15))
NOW = datetime(2026, 11, 24, 9, 30, tzinfo=timezone.utc)  # months after the data: a window ending today would miss it
FAILURE = Failure("run", "record_pipeline", "demo", (date(2026, 1, 16),), "original_records", "HTTP 503", "abcdef123456",
                  "http://ui/runs/abcdef123456", NOW)


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """Two demo days through the pipeline (one range run); a linked-data entry; an entry with a misspelt key."""
    tmp_path = tmp_path_factory.mktemp("overview")
    server, url = serve_in_thread(sample_records(day=DAYS[1]))
    registry = tmp_path / "registry.yaml"
    registry.write_text(
        f"demo: {{label: Riverside, harvest: {{type: oai, endpoint: '{url}', allow_private: true}}, mapping: oai_dc}}\n"
        "lod: {void: 'https://example.org/void.ttl'}\n"
        f"typo: {{harvest: {{type: oai, endpoint: '{url}', metadataprefix: mods}}}}\n"
    )
    settings = Settings.from_env({"INGEST_HOME": str(tmp_path / "home"), "INGEST_REGISTRY": str(registry)})
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("record_providers", ["demo"])
        result = build_definitions(settings).resolve_job_def("record_pipeline").execute_in_process(
            instance=instance, tags={"dagster/asset_partition_range_start": f"{DAYS[0]}|demo",
                                     "dagster/asset_partition_range_end": f"{DAYS[1]}|demo"})
        assert result.success
        record_failure(LocalStorage(settings.storage_url), FAILURE)  # as failure_sensor records a failed run
        yield settings, instance
    server.shutdown()


def test_the_overview_covers_the_days_with_data_and_each_entry(hub):
    settings, _ = hub
    storage = LocalStorage(settings.storage_url)
    registry = load_registry(settings.registry_path)
    overview = build_overview(storage, registry, NOW)
    assert overview.window == (date(2025, 10, 18), DAYS[1])  # 90 days ending with the newest day harvested
    demo, lod, typo = overview.providers
    assert [d.day for d in demo.days] == list(DAYS) and demo.last_good_day == DAYS[1]
    assert demo.days[-1] == day_counts(storage, "demo", DAYS[1]) and demo.days[-1].harvested > 0
    assert demo.last_failure == FAILURE and demo.capabilities == ("records",)
    assert lod.capabilities == ("linked_data",) and not lod.days and lod.last_failure is None
    assert "registry key 'typo.harvest.metadataprefix': unknown key" in typo.problem
    assert overview.registry_notes == (f"entry 'typo' refused (the others run): {registry.problems['typo']}",)


def test_the_page_plots_each_series_over_the_window_and_says_what_failed(hub):
    settings, _ = hub
    storage = LocalStorage(settings.storage_url)
    overview = build_overview(storage, load_registry(settings.registry_path), NOW)
    html = render_page(overview)
    assert not re.search(r"<script|<link|<img|src=|url\(", html)  # self-contained: nothing runs, nothing is fetched
    chart = re.search(r'<svg[^>]*data-provider="demo".*?</svg>', html, re.S).group(0)
    for series in ("harvested", "mapped", "failed", "indexed"):
        group = re.search(rf'<g data-series="{series}".*?</g>', chart, re.S).group(0)
        assert re.findall(r'data-day="([-\d]+)"', group) == [d.isoformat() for d in DAYS]
        assert "<polyline" in group  # the two days are consecutive: joined by a line
    counts = day_counts(storage, "demo", DAYS[1])
    assert f'data-day="{DAYS[1]}" data-value="{counts.harvested}"' in chart
    assert 'class="alert" role="alert">entry &#x27;typo&#x27; refused' in html
    assert "run failed</span> 2026-01-16 at <code>original_records</code>" in html and 'href="http://ui/runs/abcdef123456"' in html
    assert "No record harvest (linked_data)" in html


def test_hub_status_writes_the_page_and_the_ui_table_and_the_server_serves_it(hub):
    settings, instance = hub
    defs = build_definitions(settings)
    result = defs.resolve_job_def("hub_status_job").execute_in_process(instance=instance)
    [materialization] = result.asset_materializations_for_node("hub_status")
    rows = {r.data["provider"]: r.data for r in materialization.metadata["providers"].records}
    assert set(rows) == {"demo", "lod", "typo"}
    assert rows["demo"]["last_good_day"] == DAYS[1].isoformat() and rows["demo"]["days_with_data"] == 2
    assert rows["typo"]["last_failure"].startswith("REFUSED: registry key 'typo.harvest.metadataprefix'")
    # publishing's columns, from its status model: the demo's live index and its newest day's review state
    index = open_search_index(settings.search)
    [live] = [i for i in index.indices(DEFAULT_ALIAS) if i.aliased and i.provider == "demo"]
    assert live.count > 0 and index.count(DEFAULT_ALIAS) == live.count
    assert (rows["demo"]["live"], rows["demo"]["review"]) == (live.count, f"{DAYS[1]} published")
    assert (rows["lod"]["live"], rows["lod"]["review"]) == (None, "")  # nothing of it is indexed or reviewed
    storage = LocalStorage(settings.storage_url)
    page = storage.read_bytes(status_page_key()).decode()
    assert 'data-provider="demo"' in page
    summary = re.search(r'<tr id="summary-demo">.*?</tr>', page, re.S).group(0)
    assert f'<td class="n">{live.count:,}</td><td>{DAYS[1]} published</td>' in summary

    app = ResourceSyncApp(storage, [])
    environ = {"PATH_INFO": "/status.html", "REQUEST_METHOD": "GET"}
    setup_testing_defaults(environ)
    answer = {}
    body = b"".join(app(environ, lambda status, headers: answer.update(status=status, headers=dict(headers))))
    assert answer["status"] == "200 OK" and answer["headers"]["Content-Type"] == "text/html; charset=utf-8"
    assert body.decode() == page


def test_status_prints_the_registry_problems_and_the_same_columns(hub, monkeypatch, capsys):
    """``ingest-assets status`` reads the status model the page reads, and says first what is wrong with the
    registry: a refused entry, and a file that no longer loads (the hub then runs on its last good copy)."""
    settings, _ = hub
    monkeypatch.setattr(Settings, "current", staticmethod(lambda: settings))
    assert main(["status", "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["registry"] == str(settings.registry_path)
    assert [p[:47] for p in status["registry_problems"]] == ["entry 'typo' refused (the others run): registry"]
    demo = next(p for p in status["providers"] if p["provider"] == "demo")
    index = open_search_index(settings.search)
    assert demo["live_count"] == index.count(DEFAULT_ALIAS) and demo["review"]["state"] == "published"

    good = settings.registry_path.read_text()
    settings.registry_path.write_text(good + "demo: [not, a, mapping\n")  # the file no longer parses
    try:
        assert main(["status"]) == 0
    finally:
        settings.registry_path.write_text(good)
    out = capsys.readouterr().out
    problems, first = out.split("\n\n")[:2]
    assert problems.startswith(f"registry {settings.registry_path}: 2 problem(s)\n"
                               "  REGISTRY FILE DOES NOT LOAD, running on its last good copy: ")
    assert "  entry 'typo' refused (the others run): " in problems
    assert first.startswith("demo (Riverside)\n  last harvest   2026-01-15")  # the last good copy's entry
    assert f"live index     {demo['live_index']}: {demo['live_count']} documents" in out
