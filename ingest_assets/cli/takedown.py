"""``ingest-assets takedown``: keep records out of the search index and the change feed until undone.

    ingest-assets takedown ID... --reason TEXT [--provider P] [--yes]     DPLA ids, or local ids (of P)
    ingest-assets takedown --provider P --query Q --reason TEXT [--yes]   the live records of P matching Q
    ingest-assets takedown --undo ID                                      lift it; the record's newest version returns
    ingest-assets takedown --list [--all]                                 takedowns in force (--all: undone ones too)

Without ``--yes`` it shows how many records and a sample, and changes nothing (exit 2). With it, the records
leave every index of their provider at once, are published as deleted, and stay out of every later publish;
who, when and why are recorded, and the live index's count before and after is checked and printed.
"""

from __future__ import annotations

import argparse
from datetime import datetime, timezone

from ingest_assets.cli.main import Parser
from ingest_assets.core.errors import IngestError, NotFoundError, UsageError
from ingest_assets.cli.hub import Hub, open_hub, who

PROG = "ingest-assets takedown"
SAMPLE = 10


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("ids", nargs="*", metavar="ID", help="DPLA ids, or local ids of --provider")
    parser.add_argument("--reason", help="why (required to take down; kept with the takedown)")
    parser.add_argument("--provider", help="the provider of local ids, or whose records --query searches")
    parser.add_argument("--query", help="take down the provider's live records matching this search")
    parser.add_argument("--yes", action="store_true", help="do it (without: show what would be taken down)")
    other = parser.add_mutually_exclusive_group()
    other.add_argument("--undo", metavar="ID", help="lift the takedown of a DPLA id")
    other.add_argument("--list", action="store_true", help="takedowns in force")
    parser.add_argument("--all", action="store_true", help="with --list: undone takedowns too")
    args = parser.parse_args(argv)
    if args.list or args.undo:
        if args.ids or args.query:
            parser.error("--list and --undo take no ids or --query")
        with open_hub() as hub:
            return _list(hub, args) if args.list else _undo(hub, args)
    if bool(args.ids) == bool(args.query):
        parser.error("give record ids, or --provider and --query")
    if args.query and not args.provider:
        parser.error("--query needs --provider")
    if not args.reason:
        parser.error("--reason is required")
    with open_hub() as hub:
        return _take_down(hub, args)


def _take_down(hub: Hub, args: argparse.Namespace) -> int:
    from ingest_assets.records.mapping import minter_for
    from ingest_assets.records.publishing import takedowns

    providers = [hub.record_provider(args.provider)] if args.provider else hub.registry.providers_of("records")
    if args.query:
        targets = takedowns.matching(hub.index, hub.alias, args.provider, args.query)
        if not targets:
            raise NotFoundError(f"no live record of {args.provider} matches {args.query!r}", hint="try other words")
    else:
        targets = takedowns.resolve(hub.index, hub.alias, args.ids,
                                    {name: minter_for(hub.registry[name]) for name in providers})
    print(f"{len(targets)} record(s) to take down:")
    for target in targets[:SAMPLE]:
        print(f"  {target.record_id}  {target.provider}  {target.local_id or ''}  {target.title}")
    if len(targets) > SAMPLE:
        print(f"  ... and {len(targets) - SAMPLE} more")
    if not args.yes:
        raise UsageError("nothing taken down without --yes", hint="add --yes to take these records down")
    store = takedowns.Takedowns(hub.engine)
    outcome = takedowns.take_down(hub.index, hub.alias, store, targets, args.reason, who(),
                                  datetime.now(timezone.utc), hub.feed_of)
    return _report(hub, outcome, f"taken down: {outcome.changed} removed from the live index")


def _undo(hub: Hub, args: argparse.Namespace) -> int:
    from ingest_assets.records.publishing import takedowns
    from ingest_assets.records.publishing.review import Ledger

    store = takedowns.Takedowns(hub.engine)
    ledger = Ledger(hub.engine)

    def newest(provider: str, record_id: str):
        return takedowns.newest_published(hub.storage, provider, record_id, ledger.excluded_days(provider))

    outcome = takedowns.undo(hub.index, hub.alias, store, args.undo, who(), datetime.now(timezone.utc), newest,
                             hub.feed_of)
    return _report(hub, outcome, f"takedown lifted: {outcome.changed} put back into the live index")


def _report(hub: Hub, outcome, what: str) -> int:
    print(what)
    feed = ", ".join(f"{change} {count}" for change, count in outcome.feed.items() if count)
    print(f"{hub.alias}: {outcome.count_before} -> {outcome.count_after} documents" + (f"; change feed: {feed}" if feed else ""))
    if not outcome.consistent:
        raise IngestError(f"the live index count moved by {outcome.count_before - outcome.count_after}, not by "
                          f"{outcome.changed}: another publish ran meanwhile", hint="check `ingest-assets index status`")
    return 0


def _list(hub: Hub, args: argparse.Namespace) -> int:
    from ingest_assets.records.publishing.takedowns import Takedowns

    store = Takedowns(hub.engine)
    shown = store.history() if args.all else list(store.active().values())
    if not shown:
        print("no takedown in force" if not args.all else "no takedown recorded")
    for item in shown:
        undone = f"  undone {item.undone_at.isoformat(timespec='seconds')} by {item.undone_by}" if item.undone_at else ""
        print(f"{item.record_id}  {item.provider}  {item.at.isoformat(timespec='seconds')} by {item.by}: "
              f"{item.reason}{undone}")
    return 0
