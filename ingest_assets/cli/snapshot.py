"""``ingest-assets snapshot <provider> --as-of D [--activity harvest|mapping]``: a provider's records as of a date.

``harvest`` (the default): the newest version of each harvested record, deletions applied, written as a new
harvest output that can be re-mapped. ``mapping``: the storage specification's snapshot, the mapped records as
of the date enriched and indexed into new outputs whose provenance points to the historical mapped records."""

from __future__ import annotations

from datetime import date, datetime

from ingest_assets.cli.main import Parser, iso_day
from ingest_assets.core.errors import NotFoundError, UsageError
from ingest_assets.core.registry import NAME_RE

ACTIVITIES = ("harvest", "mapping")


def _missing(storage, settings, provider: str, as_of: date, activity: str) -> NotFoundError:
    from ingest_assets.storage import layout

    found = [p for p in storage.list_children("") if NAME_RE.fullmatch(p) and layout.output_days(storage, p, activity)]
    return NotFoundError(f"no {activity} of {provider} at or before {as_of} in {settings.storage_url}",
                         hint=f"providers with {activity} outputs: {', '.join(found) or 'none'}")


def _from_harvests(storage, settings, provider: str, as_of: date, started: datetime) -> int:
    from ingest_assets.storage.activities import RecordStream, write_activity
    from ingest_assets.storage.avro import ORIGINAL_RECORD
    from ingest_assets.storage.snapshot import snapshot_records, snapshot_sources

    sources = snapshot_sources(storage, provider, as_of)
    if not sources:
        raise _missing(storage, settings, provider, as_of, "harvest")
    stream = RecordStream(snapshot_records(sources), inputs=sources, started=started, summary=lambda: {"mode": "snapshot"})
    result = write_activity(storage, stream, provider=provider, activity="harvest", day=as_of,
                            started=started, schema=ORIGINAL_RECORD, partition=f"snapshot as of {as_of}")
    print(f"{result.records} records as of {as_of} from {len(sources)} harvests -> {result.uri}")
    print(f"re-map it: run mapped_records with config {{source: {result.output.folder}}}")
    return 0


def _from_mapping(storage, settings, provider: str, as_of: date, started: datetime) -> int:
    from ingest_assets.core.registry import ProviderEntry, load_registry
    from ingest_assets.records.snapshot import snapshot_from_mapping

    registry = load_registry(settings.registry_path) if settings.registry_path.is_file() else {}
    # enrichment and indexing need no key of the entry: a provider gone from the registry has a snapshot too
    entry = registry[provider] if provider in registry else ProviderEntry(provider)
    done = snapshot_from_mapping(storage, entry, as_of, started)
    if done is None:
        raise _missing(storage, settings, provider, as_of, "mapping")
    print(f"{done.enrichment.records} records as of {as_of} from {len(done.mapped)} mappings "
          f"(newest: {storage.uri(done.mapped[0].key)})")
    print(f"enrichment -> {done.enrichment.uri}")
    print(f"indexing -> {done.indexing.uri}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="ingest-assets snapshot", description=__doc__)
    parser.add_argument("provider")
    parser.add_argument("--as-of", type=iso_day, required=True, help="the day (YYYY-MM-DD)")
    parser.add_argument("--activity", choices=ACTIVITIES, default="harvest",
                        help="rebuild from the harvests (default), or enrich and index the mapped records")
    args = parser.parse_args(argv)
    if not NAME_RE.fullmatch(args.provider):
        raise UsageError(f"{args.provider!r} is not a provider name (lowercase letters and digits, '-' between them)",
                         hint="give a registry entry's name")

    from datetime import timezone

    from ingest_assets.core.settings import Settings
    from ingest_assets.storage import open_storage

    settings = Settings.current()
    storage = open_storage(settings.storage_url)
    started = datetime.now(timezone.utc)
    rebuild = _from_mapping if args.activity == "mapping" else _from_harvests
    return rebuild(storage, settings, args.provider, args.as_of, started)
