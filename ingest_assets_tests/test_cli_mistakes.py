"""Every command fails in one line: each command of ``ingest-assets`` (the COMMANDS table, so a new command is
covered) driven with the mistakes people make, asserting the exit status, a single stderr line that names the
problem and gives a hint, and no traceback. ``MISTAKES`` must list each command's own ordinary mistakes."""

from __future__ import annotations

import socket
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from ingest_assets.cli.main import COMMANDS, main
from ingest_assets.core.settings import Settings

TODAY = datetime.now(timezone.utc).date().isoformat()
REGISTRY = """\
demo: {harvest: {type: oai, endpoint: 'http://127.0.0.1:9/oai', allow_private: true}, mapping: oai_dc}
lod: {void: 'https://example.org/void.ttl'}
broken: {harvest: {type: oai, endpoint: 'https://example.org/oai', metadataprefix: mods}}
"""
BUSY = "{busy}"  # replaced by a port something listens on
UNPARSEABLE = {"INGEST_REGISTRY": "{unparseable}"}

# command -> [(arguments, environment, exit status, what the line must say)]
MISTAKES = {
    "demo": [
        (["--port", BUSY], {}, 2, "is in use; hint: pass --port 0"),
        (["--date", "15.01.2026"], {}, 2, "'15.01.2026' is not a day (YYYY-MM-DD)"),
        (["--port", "99999"], {}, 2, "argument --port: 99999 is not a port (0 to 65535; 0: any free port)"),
    ],
    "serve-demo": [
        (["--port", BUSY], {}, 2, "is in use; hint: pass --port 0"),
        (["--port", "-1"], {}, 2, "-1 is not a port"),
    ],
    "ui": [
        (["--demo"], {}, 2, "no demo registry at"),
        (["--port", BUSY], {}, 2, "is in use"),
        (["--port", "65536"], {}, 2, "65536 is not a port"),
        ([], UNPARSEABLE, 2, "registry is not valid YAML"),
    ],
    "harvest": [
        (["nobody", "--date", "2026-01-15"], {}, 2, "provider 'nobody' is not in the registry"),
        (["demo", "--date", "2026-13-01"], {}, 2, "'2026-13-01' is not a day"),
        (["demo", "--date", "2025-06-01"], {}, 2, "before the first partition 2026-01-01; hint: INGEST_PARTITION_START"),
        (["demo", "--date", TODAY], {}, 2, "has not ended yet"),
        (["demo", "--from", "2026-02-10", "--to", "2026-02-01"], {}, 2, "is before --from"),
        (["lod", "--date", "2026-01-15"], {}, 2, "provider 'lod' has no 'harvest:' block"),
        (["broken", "--date", "2026-01-15"], {}, 2, "registry key 'broken.harvest.metadataprefix': unknown key"),
        (["demo", "--date", "2026-01-15"], UNPARSEABLE, 2, "registry is not valid YAML"),
        (["demo"], {"INGEST_PARTITION_START": "January"}, 2, "INGEST_PARTITION_START must be YYYY-MM-DD"),
    ],
    "map": [
        (["--profile", "oai_dcc", "page.xml"], {}, 2, "unknown mapping 'oai_dcc'; hint: known profiles: bhl, cdl, "),
        (["--profile", "oai_dc", "missing.xml"], {}, 2, "cannot read the input: No such file"),
        (["page.xml"], {}, 2, "--profile is needed: 'preview' is no record provider of the registry"),
    ],
    "snapshot": [
        (["demo", "--as-of", "yesterday"], {}, 2, "'yesterday' is not a day"),
        (["demo", "--as-of", "2026-01-15"], {}, 1, "no harvest of demo at or before 2026-01-15"),
    ],
    "search": [
        (["millbrook"], {}, 1, "no search index behind alias 'dpla-map4'"),
        (["millbrook", "--size", "ten"], {}, 2, "invalid int value: 'ten'"),
        (["millbrook", "--size", "10001"], {}, 2, "--size must be 1 to 10000"),
    ],
    "serve-resourcesync": [
        (["--port", BUSY], {}, 2, "is in use"),
        (["--port", "http"], {}, 2, "'http' is not a port number"),
        ([], UNPARSEABLE, 2, "registry is not valid YAML"),
        ([], {"INGEST_REGISTRY": "{missing}"}, 2, "registry file not found"),
    ],
    "repository": [
        (["--export", "missing.xml", "--base-url", "http://wiki.example.org/wiki/"], {}, 2, "missing.xml: no such file"),
        (["--export", "page.xml"], {}, 2, "--base-url is needed"),
    ],
    "datasets": [
        (["process", "missing.jsonl"], {}, 2, "missing.jsonl: No such file or directory; hint: check the path"),
        (["enqueue", "requests.jsonl"], {}, 2, "invalid choice: 'enqueue'"),
    ],
    "lineage": [
        (["demo", "oai:demo.example.org:00001"], {}, 1, "no output holds this record"),
        (["Demo", "x"], {}, 2, "not a provider name"),
    ],
    "index": [
        (["rollback"], {}, 1, "no promotion of alias 'dpla-map4' is recorded; hint: name the index to bring back"),
        (["rollback", "--to", "dpla-map4-demo-20990101000000"], {}, 1, "is kept; hint: see `ingest-assets index status`"),
        (["rollback", "--provider", "demo"], {}, 1, "nothing of the provider is live in 'dpla-map4'"),
        (["remove", "nobody", "--reason", "x"], {}, 2, "provider 'nobody' is not in the registry"),
    ],
    "review": [
        (["approve", "demo"], {}, 1, "nothing to review for demo: no day is held; hint: see `ingest-assets review list`"),
        (["approve", "nobody"], {}, 2, "provider 'nobody' is not in the registry"),
        (["reject", "demo", "--date", "2026-01-15", "--reason", "x"], {}, 1,
         "nothing to review on 2026-01-15: no indexed output was registered for it"),
        (["reject", "demo"], {}, 2, "the following arguments are required: --reason"),
    ],
    "report": [
        (["demo"], {}, 1, "no report for demo yet: nothing was indexed; hint: harvest it first (`"),
        (["lod"], {}, 2, "provider 'lod' has no 'harvest:' block"),
        (["demo", "--date", "15.01.2026"], {}, 2, "'15.01.2026' is not a day"),
    ],
    "takedown": [
        (["0123456789abcdef0123456789abcdef", "--reason", "x", "--yes"], {}, 1, "not in the live index 'dpla-map4'"),
        (["--undo", "0123456789abcdef0123456789abcdef"], {}, 1, "no takedown of this record is in force"),
        (["abc"], {}, 2, "--reason is required"),
        (["--query", "mills", "--reason", "x"], {}, 2, "--query needs --provider"),
    ],
    "status": [
        (["nobody"], {}, 2, "provider 'nobody' is not in the registry"),
        (["--days", "0"], {}, 2, "--days must be between 1 and 366"),
    ],
    "hubs": [
        (["init", "nobody"], {}, 2, "no shipped hub 'nobody'; hint: shipped hubs: artstor, bhl, "),
        (["init", "georgia", "--to", "{unparseable}"], {}, 2, "registry is not valid YAML"),
        (["start", "georgia"], {}, 2, "invalid choice: 'start'"),
    ],
}
CASES = [(command, *mistake) for command, mistakes in MISTAKES.items() for mistake in mistakes]
GENERIC = [(command, ["--no-such-option"], {}, 2, "") for command in COMMANDS]  # every command, new ones too


