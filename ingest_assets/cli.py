"""Command line: ``ingest-assets demo`` runs the record pipeline end to end on embedded defaults."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from dataclasses import replace
from datetime import date
from importlib.resources import files
from pathlib import Path

DEMO_PORT = 8765
# Capability commands with their own argument parsers: ``ingest-assets <name> ...`` hands the rest on.
DELEGATED = {
    "harvest": ("ingest_assets.harvest_command", "run the record pipeline for a provider's day(s) on the instance"),
    "search": ("ingest_assets.records.indexing.__main__", "query the search index"),
    "serve-resourcesync": ("ingest_assets.resourcesync.server", "serve the ResourceSync documents over HTTP"),
    "repository": ("ingest_assets.repository.__main__", "repository ingest commands"),
    "datasets": ("ingest_assets.datasets.cli", "submit or process dataset ingest requests"),
}


def _demo(args: argparse.Namespace) -> int:
    import dagster as dg

    from ingest_assets.demo.oai_server import serve_in_thread
    from ingest_assets.demo.samples import sample_records
    from ingest_assets.settings import Settings
    from ingest_assets.storage import layout, open_storage
    from ingest_assets.storage.manifest import Manifest

    logging.getLogger("alembic").setLevel(logging.WARNING)
    dagster_home = os.environ.setdefault("DAGSTER_HOME", str(Path.cwd()))  # the Dagster instance (`dagster dev`)
    settings = Settings.current()
    if not settings.registry_path.exists():  # an installed package, not a checkout: the packaged demo registry
        settings = replace(settings, registry_path=Path(str(files("ingest_assets.demo") / "registry.yaml")))
    server, url = serve_in_thread(sample_records(day=args.date), port=args.port)
    print(f"demo OAI-PMH endpoint: {url}  registry: {settings.registry_path}")
    from ingest_assets.definitions import build_definitions
    from ingest_assets.defs.providers import record_providers
    from ingest_assets.registry import load_registry

    defs = build_definitions(settings)
    instance = dg.DagsterInstance.get()
    providers = load_registry(settings.registry_path).providers_of("records")
    existing = set(instance.get_dynamic_partitions(record_providers.name))
    instance.add_dynamic_partitions(record_providers.name, [p for p in providers if p not in existing])
    partition = dg.MultiPartitionKey({"date": args.date.isoformat(), "provider": args.provider})
    result = defs.resolve_job_def("record_pipeline").execute_in_process(
        partition_key=str(partition),
        instance=instance,
        raise_on_error=False,
        run_config={"loggers": {"console": {"config": {"log_level": "INFO"}}}},
    )
    server.shutdown()
    storage = open_storage(settings.storage_url)
    print(f"\nrun {result.run_id}: {'success' if result.success else 'FAILED'}")
    for activity in layout.ACTIVITIES:
        output = layout.latest_output(storage, args.provider, activity, args.date)
        if output:
            count = Manifest.from_bytes(storage.read_bytes(output.manifest)).record_count
            print(f"  {activity:<10} {count:>5} records  {storage.uri(output.folder)}")
    print("\nsearch it:    uv run python -m ingest_assets.records.indexing Millbrook")
    print(f"\nstorage: {storage.url}\nopen the UI:  DAGSTER_HOME={dagster_home} uv run dagster dev")
    return 0 if result.success else 1


def _serve_demo(args: argparse.Namespace) -> int:
    from ingest_assets.demo.oai_server import serve_in_thread
    from ingest_assets.demo.samples import sample_records

    server, url = serve_in_thread(sample_records(day=args.date), port=args.port)
    print(f"serving demo OAI-PMH records at {url} (Ctrl-C to stop)")
    try:
        server._BaseServer__is_shut_down.wait()  # noqa: SLF001 - block until interrupted
    except KeyboardInterrupt:
        server.shutdown()
    return 0


def _snapshot(args: argparse.Namespace) -> int:
    from datetime import datetime, timezone

    from ingest_assets.settings import Settings
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
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in DELEGATED:
        from importlib import import_module

        return import_module(DELEGATED[argv[0]][0]).main(argv[1:]) or 0
    parser = argparse.ArgumentParser(prog="ingest-assets", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser("demo", help="harvest, map, enrich and index the demo provider for one day")
    demo.add_argument("--date", type=date.fromisoformat, default=date(2026, 1, 15))
    demo.add_argument("--provider", default="demo")
    demo.add_argument("--port", type=int, default=DEMO_PORT)
    demo.set_defaults(handler=_demo)

    serve = commands.add_parser("serve-demo", help="serve the demo OAI-PMH endpoint (for runs from the UI)")
    serve.add_argument("--date", type=date.fromisoformat, default=date(2026, 1, 15))
    serve.add_argument("--port", type=int, default=DEMO_PORT)
    serve.set_defaults(handler=_serve_demo)

    snap = commands.add_parser("snapshot", help="rebuild a provider's records as of a date (newest versions, deletions applied)")
    snap.add_argument("provider")
    snap.add_argument("--as-of", type=date.fromisoformat, required=True)
    snap.set_defaults(handler=_snapshot)

    for name, (_, help_text) in DELEGATED.items():  # listed in --help; main() hands them on before parsing
        commands.add_parser(name, help=f"{help_text} (see: ingest-assets {name} --help)")

    args = parser.parse_args(argv)
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())
