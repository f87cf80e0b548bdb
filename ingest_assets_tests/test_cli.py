"""The one entry point, ``ingest-assets``, as a process: what every command shares."""

from __future__ import annotations

from ingest_assets.cli.main import COMMANDS, READER_GONE
from ingest_assets_tests.support import run_with_reader_gone


def test_a_command_whose_reader_went_away_ends_quietly(shared_fixtures):
    page = shared_fixtures / "oai-pmh" / "zenodo-listrecords-oai_dc.xml"
    done = run_with_reader_gone("map", "--profile", "oai_dc", str(page))
    assert done.stderr == "" and done.returncode == READER_GONE


def test_each_command_is_served_by_the_module_bearing_its_name():
    """``ingest-assets NAME`` runs ``cli/NAME.py``'s ``main``, ``serve-NAME`` its ``serve`` (test_cli_mistakes.py runs
    each one)."""
    for name, (module, function, _) in COMMANDS.items():
        assert (module, function) == (name.removeprefix("serve-"), "serve" if name.startswith("serve-") else "main")
