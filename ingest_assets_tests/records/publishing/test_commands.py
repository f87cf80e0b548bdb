"""The publishing commands on bad input: one line on stderr naming what is wrong, a non-zero exit, never a
traceback (in process, and once as a real process)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ingest_assets.cli.main import main
from ingest_assets.core.settings import Settings

CLI = str(Path(sys.executable).parent / "ingest-assets")


@pytest.fixture
def settings(tmp_path, monkeypatch):
    registry = tmp_path / "registry.yaml"
    registry.write_text("demo:\n  harvest: {type: oai, endpoint: 'https://example.org/oai'}\n  mapping: oai_dc\n"
                        "lod: {void: 'https://example.org/void.ttl'}\n")
    settings = Settings.from_env({"INGEST_HOME": str(tmp_path / "home"), "INGEST_REGISTRY": str(registry)})
    monkeypatch.setattr(Settings, "current", staticmethod(lambda: settings))
    return settings


@pytest.mark.parametrize("argv, message", [
    (["status", "nobody"], "ingest-assets status: provider 'nobody' is not in the registry"),
    (["status", "lod"], "ingest-assets status: provider 'lod' has no 'harvest:' block"),
    (["report", "demo"], "ingest-assets report: no report for demo yet: nothing was indexed"),
    (["report", "demo", "--date", "2026-01-15"], "ingest-assets report: no report for demo on 2026-01-15"),
    (["review", "approve", "demo"], "ingest-assets review: nothing to review for demo: no day is held"),
    (["review", "approve", "nobody"], "ingest-assets review: provider 'nobody' is not in the registry"),
    (["review", "reject", "demo", "--date", "2026-01-15", "--reason", "x"],
     "ingest-assets review: nothing to review on 2026-01-15: no indexed output was registered for it"),
    (["index", "rollback"], "ingest-assets index: no promotion of alias 'dpla-map4' is recorded"),
    (["index", "rollback", "--to", "dpla-map4-demo-20990101000000"], "ingest-assets index: no index "),
    (["index", "rollback", "--provider", "demo"], "ingest-assets index: nothing of the provider is live"),
    (["index", "remove", "demo", "--reason", "x"], "ingest-assets index: nothing of the provider is live"),
    (["index", "remove", "nobody", "--reason", "x"], "ingest-assets index: provider 'nobody' is not in the registry"),
    (["takedown", "0123456789abcdef0123456789abcdef", "--reason", "x", "--yes"],
     "ingest-assets takedown: not in the live index 'dpla-map4'"),
    (["takedown", "--undo", "0123456789abcdef0123456789abcdef"],
     "ingest-assets takedown: no takedown of this record is in force"),
])
def test_bad_input_is_one_line_and_a_non_zero_exit(settings, capsys, argv, message):
    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert err.startswith(message) and len(err.splitlines()) == 1, err
    assert "Traceback" not in out + err


@pytest.mark.parametrize("argv", [
    ["takedown", "--reason", "x"],  # nothing named
    ["takedown", "abc"],  # no reason
    ["takedown", "--query", "mills", "--reason", "x"],  # a query without a provider
    ["review", "reject", "demo"],  # no reason
    ["index", "rollback", "--provider", "demo", "--to", "x"],
])
def test_usage_mistakes_exit_2(settings, capsys, argv):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert "Traceback" not in capsys.readouterr().err


def test_an_empty_hub_has_a_status(settings, capsys):
    assert main(["index", "status"]) == 0
    assert capsys.readouterr().out == "alias dpla-map4: 0 index(es), 0 documents\n"
    assert main(["status"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("demo (demo)\n  last harvest   never\n  live index     nothing published")
    assert main(["review", "list"]) == 0 and capsys.readouterr().out == "nothing held for review\n"
    assert main(["takedown", "--list"]) == 0 and capsys.readouterr().out == "no takedown in force\n"


def test_a_real_process_prints_one_line(tmp_path):
    registry = tmp_path / "registry.yaml"
    registry.write_text("demo: {harvest: {type: oai, endpoint: 'https://example.org/oai'}, mapping: oai_dc}\n")
    env = {**os.environ, "INGEST_HOME": str(tmp_path / "home"), "INGEST_REGISTRY": str(registry)}
    done = subprocess.run([CLI, "review", "approve", "nobody"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"ingest-assets review: provider 'nobody' is not in the registry (provider 'nobody', file '{registry}')"]
