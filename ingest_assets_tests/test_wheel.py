"""The built wheel works outside the checkout: the specification's Avro schemas (the top-level ``schemas/``
folder), demo data and instance settings ship as package data, the demo runs all five capabilities end to end on
an instance under INGEST_HOME, and the next steps it prints work there as printed."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from ingest_assets_tests.support import free_port, wait_for_ui

PROJECT = Path(__file__).resolve().parents[1]


@pytest.mark.timeout(1200)  # build, install, the demo, then the UI: minutes on a loaded machine
def test_wheel_installed_outside_the_checkout_runs_the_demo(tmp_path):
    uv = shutil.which("uv")
    assert uv, "uv is how the project is installed (README); it must be on PATH"
    run = lambda *args, **kw: subprocess.run(args, check=True, capture_output=True, text=True, **kw)  # noqa: E731
    run(uv, "build", "--out-dir", str(tmp_path / "dist"), cwd=PROJECT)  # the wheel is built from the sdist
    [wheel] = (tmp_path / "dist").glob("ingest_assets-*.whl")
    with zipfile.ZipFile(wheel) as archive:  # the four Avro schemas of the top-level schemas/ folder, as they are
        shipped = {Path(name).name: archive.read(name) for name in archive.namelist() if name.endswith(".avsc")}
        hubs = archive.read("ingest_assets/records/mapping/hubs.yaml")  # the shipped hubs, as they are
    assert shipped == {path.name: path.read_bytes() for path in (PROJECT / "schemas").glob("*.avsc")}
    assert sorted(shipped) == [f"dpla.avro.v1.{name}.avsc" for name in
                               ("MAP3_1.IndexRecord", "MAP4_0.IndexRecord", "MAP4_x.MAPRecord", "OriginalRecord")]
    assert hubs == (PROJECT / "ingest_assets" / "records" / "mapping" / "hubs.yaml").read_bytes()
    pins = tmp_path / "requirements.txt"  # the lock's versions, so the install comes from the warm cache
    run(uv, "export", "--frozen", "--no-dev", "--no-emit-project", "--no-hashes", "-o", str(pins), cwd=PROJECT)
    venv = tmp_path / "venv"
    run(uv, "venv", "--python", sys.executable, str(venv))
    python = venv / "bin" / "python"
    run(uv, "pip", "install", "--python", str(python), "-r", str(pins), str(wheel))

    home = tmp_path / "user"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INGEST_", "DAGSTER_", "VIRTUAL_ENV", "UV_"))}
    script = str(venv / "bin" / "ingest-assets")  # not on PATH: the printed commands must name it in full
    demo = subprocess.run([script, "demo", "--port", "0"], cwd=home, env=env,  # port 0: 8765 may be taken here
                          capture_output=True, text=True, timeout=480)
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    # all five capabilities, each against the demo's own local site and files, then the overview
    sections = [line for line in demo.stdout.splitlines() if line[:2] in ("1.", "2.", "3.", "4.", "5.", "6.")]
    assert len(sections) == 6 and all(": success (run " in line for line in sections), demo.stdout[-3000:]
    ingest = home / ".ingest"
    provider = ingest / "storage" / "demo"
    written = {p.relative_to(provider).parts[0] for p in provider.rglob("part-*.avro")}
    assert {"harvest", "mapping", "enrichment", "indexing"} <= written, written
    assert "29 triples" in demo.stdout and list((ingest / "storage" / "_linked_data").rglob("*.nq.gz"))
    assert "2 units, 5 objects" in demo.stdout and list((ingest / "ocfl").rglob("inventory.json"))
    assert "status/success 1, platform/dataverse 1" in demo.stdout
    published = ingest / "storage" / "_resourcesync"
    assert (published / ".well-known" / "resourcesync").exists() and (published / "demo" / "capabilitylist.xml").exists()
    assert (ingest / "storage" / "_status" / "index.html").exists()
    # Dagster's instance lives under INGEST_HOME, with the shipped settings; nothing lands in the current folder
    assert [p.name for p in home.iterdir()] == [".ingest"]
    assert (ingest / "dagster" / "dagster.yaml").read_text().startswith("# The Dagster instance of `ingest-assets ui`")

    # the next steps it printed work here, as printed
    steps = dict(line.split(":", 1) for line in demo.stdout.splitlines() if line.startswith(("search it:", "open the UI:")))
    search = steps["search it"].split()
    assert search[0] == script, steps
    found = subprocess.run(search, cwd=home, env=env, capture_output=True, text=True, timeout=120)
    assert found.returncode == 0 and "Millbrook" in found.stdout, found.stderr[-2000:]
    ui = steps["open the UI"].split("   (")[0].split()
    assert ui == [script, "ui", "--demo"], steps
    port = free_port()
    process = subprocess.Popen([*ui, "--port", str(port)], cwd=home, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        wait_for_ui(f"http://127.0.0.1:{port}", process)
    finally:
        os.killpg(process.pid, signal.SIGINT)  # Ctrl-C stops the UI and the demo site
        output = process.communicate(timeout=90)[0]
    assert process.returncode == 0 and "Traceback" not in output, output[-3000:]
    assert [p.name for p in home.iterdir()] == [".ingest"]

    with socket.socket() as busy:  # a port that is taken: one line, no traceback
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        refused = subprocess.run([script, "demo", "--port", str(busy.getsockname()[1])],
                                 cwd=home, env=env, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "is in use" in refused.stderr and refused.stderr.count("\n") == 1
