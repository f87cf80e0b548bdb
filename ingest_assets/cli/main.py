"""``ingest-assets``: the one entry point. Each command group is a module of this package with its own parser,
imported only when its command runs (so ``ingest-assets --help`` and every command start fast)."""

from __future__ import annotations

import argparse
import os
import sys
from importlib import import_module

READER_GONE = 128 + 13  # the status of a command ended by SIGPIPE, as `yes | head` leaves `yes`

# command -> (module, function, help)
COMMANDS = {
    "demo": ("demo", "main", "all five capabilities once, on embedded defaults, against a local demo site"),
    "serve-demo": ("demo", "serve", "serve the demo OAI-PMH endpoint (for runs from the UI)"),
    "harvest": ("harvest", "main", "run the record pipeline for a provider's day(s) on the instance"),
    "map": ("mapping", "main", "preview a mapping profile on files or a provider's newest harvest (writes nothing)"),
    "snapshot": ("snapshot", "main", "rebuild a provider's records as of a date (newest versions, deletions applied)"),
    "search": ("search", "main", "query the search index"),
    "serve-resourcesync": ("resourcesync", "main", "serve the ResourceSync documents over HTTP"),
    "repository": ("repository", "main", "repository ingest commands"),
    "datasets": ("datasets", "main", "submit or process dataset ingest requests"),
    "lineage": ("lineage", "main", "where a record, graph, object or dataset came from"),
}


def main(argv: list[str] | None = None) -> int:
    """Run one command. When the reader of its output goes away (``ingest-assets lineage ... | head``) the command
    ends quietly, whichever it is: no traceback, and nothing more is written to the closed pipe."""
    try:
        status = _run(sys.argv[1:] if argv is None else argv)
        sys.stdout.flush()  # inside the try: a pipe closed since the last write fails here, not at exit
        return status
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the interpreter's last flush goes nowhere
        return READER_GONE


def _run(argv: list[str]) -> int:
    if argv and argv[0] in COMMANDS:
        module, function, _ = COMMANDS[argv[0]]
        return getattr(import_module(f"ingest_assets.cli.{module}"), function)(argv[1:]) or 0
    parser = argparse.ArgumentParser(prog="ingest-assets", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (_, _, help_text) in COMMANDS.items():  # listed in --help; a known command is handed on above
        commands.add_parser(name, help=f"{help_text} (see: ingest-assets {name} --help)")
    parser.parse_args(argv)
    return 2

