"""``ingest-assets snapshot <provider> --as-of D``: a provider's records as of a date (newest versions, deletions
applied), written as a new harvest output."""

from __future__ import annotations

import argparse
import sys
from datetime import date


def _snapshot(args: argparse.Namespace) -> int:
    from datetime import datetime, timezone

    from ingest_assets.core.settings import Settings
    from ingest_assets.storage import open_storage
    from ingest_assets.storage.activities import RecordStream, write_activity
    from ingest_assets.storage.avro import ORIGINAL_RECORD
    from ingest_assets.storage.snapshot import snapshot_records, snapshot_sources

    storage = open_storage(Settings.current().storage_url)
    sources = snapshot_sources(storage, args.provider, args.as_of)
    if not sources:
        print(f"no harvest of {args.provider} at or before {args.as_of}", file=sys.stderr)
        return 1
    started = datetime.now(timezone.utc)
    stream = RecordStream(snapshot_records(sources), inputs=sources, started=started, summary=lambda: {"mode": "snapshot"})
    result = write_activity(storage, stream, provider=args.provider, activity="harvest", day=args.as_of,
                            started=started, schema=ORIGINAL_RECORD, partition=f"snapshot as of {args.as_of}")
    print(f"{result.records} records as of {args.as_of} from {len(sources)} harvests -> {result.uri}")
    print(f"re-map it: run mapped_records with config {{source: {result.output.folder}}}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ingest-assets snapshot", description=__doc__)
    parser.add_argument("provider")
    parser.add_argument("--as-of", type=date.fromisoformat, required=True)
    return _snapshot(parser.parse_args(argv))
