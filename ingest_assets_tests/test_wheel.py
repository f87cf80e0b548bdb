"""The built wheel works outside the checkout: the specification's Avro schemas (the top-level ``schemas/``
folder) and demo data ship as package data and the demo runs all five capabilities end to end."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]


@pytest.mark.timeout(600)
def test_wheel_installed_outside_the_checkout_runs_the_demo(tmp_path):
    uv = shutil.which("uv")
    assert uv, "uv is how the project is installed (README); it must be on PATH"
    run = lambda *args, **kw: subprocess.run(args, check=True, capture_output=True, text=True, **kw)  # noqa: E731
    run(uv, "build", "--out-dir", str(tmp_path / "dist"), cwd=PROJECT)  # the wheel is built from the sdist
    [wheel] = (tmp_path / "dist").glob("ingest_assets-*.whl")
    with zipfile.ZipFile(wheel) as archive:  # the four Avro schemas of the top-level schemas/ folder, as they are
        shipped = {Path(name).name: archive.read(name) for name in archive.namelist() if name.endswith(".avsc")}
    assert shipped == {path.name: path.read_bytes() for path in (PROJECT / "schemas").glob("*.avsc")}
    assert sorted(shipped) == [f"dpla.avro.v1.{name}.avsc" for name in
                               ("MAP3_1.IndexRecord", "MAP4_0.IndexRecord", "MAP4_x.MAPRecord", "OriginalRecord")]
    pins = tmp_path / "requirements.txt"  # the lock's versions, so the install comes from the warm cache
    run(uv, "export", "--frozen", "--no-dev", "--no-emit-project", "--no-hashes", "-o", str(pins), cwd=PROJECT)
    venv = tmp_path / "venv"
    run(uv, "venv", "--python", sys.executable, str(venv))
    python = venv / "bin" / "python"
    run(uv, "pip", "install", "--python", str(python), "-r", str(pins), str(wheel))

    home = tmp_path / "user"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INGEST_", "DAGSTER_", "VIRTUAL_ENV"))}
    demo = subprocess.run([str(venv / "bin" / "ingest-assets"), "demo"], cwd=home, env=env,
                          capture_output=True, text=True, timeout=480)
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    # all five capabilities, each against the demo's own local site and files
    sections = [line for line in demo.stdout.splitlines() if line[:2] in ("1.", "2.", "3.", "4.", "5.")]
    assert len(sections) == 5 and all(": success (run " in line for line in sections), demo.stdout[-3000:]
    ingest = home / ".ingest"
    provider = ingest / "storage" / "demo"
    written = {p.relative_to(provider).parts[0] for p in provider.rglob("part-*.avro")}
    assert {"harvest", "mapping", "enrichment", "indexing"} <= written, written
    assert "29 triples" in demo.stdout and list((ingest / "storage" / "_linked_data").rglob("*.nq.gz"))
    assert "2 units, 5 objects" in demo.stdout and list((ingest / "ocfl").rglob("inventory.json"))
    assert "status/success 1, platform/dataverse 1" in demo.stdout
    published = ingest / "storage" / "_resourcesync"
    assert (published / ".well-known" / "resourcesync").exists() and (published / "demo" / "capabilitylist.xml").exists()

    with socket.socket() as busy:  # a port that is taken: one line, no traceback
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        refused = subprocess.run([str(venv / "bin" / "ingest-assets"), "demo", "--port", str(busy.getsockname()[1])],
                                 cwd=home, env=env, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "is in use" in refused.stderr and "Traceback" not in refused.stderr
