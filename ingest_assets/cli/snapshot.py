"""``ingest-assets snapshot <provider> --as-of D [--activity harvest|mapping]``: a provider's records as of a date.

``harvest`` (the default): the newest version of each harvested record, deletions applied, written as a new
harvest output that can be re-mapped. ``mapping``: the storage specification's snapshot, the mapped records as
of the date enriched and indexed into new outputs whose provenance points to the historical mapped records."""

from __future__ import annotations

import argparse
import sys
from datetime import date

ACTIVITIES = ("harvest", "mapping")


def _from_harvests(storage, provider: str, as_of: date, started) -> int:
    from ingest_assets.storage.activities import RecordStream, write_activity
    from ingest_assets.storage.avro import ORIGINAL_RECORD
    from ingest_assets.storage.snapshot import snapshot_records, snapshot_sources

    sources = snapshot_sources(storage, provider, as_of)
    if not sources:
        print(f"no harvest of {provider} at or before {as_of}", file=sys.stderr)
        return 1
    stream = RecordStream(snapshot_records(sources), inputs=sources, started=started, summary=lambda: {"mode": "snapshot"})
    result = write_activity(storage, stream, provider=provider, activity="harvest", day=as_of,
                            started=started, schema=ORIGINAL_RECORD, partition=f"snapshot as of {as_of}")
    print(f"{result.records} records as of {as_of} from {len(sources)} harvests -> {result.uri}")
    print(f"re-map it: run mapped_records with config {{source: {result.output.folder}}}")
    return 0


def _from_mapping(storage, settings, provider: str, as_of: date, started) -> int:
    from ingest_assets.core.registry import ProviderEntry, load_registry
    from ingest_assets.records.snapshot import snapshot_from_mapping

    registry = load_registry(settings.registry_path) if settings.registry_path.is_file() else {}
    # enrichment and indexing need no key of the entry: a provider gone from the registry has a snapshot too
    entry = registry[provider] if provider in registry else ProviderEntry(provider)
    done = snapshot_from_mapping(storage, entry, as_of, started)
    if done is None:
        print(f"no mapping of {provider} at or before {as_of}", file=sys.stderr)
        return 1
    print(f"{done.enrichment.records} records as of {as_of} from {len(done.mapped)} mappings "
          f"(newest: {storage.uri(done.mapped[0].key)})")
    print(f"enrichment -> {done.enrichment.uri}")
    print(f"indexing -> {done.indexing.uri}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ingest-assets snapshot", description=__doc__)
    parser.add_argument("provider")
    parser.add_argument("--as-of", type=date.fromisoformat, required=True)
    parser.add_argument("--activity", choices=ACTIVITIES, default="harvest",
                        help="rebuild from the harvests (default), or enrich and index the mapped records")
    args = parser.parse_args(argv)

    from datetime import datetime, timezone

    from ingest_assets.core.settings import Settings
    from ingest_assets.storage import open_storage

    settings = Settings.current()
    storage = open_storage(settings.storage_url)
    started = datetime.now(timezone.utc)
    if args.activity == "mapping":
        return _from_mapping(storage, settings, args.provider, args.as_of, started)
    return _from_harvests(storage, args.provider, args.as_of, started)
