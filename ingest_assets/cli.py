"""Command line: ``ingest-assets demo`` runs all five capabilities once on embedded defaults."""

from __future__ import annotations

import argparse
import json
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
    "lineage": ("ingest_assets.lineage.cli", "where a record, graph, object or dataset came from"),
}


def _demo(args: argparse.Namespace) -> int:
    """All five capabilities on embedded defaults against a local site of our own making (one free port)."""
    import dagster as dg

    from ingest_assets.demo.samples import sample_records
    from ingest_assets.demo.site import PortInUse, serve_site
    from ingest_assets.settings import Settings

    logging.getLogger("alembic").setLevel(logging.WARNING)
    dagster_home = os.environ.setdefault("DAGSTER_HOME", str(Path.cwd()))  # the Dagster instance (`dagster dev`)
    try:
        server, base = serve_site(sample_records(day=args.date), port=args.port)
    except PortInUse as exc:
        print(f"ingest-assets demo: {exc}", file=sys.stderr)
        return 2
    settings = Settings.current()
    settings = replace(settings, registry_path=_demo_registry(settings.home / "demo", base))
    print(f"demo site: {base}  (OAI-PMH /oai, VoID /lod/void.ttl, a Dataverse-like dataset)\nregistry: {settings.registry_path}")
    try:
        with dg.DagsterInstance.get() as instance:
            results = _demo_runs(settings, instance, args.date, base)
    finally:
        server.shutdown()
    print(f"\nsearch it:    uv run ingest-assets search Millbrook\nstorage: {settings.storage_url}"
          f"\nopen the UI:  DAGSTER_HOME={dagster_home} uv run dagster dev")
    return 0 if all(results) else 1


DEMO_REGISTRY = """# Written by `ingest-assets demo` for its local site at {base}: one provider per capability.
demo:
  label: Riverside Historical Society (demo)
  harvest: {{type: oai, endpoint: '{base}/oai', metadata_prefix: oai_dc, allow_private: true}}
  mapping: oai_dc
  resourcesync: {{}}
riverlod:
  label: Riverside places (demo linked data)
  void: '{base}/lod/void.ttl'
  allow_private: true
riverwiki:
  label: Riverside demo wiki
  repository: {{wiki_export: '{wiki}', base_url: 'http://wiki.riverside.demo.example/wiki/', default_language: en}}
"""


def _demo_registry(folder: Path, base: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "registry.yaml"
    path.write_text(DEMO_REGISTRY.format(base=base, wiki=files("ingest_assets.demo") / "wiki-export.xml"))
    return path


def _demo_runs(settings, instance, day: date, base: str) -> list[bool]:
    """Run each capability's assets once and print what each wrote; returns success per capability."""
    import dagster as dg

    from ingest_assets.datasets.cli import submit
    from ingest_assets.definitions import build_definitions
    from ingest_assets.defs.providers import linked_data_providers, record_providers, repository_providers
    from ingest_assets.demo.site import dataset_url
    from ingest_assets.storage import layout, open_storage
    from ingest_assets.storage.manifest import Manifest

    defs = build_definitions(settings)
    for partitions, name in ((record_providers, "demo"), (linked_data_providers, "riverlod"), (repository_providers, "riverwiki")):
        if name not in instance.get_dynamic_partitions(partitions.name):
            instance.add_dynamic_partitions(partitions.name, [name])
    assets = defs.resolve_implicit_global_asset_job_def()
    storage = open_storage(settings.storage_url)

    quiet = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}

    def run(title: str, selection: list[str], run_config: dict | None = None, **kwargs) -> dg.ExecuteInProcessResult:
        job = assets.get_subset(asset_selection={dg.AssetKey.from_user_string(a) for a in selection})
        result = job.execute_in_process(instance=instance, raise_on_error=False, run_config={**quiet, **(run_config or {})},
                                        **kwargs)
        print(f"\n{title}: {'success' if result.success else 'FAILED'} (run {result.run_id})")
        return result

    def metadata(result, asset: str) -> dict:
        found = [e.materialization for e in result.get_asset_materialization_events()
                 if e.materialization.asset_key.to_user_string() == asset]
        return {k: v.value for k, v in found[-1].metadata.items()} if found else {}

    outcomes = []
    records = defs.resolve_job_def("record_pipeline").execute_in_process(
        partition_key=f"{day.isoformat()}|demo", instance=instance, raise_on_error=False, run_config=quiet)
    print(f"\n1. record pipeline, demo {day}: {'success' if records.success else 'FAILED'} (run {records.run_id})")
    for activity in layout.ACTIVITIES:
        output = layout.latest_output(storage, "demo", activity, day)
        if output:
            count = Manifest.from_bytes(storage.read_bytes(output.manifest)).record_count
            print(f"  {activity:<10} {count:>5} records  {storage.uri(output.folder)}")
    outcomes.append(records.success)

    graph = run("2. linked data, riverlod (VoID -> named graph)", ["linked_data/provider_graph"], partition_key="riverlod")
    imported = metadata(graph, "linked_data/provider_graph")
    print(f"  {imported.get('strategy', '?')} import of {json.dumps(imported.get('dumps', []))} into {settings.triplestore}")
    export = run("   N-Quads export of every provider graph", ["linked_data/export"])
    print(f"  {metadata(export, 'linked_data/export').get('triples', 0)} triples -> "
          f"{metadata(export, 'linked_data/export').get('path', '')}")
    outcomes.append(graph.success and export.success)

    wiki = run("3. repository, riverwiki (wiki export -> validated objects with PIDs)", ["repository_collections"],
               partition_key="riverwiki")
    ingested = metadata(wiki, "repository_collections")
    print(f"  {ingested.get('units_ingested', 0)} units, {ingested.get('objects_ingested', 0)} objects into "
          f"{settings.repository}; errors {ingested.get('errors', 0)}")
    outcomes.append(wiki.success)

    requests = settings.home / "demo" / "dataset-requests.jsonl"
    requests.write_text(json.dumps({"ingest_type": "dataset", "base_url": dataset_url(base)}) + "\n")
    key = submit(requests, storage=storage)["key"]
    datasets = run("4. dataset ingest (Dataverse-like platform -> verified manifest -> stored files)",
                   ["dataset_ingest_results"], run_config={
                       "ops": {"dataset_ingest_results": {"config": {"requests_key": key}}},
                       "resources": {"dataset_ingest": {"config": {"allow_private": True}}}})
    found = metadata(datasets, "dataset_ingest_results")
    print("  " + ", ".join(f"{k} {v}" for k, v in found.items() if k.startswith(("status/", "platform/"))))
    outcomes.append(datasets.success and found.get("hits", 0) >= 1)

    published = run("5. ResourceSync publish (Resource Lists and Change Lists)", ["resourcesync_documents"])
    documents = metadata(published, "resourcesync_documents")
    print(f"  {documents.get('resource_sets', 0)} resource sets, {documents.get('resources', 0)} resources in "
          f"{storage.uri('_resourcesync')}")
    outcomes.append(published.success)
    return outcomes


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


