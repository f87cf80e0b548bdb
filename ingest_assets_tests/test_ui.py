"""The Dagster UI serves our code location: headless Chromium sees the record assets and the job."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from ingest_assets_tests.conftest import free_port, require

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


@pytest.fixture
def webserver(tmp_path):
    port = free_port()
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path), "INGEST_HOME": str(tmp_path / "ingest"), "DAGSTER_TELEMETRY_DISABLED": "1"}
    webserver_bin = Path(sys.executable).parent / "dagster-webserver"
    process = subprocess.Popen(
        [str(webserver_bin), "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(port)],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if process.poll() is not None:
                pytest.fail(f"dagster-webserver exited: {process.stderr.read().decode()[-2000:]}")
            try:
                if requests.get(f"{base}/server_info", timeout=2).ok:
                    break
            except requests.ConnectionError:
                time.sleep(0.5)
        else:
            pytest.fail("dagster-webserver did not start within 120 s")
        yield base
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


def test_asset_graph_in_headless_chromium(webserver, tmp_path):
    chromium = shutil.which("chromium")
    require(chromium is not None, "Debian chromium not installed (.ci/run installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        page.goto(f"{webserver}/assets", wait_until="domcontentloaded")
        _dismiss_first_visit_dialog(page)
        for name in ("original_records", "mapped_records", "enriched_records", "indexed_records"):
            page.get_by_text(name, exact=True).first.wait_for(timeout=60_000)
        page.goto(f"{webserver}/locations/ingest_assets/jobs/record_pipeline", wait_until="domcontentloaded")
        _dismiss_first_visit_dialog(page)
        page.get_by_text("record_pipeline").first.wait_for(timeout=60_000)
        page.screenshot(path=str(tmp_path / "record_pipeline.png"))
        browser.close()


def _dismiss_first_visit_dialog(page) -> None:
    """Dagster greets a first visit with a dialog; close it if it shows."""
    for label in ("Skip", "Dismiss", "Close", "Got it"):
        button = page.get_by_role("button", name=label)
        try:
            button.first.click(timeout=1500)
            return
        except Exception:  # noqa: BLE001 - the dialog did not show
            continue
