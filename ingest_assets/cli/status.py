"""``ingest-assets status [PROVIDER] [--days N] [--json]``: the registry's problems (a file that no longer
loads, refused entries), then per record provider the last harvest day and its counts, the last failure with its
stage and message, the review state, what the live index holds for it, takedowns in force, and its last N days
with data (default 7) with their publication state."""

from __future__ import annotations

import argparse
import json
from datetime import datetime, timezone

from ingest_assets.cli.main import Parser
from ingest_assets.cli.hub import Hub, open_hub

PROG = "ingest-assets status"


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog=PROG, description=__doc__)
    parser.add_argument("provider", nargs="?", help="one provider (default: every record provider)")
    parser.add_argument("--days", type=int, default=7, help="days of history (default 7)")
    parser.add_argument("--json", action="store_true", help="print the status as JSON")
    args = parser.parse_args(argv)
    if not 1 <= args.days <= 366:
        parser.error("--days must be between 1 and 366")
    with open_hub() as hub:
        return _status(hub, args)


def _status(hub: Hub, args: argparse.Namespace) -> int:
    from ingest_assets.records.publishing.status import provider_statuses

    if args.provider and args.provider not in hub.registry.problems:
        hub.record_provider(args.provider)
    status = provider_statuses(hub.storage, hub.index, hub.alias, hub.engine, hub.registry,
                               datetime.now(timezone.utc), args.days, only=args.provider)
    print(json.dumps(status.to_dict(), indent=2) if args.json else status.text(args.days))
    return 0