def _map(args: argparse.Namespace) -> int:
    """Map files or a provider's newest harvest with a profile, writing nothing (``records/mapping/preview.py``)."""
    import yaml

    from ingest_assets.errors import ConfigError, IngestError
    from ingest_assets.records.mapping.mapper import build_mapper
    from ingest_assets.records.mapping.preview import HARVEST, preview, read_inputs
    from ingest_assets.records.mapping.profiles import PROFILES, load_profile
    from ingest_assets.settings import Settings
    from ingest_assets.storage import open_storage

    harvests = [given[len(HARVEST):] for given in args.inputs if given.startswith(HARVEST)]
    provider = args.provider or (harvests[0] if harvests else "preview")
    try:
        profile = PROFILES[args.profile] if args.profile in PROFILES else load_profile(args.profile)
        overrides = {}
        if args.override:
            try:
                overrides = yaml.safe_load(args.override.read_text(encoding="utf-8")) or {}
            except (OSError, yaml.YAMLError) as exc:
                raise ConfigError(f"cannot read the overrides: {exc}", file=str(args.override)) from None
        mapper = build_mapper(provider, args.label or provider, profile, overrides)
        storage = open_storage(Settings.current().storage_url) if harvests else None
        report = preview(mapper, read_inputs(args.inputs, profile, provider, storage), sys.stdout,
                         output=args.format, limit=args.limit)
    except IngestError as exc:
        print(f"ingest-assets map: {exc}", file=sys.stderr)
        return 2
    return 1 if report.failed else 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in DELEGATED:
        from importlib import import_module

        return import_module(DELEGATED[argv[0]][0]).main(argv[1:]) or 0
    parser = argparse.ArgumentParser(prog="ingest-assets", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser("demo", help="all five capabilities once, on embedded defaults, against a local demo site")
    demo.add_argument("--date", type=date.fromisoformat, default=date(2026, 1, 15))
    demo.add_argument("--port", type=int, default=0, help="the demo site's port (default: any free port)")
    demo.set_defaults(handler=_demo)

    serve = commands.add_parser("serve-demo", help="serve the demo OAI-PMH endpoint (for runs from the UI)")
    serve.add_argument("--date", type=date.fromisoformat, default=date(2026, 1, 15))
    serve.add_argument("--port", type=int, default=DEMO_PORT)
    serve.set_defaults(handler=_serve_demo)

    snap = commands.add_parser("snapshot", help="rebuild a provider's records as of a date (newest versions, deletions applied)")
    snap.add_argument("provider")
    snap.add_argument("--as-of", type=date.fromisoformat, required=True)
    snap.set_defaults(handler=_snapshot)

    preview = commands.add_parser(
        "map", help="preview a mapping profile on files or a provider's newest harvest (writes nothing)",
        description="Map XML, JSON, JSON lines or OAI-PMH files, or harvest:<provider> (its newest harvest output), "
                    "and print per record the MAP JSON-LD and the mapping messages, then the field coverage.")
    preview.add_argument("inputs", nargs="+", metavar="INPUT")
    preview.add_argument("--profile", required=True, help="a shipped profile (oai_dc, qdc, mods, nara, mdl, cdl...) "
                                                          "or a profile file of one's own")
    preview.add_argument("--override", type=Path, metavar="FILE",
                         help="YAML: field -> rule, merged onto the profile as a registry's mapping_overrides")
    preview.add_argument("--provider", help="provider name for DPLA ids (default: the harvest's provider, or 'preview')")
    preview.add_argument("--label", help="provider label (default: the provider name)")
    preview.add_argument("--limit", type=int, help="print only the first N records (all are counted)")
    preview.add_argument("--format", choices=("table", "json"), default="table")
    preview.set_defaults(handler=_map)

    for name, (_, help_text) in DELEGATED.items():  # listed in --help; main() hands them on before parsing
        commands.add_parser(name, help=f"{help_text} (see: ingest-assets {name} --help)")

    args = parser.parse_args(argv)
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())
