"""``ingest-assets report PROVIDER [--date D] [--json | --html]``: a provider day's report, as written when the
day was indexed: counts per stage, problems grouped by message with example ids, field coverage, and what
changed since the previous published day (records added, removed, changed; per MAP field, with examples)."""

from __future__ import annotations

import argparse
import json

from ingest_assets.cli.main import Parser, iso_day
from ingest_assets.core.errors import NotFoundError
from ingest_assets.cli.hub import Hub, open_hub

PROG = "ingest-assets report"


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog=PROG, description=__doc__)
    parser.add_argument("provider")
    parser.add_argument("--date", type=iso_day, help="the day (default: the newest day indexed)")
    shape = parser.add_mutually_exclusive_group()
    shape.add_argument("--json", action="store_true", help="print the report's JSON")
    shape.add_argument("--html", action="store_true", help="print where its HTML file is")
    args = parser.parse_args(argv)
    with open_hub() as hub:
        return _report(hub, args)


def _report(hub: Hub, args: argparse.Namespace) -> int:
    from ingest_assets.records.publishing import render
    from ingest_assets.records.publishing.report import REPORT_HTML, read_report
    from ingest_assets.storage import layout
    from ingest_assets.storage.activities import RecordSource

    hub.record_provider(args.provider)
    outputs = layout.complete_outputs(hub.storage, args.provider, "indexing", args.date)
    if not outputs:
        when = f"on {args.date.isoformat()}" if args.date else "yet"
        raise NotFoundError(f"no report for {args.provider} {when}: nothing was indexed",
                            hint=f"harvest it first (`ingest-assets harvest {args.provider}`)")
    newest = max(outputs, key=lambda o: (o.day, o.started))
    source = RecordSource(hub.storage, newest)
    report = read_report(source)
    if report is None:
        raise NotFoundError(f"no report for {args.provider} on {newest.day.isoformat()}: {source.uri} was indexed "
                            "before reports were written", hint="harvest the day again to write one")
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    elif args.html:
        print(hub.storage.uri(f"{source.key}/{newest.log(REPORT_HTML)}"))
    else:
        print(render.markdown(report), end="")
    return 0
