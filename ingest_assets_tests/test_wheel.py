"""The built wheel works outside the checkout: the specification's Avro schemas (the top-level ``schemas/`` folder)
and every package-data file pyproject names (profiles, vocabularies, enrichment data, templates, the demo's wiki
export, the instance settings) ship in it, and installed in a fresh environment it maps and enriches the demo
site's records with the shipped profile and data, and names its own script in the commands it prints. The demo
itself, and the UI, run once in the suite, from a fresh clone (test_walkthrough.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import requests

from ingest_assets.cli.demo import DEMO_DAY
from ingest_assets.demo.oai_server import serve_in_thread
from ingest_assets.demo.samples import sample_records

PROJECT = Path(__file__).resolve().parents[1]


@pytest.mark.timeout(600)  # the build and the install: a minute on a loaded machine
def test_wheel_ships_its_package_data_and_runs_outside_the_checkout(tmp_path):
    uv = shutil.which("uv")
    assert uv, "uv is how the project is installed (README); it must be on PATH"
    run = lambda *args, **kw: subprocess.run(args, check=True, capture_output=True, text=True, **kw)  # noqa: E731
    run(uv, "build", "--out-dir", str(tmp_path / "dist"), cwd=PROJECT)  # the wheel is built from the sdist
    [wheel] = (tmp_path / "dist").glob("ingest_assets-*.whl")
    with zipfile.ZipFile(wheel) as archive:  # the four Avro schemas of the top-level schemas/ folder, as they are
        names = set(archive.namelist())
        shipped = {Path(name).name: archive.read(name) for name in names if name.endswith(".avsc")}
    assert shipped == {path.name: path.read_bytes() for path in (PROJECT / "schemas").glob("*.avsc")}
    assert sorted(shipped) == [f"dpla.avro.v1.{name}.avsc" for name in
                               ("MAP3_1.IndexRecord", "MAP4_0.IndexRecord", "MAP4_x.MAPRecord", "OriginalRecord")]
    package_data = tomllib.loads((PROJECT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    expected = {path.relative_to(PROJECT).as_posix() for package, patterns in package_data.items() for pattern in patterns
                for path in (PROJECT / package.replace(".", "/")).glob(pattern) if path.is_file()}
    assert len(expected) > 90 and not expected - names, sorted(expected - names)  # 99 files today
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
    site, url = serve_in_thread(sample_records(day=DEMO_DAY))  # the demo site's OAI-PMH page, as a file
    try:
        page = requests.get(url, params={"verb": "ListRecords", "metadataPrefix": "oai_dc"}, timeout=30)
    finally:
        site.shutdown()
    (home / "page.xml").write_bytes(page.content)
    mapped = subprocess.run([script, "map", "--profile", "oai_dc", "--enrich", "--format", "json", "page.xml"], cwd=home,
                            env=env, capture_output=True, text=True, timeout=300)
    assert mapped.returncode == 1, mapped.stderr[-3000:]  # 1: a record failed to map (the site's one without rights)
    preview = json.loads(mapped.stdout)
    assert (preview["summary"]["mapped"], preview["summary"]["failed"]) == (23, 1)  # the shipped oai_dc profile
    enriched = {r["local_id"]: r["enriched"] for r in preview["records"]}["oai:demo.example.org:00001"]
    # the shipped enrichment data: rights vocabulary, date ranges, languages, contributor URIs
    assert enriched["rights"] == "http://rightsstatements.org/vocab/InC-EDU/1.0/"
    assert enriched["sourceResource"]["date"][0]["begin"] == "1923"
    assert enriched["sourceResource"]["language"] == [{"iso639_3": "eng", "name": "English"}]
    assert enriched["dataProvider"]["@id"] == "http://dp.la/api/contributor/riverside-historical-society"

    refused = subprocess.run([script, "ui", "--demo"], cwd=home, env=env, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert refused.stderr.endswith(f"hint: run `{script} demo` first\n"), refused.stderr
    assert sorted(p.name for p in home.iterdir()) == ["page.xml"]  # nothing lands in the current folder