@pytest.fixture
def cli(tmp_path, monkeypatch, capfd):
    """Run ``ingest-assets ARGS`` in this process (the real entry point, fast) in a fresh folder with the registry
    above; returns ``(exit status, stderr lines)``."""
    registry = tmp_path / "registry.yaml"
    registry.write_text(REGISTRY)
    (tmp_path / "unparseable.yaml").write_text("demo: {harvest: [unclosed\n")
    (tmp_path / "page.xml").write_text("<records/>")
    monkeypatch.chdir(tmp_path)
    for name in ("DAGSTER_HOME", "INGEST_STORAGE", "INGEST_SEARCH", "INGEST_PARTITION_START"):
        monkeypatch.delenv(name, raising=False)
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    values = {"busy": str(busy.getsockname()[1]), "unparseable": str(tmp_path / "unparseable.yaml"),
              "missing": str(tmp_path / "absent.yaml")}

    def run(command: str, args: list[str], env: dict[str, str]) -> tuple[int, list[str]]:
        monkeypatch.setenv("INGEST_HOME", str(tmp_path / "home"))
        monkeypatch.setenv("INGEST_REGISTRY", str(registry))
        for name, value in env.items():
            monkeypatch.setenv(name, value.format(**values))
        Settings.current.cache_clear()
        capfd.readouterr()
        status = main([command, *(a.format(**values) for a in args)])
        return status, capfd.readouterr().err.splitlines()

    yield run
    busy.close()
    Settings.current.cache_clear()


