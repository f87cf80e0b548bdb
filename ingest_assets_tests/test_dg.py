"""The project works with Dagster's ``dg`` CLI (pyproject's ``[tool.dg]``): its definitions check and list, and a
partition of an asset launches, as docs/operating.md shows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

import dagster as dg
import pytest

PROJECT = Path(__file__).resolve().parents[1]
DG = Path(sys.executable).with_name("dg")


@pytest.fixture
def project_env(tmp_path) -> dict[str, str]:
    """A registry with the demo wiki as a repository provider, and a Dagster instance that knows its partition."""
    registry = tmp_path / "registry.yaml"
    wiki = files("ingest_assets.demo") / "wiki-export.xml"
    registry.write_text(f"riverwiki: {{repository: {{wiki_export: '{wiki}', "
                        "base_url: 'http://wiki.riverside.demo.example/wiki/', default_language: en}}\n")
    home = tmp_path / "dagster"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry: {enabled: false}\n")
    with dg.DagsterInstance.from_config(str(home)) as instance:
        instance.add_dynamic_partitions("repository_providers", ["riverwiki"])
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("INGEST_", "DAGSTER_"))}
    return {**clean, "INGEST_HOME": str(tmp_path / "ingest"), "INGEST_REGISTRY": str(registry),
            "DAGSTER_HOME": str(home), "NO_COLOR": "1"}


def dg_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(DG), *args], cwd=PROJECT, env=env, capture_output=True, text=True, timeout=300)


def test_dg_checks_lists_and_launches_a_partition(project_env, tmp_path):
    checked = dg_cli(project_env, "check", "defs")
    assert checked.returncode == 0 and "All definitions loaded successfully" in checked.stdout + checked.stderr, checked.stderr

    listed = dg_cli(project_env, "list", "defs", "--json")
    assert listed.returncode == 0, listed.stderr
    found = json.loads(listed.stdout)
    assets = {a["asset_key"] for a in found["assets"]}
    assert {"original_records", "linked_data/provider_graph", "repository_collections", "resourcesync_documents",
            "dataset_ingest_results"} <= assets
    assert {"record_pipeline", "repository_ingest"} <= {j["name"] for j in found["jobs"]}

    # the top-level workspace.yaml (the one `ingest-assets ui` uses, linked into the package) loads the same location
    validated = subprocess.run([str(DG.with_name("dagster")), "definitions", "validate", "-w", "workspace.yaml"],
                               cwd=PROJECT, env=project_env, capture_output=True, text=True, timeout=300)
    assert validated.returncode == 0 and "ingest_assets" in validated.stdout + validated.stderr, validated.stderr[-3000:]
    assert (PROJECT / "ingest_assets" / "cli" / "workspace.yaml").resolve() == PROJECT / "workspace.yaml"

    launched = dg_cli(project_env, "launch", "--assets", "repository_collections", "--partition", "riverwiki")
    assert launched.returncode == 0, launched.stdout[-3000:] + launched.stderr[-3000:]
    objects = list((tmp_path / "ingest" / "ocfl").rglob("0=ocfl_object_*"))
    assert len(objects) == 5  # the demo wiki's two units: their collection and key objects, as `ingest-assets demo` reports
