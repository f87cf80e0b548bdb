"""The publishing commands on a hub with nothing published yet (their mistakes are in ``test_cli_mistakes.py``)."""

from __future__ import annotations

import pytest

from ingest_assets.cli.main import main
from ingest_assets.core.settings import Settings


@pytest.fixture
def settings(tmp_path, monkeypatch):
    registry = tmp_path / "registry.yaml"
    registry.write_text("demo:\n  harvest: {type: oai, endpoint: 'https://example.org/oai'}\n  mapping: oai_dc\n"
                        "lod: {void: 'https://example.org/void.ttl'}\n"
                        "broken: {harvest: {type: oai, endpoint: 'https://example.org/oai', metadataprefix: mods}}\n")
    settings = Settings.from_env({"INGEST_HOME": str(tmp_path / "home"), "INGEST_REGISTRY": str(registry)})
    monkeypatch.setattr(Settings, "current", staticmethod(lambda: settings))
    return settings


def test_an_empty_hub_has_a_status(settings, capsys):
    assert main(["index", "status"]) == 0
    assert capsys.readouterr().out == "alias dpla-map4: 0 index(es), 0 documents\n"
    assert main(["status"]) == 0
    out = capsys.readouterr().out
    registry, broken = out.split("\n\n")[:2]
    assert registry.startswith(f"registry {settings.registry_path}: 1 problem(s)\n  entry 'broken' refused (the others run): ")
    assert broken.startswith("broken (broken)\n  REFUSED        registry key 'broken.harvest.metadataprefix': unknown key")
    assert "demo (demo)\n  last harvest   never\n  live index     nothing published" in out
    assert "lod (lod)" not in out  # not a record provider
    assert main(["review", "list"]) == 0 and capsys.readouterr().out == "nothing held for review\n"
    assert main(["takedown", "--list"]) == 0 and capsys.readouterr().out == "no takedown in force\n"