def test_every_command_lists_its_ordinary_mistakes():
    missing = sorted(set(COMMANDS) - set(MISTAKES))
    assert not missing, f"add the ordinary mistakes of {missing} to MISTAKES (one line each, a hint, no traceback)"


@pytest.mark.parametrize("command, args, env, status, says", CASES + GENERIC,
                         ids=[f"{c[0]} {' '.join(c[1])}{' ' + ','.join(c[2]) if c[2] else ''}" for c in CASES + GENERIC])
def test_a_mistake_is_one_line_with_a_hint(cli, command, args, env, status, says):
    code, lines = cli(command, args, env)
    assert len(lines) == 1, lines
    [line] = lines
    assert code == status, line
    assert line.startswith(f"ingest-assets {command}: ") and "; hint: " in line and says in line, line
    assert "Traceback" not in line


def test_the_installed_script_prints_the_same_line(tmp_path):
    """The console script itself (not only ``main``): one line, the status, no traceback, also with --verbose's
    traceback withheld unless asked."""
    script = str(Path(sys.executable).parent / "ingest-assets")
    env = {"PATH": "/usr/bin:/bin", "INGEST_HOME": str(tmp_path), "INGEST_REGISTRY": str(tmp_path / "absent.yaml")}
    refused = subprocess.run([script, "harvest", "demo", "--date", "2026-01-15"], env=env, capture_output=True,
                             text=True, timeout=120)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert "registry file not found" in refused.stderr and "hint: set INGEST_REGISTRY" in refused.stderr
    verbose = subprocess.run([script, "harvest", "demo", "--date", "2026-01-15", "--verbose"], env=env,
                             capture_output=True, text=True, timeout=120)
    assert verbose.returncode == 2 and "Traceback" in verbose.stderr
    assert verbose.stderr.rstrip().splitlines()[-1] == refused.stderr.rstrip()


def test_status_without_its_registry_file_is_a_mistake_not_the_last_good_copy(cli):
    """A registry that loaded once is kept (the hub runs on it when the file breaks); a command whose
    INGEST_REGISTRY names no file at all is run in the wrong place or environment: one line, status 2."""
    assert cli("status", [], {}) == (0, [])  # keeps the registry's last good copy in the storage
    code, [line] = cli("status", [], {"INGEST_REGISTRY": "{missing}"})
    assert code == 2 and line.startswith("ingest-assets status: registry file not found (file '/"), line
    assert line.endswith("absent.yaml'); hint: set INGEST_REGISTRY to the registry file"), line


def test_a_hint_names_the_command_as_it_runs_here(cli, monkeypatch):
    """Under ``uv run`` the hint says ``uv run ingest-assets ...`` (as the demo's own next commands do)."""
    monkeypatch.setenv("UV_RUN_RECURSION_DEPTH", "1")
    code, [line] = cli("report", ["demo"], {})
    assert code == 1 and line.endswith("hint: harvest it first (`uv run ingest-assets harvest demo`)"), line
