"""``ingest-assets index status|rollback``: what the search alias serves, the indices kept for rollback, and
flipping back in one atomic action.

    ingest-assets index status [--json]                      alias, its indices per provider, kept ones, last actions
    ingest-assets index rollback                             undo the latest promotion (every provider it moved)
    ingest-assets index rollback --provider P                P's previous index back
    ingest-assets index rollback --to INDEX                  that kept index back (for its provider)
    ingest-assets index remove P --reason TEXT               take P's index off the alias (kept: --to brings it back)
"""

from __future__ import annotations

import argparse
import json

from ingest_assets.cli.main import Parser
from ingest_assets.cli.hub import Hub, open_hub, who
from ingest_assets.records.indexing import DEFAULT_ALIAS

PROG = "ingest-assets index"


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--alias", default=DEFAULT_ALIAS, help=f"the alias readers query (default {DEFAULT_ALIAS})")
    commands = parser.add_subparsers(dest="command", required=True)
    status = commands.add_parser("status", help="the alias, its indices and those kept for rollback")
    status.add_argument("--json", action="store_true", help="print the status as JSON")
    rollback = commands.add_parser("rollback", help="point the alias back at a kept index, in one atomic action")
    target = rollback.add_mutually_exclusive_group()
    target.add_argument("--provider", help="the provider whose previous index comes back")
    target.add_argument("--to", metavar="INDEX", help="the kept index that comes back")
    rollback.add_argument("--reason", help="why (kept with the action)")
    remove = commands.add_parser("remove", help="take a provider's index off the alias, in one atomic action")
    remove.add_argument("provider")
    remove.add_argument("--reason", required=True, help="why (kept with the action)")
    args = parser.parse_args(argv)
    commands_run = {"status": _status, "rollback": _rollback, "remove": _remove}
    with open_hub(args.alias) as hub:
        return commands_run[args.command](hub, args)


def _status(hub: Hub, args: argparse.Namespace) -> int:
    from ingest_assets.records.publishing.journal import Journal
    from ingest_assets.records.publishing.status import index_status

    status = index_status(hub.index, Journal(hub.engine), hub.alias)
    if args.json:
        print(json.dumps(status.to_dict(), default=str, indent=2))
        return 0
    print(f"alias {status.alias}: {len(status.targets)} index(es), {status.count} documents")
    for provider, entries in status.providers.items():
        print(f"  {provider if provider != '*' else '(every provider)'}")
        for entry in entries:
            count = f"{entry.count:>9} documents" if entry.count is not None else "  unreadable (see its health)"
            print(f"    {entry.role:<11} {entry.name:<44} {count}")
    if status.actions:
        print("latest actions")
        for action in status.actions:
            print(f"  {action.at.isoformat(timespec='seconds')}  {action.action:<13} {action.provider or '*':<12} "
                  f"{action.from_index or '-'} -> {action.to_index or '-'}  by {action.by}"
                  + (f" ({action.reason})" if action.reason else ""))
    return 0


def _remove(hub: Hub, args: argparse.Namespace) -> int:
    hub.record_provider(args.provider)
    before = hub.index.count(hub.alias) if hub.index.aliased(hub.alias) else 0
    name = hub.publisher().remove(args.provider, by=who(), reason=args.reason)
    after = hub.index.count(hub.alias) if hub.index.aliased(hub.alias) else 0
    print(f"removed {args.provider}: {name} is off {hub.alias} (kept; `ingest-assets index rollback --to {name}` brings "
          f"it back)\n{hub.alias}: {before} -> {after} documents")
    return 0


def _rollback(hub: Hub, args: argparse.Namespace) -> int:
    if args.provider:
        hub.record_provider(args.provider)
    before = hub.index.count(hub.alias) if hub.index.aliased(hub.alias) else 0
    moves = hub.publisher().rollback(provider=args.provider, to=args.to, by=who(), reason=args.reason)
    after = hub.index.count(hub.alias) if hub.index.aliased(hub.alias) else 0
    for provider, source, target in moves:
        print(f"rolled back {provider or '(every provider)'}: {source or 'nothing'} -> {target or 'nothing'}")
    print(f"{hub.alias}: {before} -> {after} documents")
    return 0
