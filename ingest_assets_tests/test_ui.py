"""The UI steps of docs/operating.md, in headless Chromium against ``ingest-assets ui`` (``dagster dev``: webserver + daemon):
materialize one partition from the UI, launch a 3-date backfill from the asset group, a provider added to the
registry file refreshed with nobody clicking while a misspelt entry beside it stops only itself (its check red),
the operator's tables (record_counts over the days with data, hub_status per provider), and the status page the
daemon wrote after the runs, opened as people would (served by the ResourceSync server). Each final state is
saved as a screenshot in the test's folder."""

from __future__ import annotations

import os
import re
import shutil
import signal
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import dagster as dg
import pytest

from ingest_assets.demo.oai_server import serve_in_thread
from ingest_assets.demo.samples import sample_records
from ingest_assets.core.wsgi import WsgiServer
from ingest_assets.resourcesync.server import ResourceSyncApp
from ingest_assets.storage import LocalStorage, layout
from ingest_assets_tests.support import free_port, require
from ingest_assets_tests.support.ui import running_ui

CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
YESTERDAY = datetime.now(timezone.utc).date() - timedelta(days=1)
DAY = YESTERDAY - timedelta(days=5)


class Hub:
    def __init__(self, base: str, folder: Path, registry: Path, oai_url: str):
        self.base, self.folder, self.registry, self.oai_url = base, folder, registry, oai_url
        self.storage = LocalStorage(folder / "ingest" / "storage")

    def instance(self) -> dg.DagsterInstance:
        return dg.DagsterInstance.from_config(str(self.folder / "dagster"))

    def provider(self, name: str, schedule: str) -> str:
        return (f"{name}: {{harvest: {{type: oai, endpoint: '{self.oai_url}', metadata_prefix: oai_dc, allow_private: true}},"
                f" mapping: oai_dc, schedule: {schedule}}}\n")

    def backfills(self) -> list:
        with self.instance() as instance:
            return instance.get_backfills()

    def latest_materialization(self, asset: str):
        with self.instance() as instance:
            return instance.get_latest_materialization_event(dg.AssetKey(asset))

    def backfill_status(self, backfill_id: str) -> str:
        with self.instance() as instance:
            return instance.get_backfill(backfill_id).status.value

    def runs(self, **tags) -> list:
        with self.instance() as instance:
            return instance.get_run_records(dg.RunsFilter(tags=tags))

    def wait_runs(self, what: str, count: int, timeout: float = 300, **tags) -> list:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.runs(**tags)
            if len(found) >= count and all(r.dagster_run.is_finished for r in found):
                return found
            time.sleep(2)
        pytest.fail(f"{what}: {count} finished run(s) not seen within {timeout:.0f} s ({len(self.runs(**tags))} so far)")


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """``dagster dev`` on a fresh instance (one for the module), a registry with the demo provider (no schedule:
    the UI starts it)."""
    tmp_path = tmp_path_factory.mktemp("hub")
    oai, url = serve_in_thread(sample_records(day=YESTERDAY))
    registry = tmp_path / "registry.yaml"
    (tmp_path / "dagster").mkdir()
    hub = Hub("", tmp_path, registry, url)
    registry.write_text(hub.provider("demo", "false"))
    port = free_port()
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path / "dagster"), "INGEST_HOME": str(tmp_path / "ingest"),
           "INGEST_REGISTRY": str(registry), "INGEST_PARTITION_START": (YESTERDAY - timedelta(days=20)).isoformat(),
           "DAGSTER_TELEMETRY_DISABLED": "1",
           "INGEST_AUTO_EXPORTS": ""}  # no export runs of the demo provider between the runs launched here
    command = [str(Path(sys.executable).parent / "ingest-assets"), "ui", "--port", str(port)]  # as docs/operating.md gives it
    try:
        # started as a script's background job (SIGINT ignored); a loaded 2-core machine: up to 300 s to answer
        with running_ui(command, port, cwd=tmp_path, env=env, log=tmp_path / "dagster-dev.log", ignore_sigint=True) as ui:
            hub.base = ui.base
            yield hub
            # Ctrl-C, as a person stops it: the UI, dagster dev, its webserver, daemon and code servers all end
            assert not ui.stop(signal.SIGINT), ui.output()[-3000:]
    finally:
        oai.shutdown()


