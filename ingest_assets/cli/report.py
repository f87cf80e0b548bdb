"""``ingest-assets report PROVIDER [--date D] [--json | --html]``: a provider day's report, as written when the
day was indexed: counts per stage, problems grouped by message with example ids, field coverage, and what
changed since the previous published day (records added, removed, changed; per MAP field, with examples)."""

from __future__ import annotations

import argparse
import json
from datetime import date

from ingest_assets.cli.hub import CommandError, Hub, run

PROG = "ingest-assets report"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__)
    parser.add_argument("provider")
    parser.add_argument("--date", type=date.fromisoformat, help="the day (default: the newest day indexed)")
    shape = parser.add_mutually_exclusive_group()
    shape.add_argument("--json", action="store_true", help="print the report's JSON")
    shape.add_argument("--html", action="store_true", help="print where its HTML file is")
    args = parser.parse_args(argv)
    return run(PROG, lambda hub: _report(hub, args))


def _report(hub: Hub, args: argparse.Namespace) -> int:
    from ingest_assets.records.publishing import render
    from ingest_assets.records.publishing.report import REPORT_HTML, read_report
    from ingest_assets.storage import layout
    from ingest_assets.storage.activities import RecordSource

    hub.record_provider(args.provider)
    outputs = layout.complete_outputs(hub.storage, args.provider, "indexing", args.date)
    if not outputs:
        when = f"on {args.date.isoformat()}" if args.date else "yet"
        raise CommandError(f"no report for {args.provider} {when}: nothing was indexed")
    newest = max(outputs, key=lambda o: (o.day, o.started))
    source = RecordSource(hub.storage, newest)
    report = read_report(source)
    if report is None:
        raise CommandError(f"no report for {args.provider} on {newest.day.isoformat()}: {source.uri} was indexed "
                           "before reports were written")
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    elif args.html:
        print(hub.storage.uri(f"{source.key}/{newest.log(REPORT_HTML)}"))
    else:
        print(render.markdown(report), end="")
    return 0
