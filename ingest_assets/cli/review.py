"""``ingest-assets review list|approve|reject``: days held back for review before they are published.

    ingest-assets review list [PROVIDER] [--json]            days held for review, or approved and not yet live
    ingest-assets review approve PROVIDER [--date D]         approve (without --date: every day held) and publish
    ingest-assets review reject PROVIDER [--date D] --reason TEXT

An approval publishes at once on the hub's Dagster instance (``DAGSTER_HOME``, by default ``$INGEST_HOME/dagster``;
the runs show in the UI), oldest day first; with ``--no-publish`` the review sensor publishes within a minute. A rejected day
stays in storage marked rejected; what was published before keeps serving.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from datetime import date, datetime, timezone

from ingest_assets.cli.main import Parser, iso_day
from ingest_assets.core.errors import NotFoundError
from ingest_assets.cli.hub import Hub, open_hub, who

PROG = "ingest-assets review"


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list", help="days held for review or not yet published")
    listing.add_argument("provider", nargs="?")
    listing.add_argument("--json", action="store_true", help="print the days as JSON")
    for name in ("approve", "reject"):
        decide = commands.add_parser(name, help=f"{name} a provider's held day(s)")
        decide.add_argument("provider")
        decide.add_argument("--date", type=iso_day, help="the day (default: every day held for review)")
        decide.add_argument("--reason", required=name == "reject", help="why (kept with the decision)")
        if name == "approve":
            decide.add_argument("--no-publish", action="store_true", help="leave publishing to the review sensor")
    args = parser.parse_args(argv)
    with open_hub() as hub:
        return _list(hub, args) if args.command == "list" else _decide(hub, args)


def _list(hub: Hub, args: argparse.Namespace) -> int:
    from ingest_assets.records.publishing.review import Ledger

    if args.provider:
        hub.record_provider(args.provider)
    waiting = Ledger(hub.engine).waiting(args.provider)
    if args.json:
        print(json.dumps([asdict(state) for state in waiting], default=str, indent=2))
    elif not waiting:
        print("nothing held for review" + (f" for {args.provider}" if args.provider else ""))
    for state in waiting if not args.json else ():
        print(state.describe())
    return 0


def _decide(hub: Hub, args: argparse.Namespace) -> int:
    from ingest_assets.records.publishing.review import PENDING, Ledger

    hub.record_provider(args.provider)
    ledger, now = Ledger(hub.engine), datetime.now(timezone.utc)
    approve = args.command == "approve"
    publish_now = approve and not args.no_publish
    if args.date:
        days = [args.date]
    else:
        days = [s.day for s in ledger.waiting(args.provider) if s.state == PENDING]
        if not days:
            raise NotFoundError(f"nothing to review for {args.provider}: no day is held",
                                hint="see `ingest-assets review list`")
    decided = [ledger.decide(args.provider, day, approve, who(), now, args.reason, claim=publish_now) for day in days]
    for state in decided:
        print(state.describe())
    if not publish_now:
        if approve:
            print("the review sensor publishes the approved day(s) within a minute")
        return 0
    return _publish(hub, args.provider, days)


def _publish(hub: Hub, provider: str, days: list[date]) -> int:
    """Run ``record_publish`` for each day, oldest first, on the configured instance (as the sensor would)."""
    from ingest_assets.cli.instance import open_instance
    from ingest_assets.definitions import build_definitions
    from ingest_assets.defs.providers import record_providers
    from ingest_assets.defs.records.partitions import partition_key

    job = build_definitions(hub.settings).resolve_job_def("record_publish")
    failed = 0
    with open_instance(hub.settings) as instance:
        if provider not in instance.get_dynamic_partitions(record_providers.name):
            instance.add_dynamic_partitions(record_providers.name, [provider])
        for day in sorted(days):
            result = job.execute_in_process(instance=instance, partition_key=str(partition_key(provider, day)),
                                            raise_on_error=False, tags={"ingest/trigger": "review"})
            published = {str(m.partition) for m in result.asset_materializations_for_node("search_index")}
            failed += not result.success
            state = "published" if result.success and published else "NOT published" if not result.success else "held"
            print(f"{provider} {day.isoformat()}: {state} (run {result.run_id})")
    return 1 if failed else 0