@pytest.fixture
def page(tmp_path, request):
    chromium = shutil.which("chromium")
    require(chromium is not None, "Debian chromium not installed (.ci/run installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        tab = browser.new_page(viewport={"width": 1600, "height": 1000})
        try:
            yield tab
        finally:
            if getattr(request.node, "failed", False):  # set by conftest's report hook
                tab.screenshot(path=str(tmp_path / "failure.png"))
            browser.close()


def _open(page, url: str, ready) -> None:
    """Open ``url`` and wait for ``ready`` (a locator). The first page of a browser also waits for Dagster's
    first-visit dialog ("Join the Dagster community", shown a moment after the page) and skips it."""
    page.goto(url, wait_until="domcontentloaded")
    ready(page).first.wait_for(timeout=60_000)
    if not getattr(page, "greeted", False):
        page.greeted = True
        try:
            page.get_by_role("button", name="Skip").click(timeout=15_000)
        except Exception:  # noqa: BLE001 - this Dagster did not show it
            pass


def _launch(page, hub: Hub, dates: str, button: str, where: str = "jobs/record_pipeline") -> None:
    """The "Materialize all" dialog of a job or asset group page: dates typed as the UI accepts them, the demo
    provider picked."""
    materialize = lambda p: p.get_by_role("button", name="Materialize all")  # noqa: E731
    _open(page, f"{hub.base}/locations/ingest_assets/{where}", materialize)
    materialize(page).first.click()
    dialog = page.get_by_role("dialog")
    dates_box = dialog.get_by_placeholder("ex: ")
    dates_box.fill(dates)
    dates_box.press("Enter")
    dialog.get_by_text("Select a partition or create one").click(timeout=60_000)  # the registry sensor added it
    page.get_by_role("menuitem", name="demo").first.click(timeout=60_000)
    dialog.get_by_text("Partition selection").click()  # closes the provider list
    dialog.get_by_role("button", name=button).click()


def test_materialize_one_partition_from_the_ui(hub, page, tmp_path):
    _launch(page, hub, DAY.isoformat(), "Launch 1 run")
    (run,) = hub.wait_runs("materialize from the UI", 1, **{"dagster/partition": f"{DAY.isoformat()}|demo"})
    assert run.dagster_run.status == dg.DagsterRunStatus.SUCCESS
    assert run.dagster_run.tags["dagster/partition"] == f"{DAY.isoformat()}|demo"
    assert all(layout.latest_output(hub.storage, "demo", a, DAY) for a in layout.ACTIVITIES)
    _open(page, f"{hub.base}/runs/{run.dagster_run.run_id}", lambda p: p.get_by_text("Success"))
    page.screenshot(path=str(tmp_path / "materialized.png"))


@pytest.mark.timeout(600)  # the records group's three days as one run, beside the other xdist worker's tests
def test_backfill_three_dates_from_the_ui(hub, page, tmp_path):
    first, last = DAY - timedelta(days=3), DAY - timedelta(days=1)
    # from the asset group: an asset backfill (a job page's backfill is refused, see refuse_truncated_range)
    _launch(page, hub, f"[{first.isoformat()}...{last.isoformat()}]", "Launch backfill", where="asset-groups/records")
    deadline = time.monotonic() + 60
    while not (backfills := hub.backfills()) and time.monotonic() < deadline:
        time.sleep(1)
    (backfill,) = backfills
    deadline = time.monotonic() + 480
    while hub.backfill_status(backfill.backfill_id) in ("REQUESTED", "CANCELING") and time.monotonic() < deadline:
        time.sleep(2)
    runs = hub.runs(**{"dagster/backfill": backfill.backfill_id})
    shapes = [(r.dagster_run.status.value, dict(r.dagster_run.tags)) for r in runs]
    assert hub.backfill_status(backfill.backfill_id) == "COMPLETED_SUCCESS", shapes
    # the record assets' BACKFILL policy: the three days are one run, each day still its own output
    (run,) = runs
    tags = run.dagster_run.tags
    assert (tags["dagster/asset_partition_range_start"], tags["dagster/asset_partition_range_end"]) == (
        f"{first.isoformat()}|demo", f"{last.isoformat()}|demo")
    missing = [(a, str(first + timedelta(days=n))) for n in range(3) for a in layout.ACTIVITIES
               if not layout.latest_output(hub.storage, "demo", a, first + timedelta(days=n))]
    assert not missing, (missing, shapes)
    _open(page, f"{hub.base}/runs?tab=backfills", lambda p: p.get_by_text("Success"))
    page.screenshot(path=str(tmp_path / "backfill.png"))


def test_a_provider_added_to_the_registry_refreshes_itself_beside_a_misspelt_one(hub, page, tmp_path):
    misspelt = "typo: {harvest: {type: oai, endpoint: 'https://example.org/oai', metadataprefix: mods}}\n"
    hub.registry.write_text(hub.registry.read_text() + hub.provider("river", "{cron: '* * * * *'}") + misspelt)
    (run,) = hub.wait_runs("refresh the new provider", 1, **{"ingest/trigger": "refresh"})
    assert run.dagster_run.status == dg.DagsterRunStatus.SUCCESS
    assert run.dagster_run.tags["dagster/partition"] == f"{YESTERDAY.isoformat()}|river"
    assert layout.latest_output(hub.storage, "river", "indexing", YESTERDAY)
    _open(page, f"{hub.base}/runs", lambda p: p.get_by_text("record_pipeline"))
    page.screenshot(path=str(tmp_path / "refreshed.png"))
    # the misspelt entry is red on the registry's check, naming entry, key and file
    _open(page, f"{hub.base}/assets/provider_registry?view=checks", lambda p: p.get_by_text("entries_load"))
    page.get_by_text("Failed").first.wait_for(timeout=90_000)
    page.get_by_text("entries_load").first.click()
    page.get_by_text(re.compile(r"registry key 'typo\.harvest\.metadataprefix': unknown key")).first.wait_for(timeout=60_000)
    assert str(hub.registry) in page.content()
    page.screenshot(path=str(tmp_path / "registry-check.png"), full_page=True)


def test_the_operators_tables_follow_the_runs_by_themselves(hub, page, tmp_path):
    """record_counts is materialized by the automation sensor after indexing, hub_status by its sensor after any
    run: both show as tables, over the days with data and per provider."""
    def rows(asset: str, table: str, key):
        event = hub.latest_materialization(asset)
        records = event.asset_materialization.metadata[table].records if event else []
        return {key(r.data): r.data for r in records}

    deadline = time.monotonic() + 240
    while ("river", YESTERDAY.isoformat()) not in (found := rows("record_counts", "counts", lambda d: (d["provider"], d["day"]))) \
            and time.monotonic() < deadline:
        time.sleep(3)
    river = found.get(("river", YESTERDAY.isoformat()))
    assert river, f"no record_counts row for the refreshed provider within 240 s: {sorted(found)}"
    in_window = [r for r in sample_records(day=YESTERDAY) if r.datestamp.date() == YESTERDAY]
    assert river["harvested"] == len(in_window) and river["harvest_deleted"] == sum(r.deleted for r in in_window)
    assert ("demo", DAY.isoformat()) in found  # the day materialized from the UI
    _open(page, f"{hub.base}/assets/record_counts", lambda p: p.get_by_text("harvest_deleted"))
    page.get_by_text("mapping_failed").first.wait_for(timeout=30_000)
    page.screenshot(path=str(tmp_path / "counts.png"), full_page=True)

    deadline = time.monotonic() + 240  # the newest hub_status may be one its sensor made while river's run still ran
    while not (status := rows("hub_status", "providers", lambda d: d["provider"])).get("river", {}).get("last_good_day") \
            and time.monotonic() < deadline:
        time.sleep(3)
    assert status.get("river", {}).get("last_good_day") == YESTERDAY.isoformat(), status
    assert status["demo"]["days_with_data"] >= 4 and status["typo"]["last_failure"].startswith("REFUSED: ")
    _open(page, f"{hub.base}/assets/hub_status", lambda p: p.get_by_text("last_good_day"))
    page.get_by_text("days_with_data").first.wait_for(timeout=30_000)
    page.screenshot(path=str(tmp_path / "hub-status.png"), full_page=True)


def test_the_status_page_reads_in_a_browser_without_dagster(hub, page, tmp_path):
    """The page hub_status wrote after the runs, served beside the ResourceSync documents: each provider's days
    plotted, the misspelt entry named in red."""
    deadline = time.monotonic() + 240
    while not hub.storage.exists(layout.status_page_key()) and time.monotonic() < deadline:
        time.sleep(3)
    server = WsgiServer().start(ResourceSyncApp(hub.storage, []))
    try:
        page.goto(f"{server.url}/status.html")
        page.get_by_role("heading", name="Hub status").wait_for(timeout=30_000)
        demo = page.locator('svg[data-provider="demo"]')
        assert demo.bounding_box()["width"] > 300  # drawn, not collapsed
        points = demo.locator('g[data-series="harvested"] circle')
        assert points.count() >= 4 and all(points.nth(n).is_visible() for n in range(points.count()))
        alert = page.get_by_role("alert")
        assert "entry 'typo' refused" in alert.inner_text() and "metadataprefix" in alert.inner_text()
        assert alert.evaluate("e => getComputedStyle(e).color") == "rgb(138, 28, 23)"  # red
        page.screenshot(path=str(tmp_path / "status-page.png"), full_page=True)
    finally:
        server.shutdown()
