"""A newcomer's first hour, as a test (issue 36): a fresh clone of this checkout's HEAD (no ``../shared`` beside
it), README command 1 as the README gives it, the demo it runs, the next commands the demo prints, a provider of
one's own added to ``registry.yaml`` with a stock profile against the demo site, a failing check and its fix, then
the UI started as the demo says and stopped with SIGTERM, leaving no process behind.

The interpreter is the one running the tests (a pyenv Python here), as ``python3`` on a PATH with no uv on it
(Debian's own interpreter is test_install.py's); this machine's uv cache spares the downloads. The demo runs
once in the suite, here (test_wheel.py checks the wheel's package data without it)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
import requests

from ingest_assets.core.registry import load_registry
from ingest_assets.records.audit.count_drop import failure_rate
from ingest_assets.storage import LocalStorage
from ingest_assets.storage.activities import latest_source
from ingest_assets_tests.support import free_port, stop_group, wait_for
from ingest_assets_tests.support.ui import running_ui

PROJECT = Path(__file__).resolve().parents[1]
DAY = "2026-01-15"  # the demo site's records' day


def readme_command_1() -> str:
    """The first ``sh`` block of the README's "Two commands": one line."""
    section = (PROJECT / "README.md").read_text().split("\n## Two commands\n", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1).strip()
    assert "\n" not in block, block
    return block


