"""``ingest-assets``: the one entry point. Each command group is a module of this package with its own parser,
imported only when its command runs (so ``ingest-assets --help`` and every command start fast)."""

from __future__ import annotations

import argparse
import sys
from importlib import import_module

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
    "index": ("index", "main", "the search alias, its indices and those kept for rollback; roll back"),
    "review": ("review", "main", "list, approve or reject days held for review before publishing"),
    "report": ("report", "main", "a provider day's report: counts, problems, coverage, what changed"),
    "takedown": ("takedown", "main", "keep records out of the index and the change feed until undone"),
    "status": ("status", "main", "per provider: last harvest, counts, failures, review, live index, history"),
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in COMMANDS:
        module, function, _ = COMMANDS[argv[0]]
        return getattr(import_module(f"ingest_assets.cli.{module}"), function)(argv[1:]) or 0
    parser = argparse.ArgumentParser(prog="ingest-assets", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (_, _, help_text) in COMMANDS.items():  # listed in --help; a known command is handed on above
        commands.add_parser(name, help=f"{help_text} (see: ingest-assets {name} --help)")
    parser.parse_args(argv)
    return 2

