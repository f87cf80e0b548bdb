"""``ingest-assets lineage <provider> <id>``: where a record came from, step by step (``--json`` for programs)."""

from __future__ import annotations

import argparse
import sys
from datetime import date

from ingest_assets.errors import IngestError
from ingest_assets.lineage.records import record_lineage
from ingest_assets.settings import Settings
from ingest_assets.storage import open_storage


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ingest-assets lineage", description=__doc__)
    parser.add_argument("provider")
    parser.add_argument("id", help="a record's local id or DPLA id")
    parser.add_argument("--date", type=date.fromisoformat, help="only the outputs of this partition day")
    parser.add_argument("--json", action="store_true", help="print the lineage as JSON")
    args = parser.parse_args(argv)
    storage = open_storage(Settings.current().storage_url)
    try:
        lineage = record_lineage(storage, args.provider, args.id, args.date)
    except IngestError as exc:
        print(f"ingest-assets lineage: {exc}", file=sys.stderr)
        return 1
    print(lineage.to_json() if args.json else lineage.to_text())
    return 0
