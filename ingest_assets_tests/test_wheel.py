"""The built wheel works outside the checkout: schemas ship as package data and the demo runs end to end."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
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
    assert "success" in demo.stdout
    provider = home / ".ingest" / "storage" / "demo"
    written = {p.relative_to(provider).parts[0] for p in provider.rglob("part-*.avro")}
    assert {"harvest", "mapping", "enrichment", "indexing"} <= written, written
