"""``ingest-assets demo`` runs all five capabilities once on embedded defaults against a local site of our own
making; ``ingest-assets serve-demo`` serves that site's OAI-PMH endpoint for runs from the UI."""

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
DEMO_DAY = date(2026, 1, 15)


def _demo(args: argparse.Namespace) -> int:
    """All five capabilities on embedded defaults against a local site of our own making (one free port)."""
    import dagster as dg

    from ingest_assets.demo.samples import sample_records
    from ingest_assets.core.wsgi import PortInUse
    from ingest_assets.demo.site import serve_site
    from ingest_assets.core.settings import Settings

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

    from ingest_assets.cli.datasets import submit
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
    from ingest_assets.core.wsgi import WsgiServer
    from ingest_assets.demo.oai_server import make_app
    from ingest_assets.demo.samples import sample_records

    server = WsgiServer(port=args.port)
    url = f"{server.url}/oai"
    print(f"serving demo OAI-PMH records at {url} (Ctrl-C to stop)", flush=True)
    server.run(make_app(sample_records(day=args.date), url))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ingest-assets demo", description=__doc__)
    parser.add_argument("--date", type=date.fromisoformat, default=DEMO_DAY)
    parser.add_argument("--port", type=int, default=0, help="the demo site's port (default: any free port)")
    return _demo(parser.parse_args(argv))


def serve(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ingest-assets serve-demo", description="Serve the demo OAI-PMH endpoint.")
    parser.add_argument("--date", type=date.fromisoformat, default=DEMO_DAY)
    parser.add_argument("--port", type=int, default=DEMO_PORT)
    return _serve_demo(parser.parse_args(argv))