def newcomer(tmp_path: Path) -> dict[str, str]:
    """A login with its own HOME, ``python3`` first on PATH and no uv there, none of this run's settings."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    (bin_dir / "python3").symlink_to(base)
    (tmp_path / "home").mkdir()
    uv = shutil.which("uv")
    assert uv, "uv is how the project is installed; the tests run under it"
    cache = subprocess.run([uv, "cache", "dir"], check=True, capture_output=True, text=True).stdout.strip()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INGEST_", "DAGSTER_", "UV_", "VIRTUAL_ENV", "XDG_"))}
    env.update(HOME=str(tmp_path / "home"), PATH=f"{bin_dir}:/usr/bin:/bin", UV_CACHE_DIR=cache)
    assert shutil.which("uv", path=env["PATH"]) is None
    return env


def run(command: list[str], cwd: Path, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.timeout(1800)  # install, the demo, a harvest, the UI: minutes on a loaded machine
def test_a_newcomers_first_hour(tmp_path):
    clone = tmp_path / "clone"
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=PROJECT, check=True, capture_output=True, text=True).stdout.strip()
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(PROJECT), str(clone)], check=True)
    subprocess.run(["git", "checkout", "--quiet", head], cwd=clone, check=True)
    assert not (clone.parent / "shared").exists()  # the third-party fixtures are not there: a newcomer has none
    env = newcomer(tmp_path)
    uv = Path(env["HOME"]) / ".local" / "bin" / "uv"

    # README command 1, as written (the demo on any free port: 8765 may be taken by the other worker)
    command = readme_command_1()
    assert command == "python3 install.py && ~/.local/bin/uv run ingest-assets demo", command
    first = run(["bash", "-c", f"{command} --port 0"], clone, env, timeout=1200)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    assert "uv 0.13.8 installed at" in first.stdout and "ready in" in first.stdout
    # all five capabilities, each against the demo's own local site and files, then the overview
    sections = [line for line in first.stdout.splitlines() if line[:2] in ("1.", "2.", "3.", "4.", "5.", "6.")]
    assert len(sections) == 6 and all(": success (run " in line for line in sections), first.stdout[-3000:]
    ingest = clone / ".ingest"
    provider = ingest / "storage" / "demo"
    written = {p.relative_to(provider).parts[0] for p in provider.rglob("part-*.avro")}
    assert {"harvest", "mapping", "enrichment", "indexing"} <= written, written
    assert "29 triples" in first.stdout and list((ingest / "storage" / "_linked_data").rglob("*.nq.gz"))
    assert "2 units, 5 objects" in first.stdout and list((ingest / "ocfl").rglob("inventory.json"))
    assert "status/success 1, platform/dataverse 1" in first.stdout
    published = ingest / "storage" / "_resourcesync"
    assert (published / ".well-known" / "resourcesync").exists() and (published / "demo" / "capabilitylist.xml").exists()
    assert (ingest / "storage" / "_status" / "index.html").exists()
    assert (ingest / "dagster" / "dagster.yaml").read_text().startswith("# The Dagster instance of `ingest-assets ui`")

    # the next commands it printed, as printed: uv is not on PATH, so they name it in full
    steps = dict(line.split(":", 1) for line in first.stdout.splitlines() if line.startswith(("search it:", "open the UI:")))
    search = steps["search it"].split()
    assert search[:3] == [str(uv), "run", "ingest-assets"], steps
    found = run(search, clone, env, timeout=120)
    assert found.returncode == 0 and "Millbrook" in found.stdout, found.stderr[-2000:]

    # a provider of one's own: the demo site served, an entry in registry.yaml with the stock oai_dc profile and a
    # strict quality limit that the site's one unmappable record in 19 breaks
    site_port = free_port()
    with open(tmp_path / "site.log", "wb") as log:
        site = subprocess.Popen([str(uv), "run", "ingest-assets", "serve-demo", "--port", str(site_port)], cwd=clone,
                                env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        oai = f"http://127.0.0.1:{site_port}/oai"
        wait_for("the demo site", lambda: _answers(f"{oai}?verb=Identify"), timeout=120)
        registry = clone / "registry.yaml"
        registry.write_text(registry.read_text() + (
            "\nriver:\n"
            f"  harvest: {{type: oai, endpoint: '{oai}', metadata_prefix: oai_dc, allow_private: true}}\n"
            "  mapping: oai_dc\n"
            "  quality: {max_failure_rate: 0.02}   # at most 2% of the records may fail to map\n"))
        harvest = [str(uv), "run", "ingest-assets", "harvest", "river", "--date", DAY]
        failed = run(harvest, clone, env)
        assert failed.returncode == 1, failed.stdout[-3000:] + failed.stderr[-3000:]
        assert f"river {DAY}: harvested 20, mapped 18 (1 failed)" in failed.stdout
        assert f"river {DAY}: FAILED at mapped_records_mapping_failure_rate" in failed.stdout, failed.stdout
        # the fix: the limit raised above the day's rate, which the registry now gives the check (a rerun that then
        # passes would repeat what every pipeline test runs: the gate passing at a limit above the failure rate)
        registry.write_text(registry.read_text().replace("max_failure_rate: 0.02", "max_failure_rate: 0.10"))
        mapped = latest_source(LocalStorage(ingest / "storage"), "river", "mapping", date.fromisoformat(DAY))
        rate, attempted, unmapped = failure_rate(mapped.manifest())  # what the check judged: 1 of the 19 mappable
        assert (attempted, unmapped) == (20, 1)
        assert 0.02 < rate <= load_registry(registry)["river"].settings.quality.max_failure_rate
    finally:
        stop_group(site)

    # the UI as the demo printed it, answering, then SIGTERM to its process group: nothing is left running
    ui_command = steps["open the UI"].split("   (")[0].split()
    assert ui_command == [str(uv), "run", "ingest-assets", "ui", "--demo"], steps
    port = free_port()
    with running_ui([*ui_command, "--port", str(port)], port, cwd=clone, env=env, log=tmp_path / "ui.log") as ui:
        assert requests.get(f"{ui.base}/server_info", timeout=30).json()["dagster_webserver_version"]
        demo_site = re.search(r"demo site: (\S+)", ui.output()).group(1)  # served beside it, on the demo's port
        assert _answers(f"{demo_site}/oai?verb=Identify")
        leftovers = ui.stop(signal.SIGTERM)
    assert not leftovers, leftovers
    assert ui.process.returncode == 0 and "Traceback" not in ui.output(), ui.output()[-3000:]


def _answers(url: str) -> bool:
    try:
        return requests.get(url, timeout=5).ok
    except requests.ConnectionError:
        return False
