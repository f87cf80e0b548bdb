"""``ingest-assets snapshot <provider> --as-of D``: a provider's records as of a date (newest versions, deletions
applied), written as a new harvest output."""

from __future__ import annotations

import argparse

from ingest_assets.cli.main import Parser, iso_day
from ingest_assets.core.errors import NotFoundError, UsageError
from ingest_assets.core.registry import NAME_RE


def _snapshot(args: argparse.Namespace) -> int:
    from datetime import datetime, timezone

    from ingest_assets.core.settings import Settings
    from ingest_assets.storage import layout, open_storage
    from ingest_assets.storage.activities import RecordStream, write_activity
    from ingest_assets.storage.avro import ORIGINAL_RECORD
    from ingest_assets.storage.snapshot import snapshot_records, snapshot_sources

    if not NAME_RE.fullmatch(args.provider):
        raise UsageError(f"{args.provider!r} is not a provider name ([a-z0-9]+)", hint="give a registry entry's name")
    storage = open_storage(Settings.current().storage_url)
    sources = snapshot_sources(storage, args.provider, args.as_of)
    if not sources:
        harvested = [p for p in storage.list_children("") if NAME_RE.fullmatch(p) and layout.output_days(storage, p, "harvest")]
        raise NotFoundError(f"no harvest of {args.provider} at or before {args.as_of} in {Settings.current().storage_url}",
                            hint=f"providers with harvests: {', '.join(harvested) or 'none'}")
    started = datetime.now(timezone.utc)
    stream = RecordStream(snapshot_records(sources), inputs=sources, started=started, summary=lambda: {"mode": "snapshot"})
    result = write_activity(storage, stream, provider=args.provider, activity="harvest", day=args.as_of,
                            started=started, schema=ORIGINAL_RECORD, partition=f"snapshot as of {args.as_of}")
    print(f"{result.records} records as of {args.as_of} from {len(sources)} harvests -> {result.uri}")
    print(f"re-map it: run mapped_records with config {{source: {result.output.folder}}}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="ingest-assets snapshot", description=__doc__)
    parser.add_argument("provider")
    parser.add_argument("--as-of", type=iso_day, required=True, help="the day (YYYY-MM-DD)")
    return _snapshot(parser.parse_args(argv))
