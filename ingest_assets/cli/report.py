"""``ingest-assets report PROVIDER [--date D] [--json | --html]``: a provider day's report, as written when the
day was indexed: counts per stage, problems grouped by message with example ids, field coverage, and what
changed since the previous published day (records added, removed, changed; per MAP field, with examples)."""

from __future__ import annotations

import argparse
import json

from ingest_assets.cli.hub import Hub, open_hub
from ingest_assets.cli.main import Parser, command_line, iso_day
from ingest_assets.core.errors import NotFoundError
from ingest_assets.operations.failures import last_failure

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
    failure = last_failure(hub.storage, args.provider)
    if failure and args.date and args.date not in failure.days:
        failure = None
    if not outputs:
        raise _not_indexed(hub, args, failure)
    newest = max(outputs, key=lambda o: (o.day, o.started))
    source = RecordSource(hub.storage, newest)
    report = read_report(source)
    if report is None:
        raise NotFoundError(f"no report for {args.provider} on {newest.day.isoformat()}: {source.uri} was indexed "
                            "before reports were written", hint="harvest the day again to write one")
    if failure and newest.day in failure.days and failure.when > newest.started:
        report = {**report, "stopped": _stopped(failure)}  # the run that wrote this report did not publish it
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    elif args.html:
        print(hub.storage.uri(f"{source.key}/{newest.log(REPORT_HTML)}"))
    else:
        print(render.markdown(report), end="")
    return 0


def _stopped(failure) -> dict:
    return {"stage": failure.stage, "message": failure.message, "days": failure.days_text, "run": failure.run_url,
            "when": failure.when.isoformat(timespec="seconds")}


def _not_indexed(hub: Hub, args: argparse.Namespace, failure) -> NotFoundError:
    """Why there is no report: the last run of the day stopped before indexing (a failed check or step, in its own
    words), or nothing of it ran yet."""
    when = f"on {args.date.isoformat()}" if args.date else "yet"
    again = f"{command_line(hub.settings)} harvest {args.provider}"
    if failure:
        days = (f" --date {failure.days[0]}" if len(failure.days) == 1 else
                f" --from {failure.days[0]} --to {failure.days[-1]}" if failure.days else "")
        return NotFoundError(f"no report for {args.provider} {when}: the run of {failure.days_text or 'it'} stopped "
                             f"at {failure.stage} before indexing: {failure.message} (run {failure.run_url})",
                             hint=f"do what it says, then harvest again (`{again}{days}`)")
    return NotFoundError(f"no report for {args.provider} {when}: nothing was indexed",
                         hint=f"harvest it first (`{again}{f' --date {args.date}' if args.date else ''}`)")
