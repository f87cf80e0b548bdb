"""``ingest-assets demo`` runs all five capabilities once on embedded defaults against a local site of our own
making, on the instance and the registry that ``ingest-assets ui --demo`` then opens; ``ingest-assets serve-demo``
serves that site alone."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from datetime import date
from importlib.resources import files
from pathlib import Path

from ingest_assets.cli.main import Parser, command_line, iso_day, port_number
from ingest_assets.core.settings import Settings

DEMO_PORT = 8765
DEMO_DAY = date(2026, 1, 15)


def demo_registry_path(settings: Settings) -> Path:
    """The registry the demo writes and ``ingest-assets ui --demo`` runs on."""
    return settings.home / "demo" / "registry.yaml"


def _demo(args: argparse.Namespace) -> int:
    """All five capabilities on embedded defaults against a local site of our own making."""
    from ingest_assets.cli.instance import open_instance
    from ingest_assets.demo.samples import sample_records
    from ingest_assets.demo.site import serve_site

    settings = Settings.current()
    server, base = serve_site(sample_records(day=args.date), port=args.port)
    settings = replace(settings, registry_path=_demo_registry(demo_registry_path(settings), base))
    print(f"demo site: {base}  (OAI-PMH /oai, VoID /lod/void.ttl, a Dataverse-like dataset)\nregistry: {settings.registry_path}")
    try:
        with open_instance(settings) as instance:
            results = _demo_runs(settings, instance, args.date, base)
    finally:
        server.shutdown()
    run = command_line(settings)
    print(f"\nstorage:      {settings.storage_url}\nsearch it:    {run} search Millbrook"
          f"\nopen the UI:  {run} ui --demo{'' if args.date == DEMO_DAY else f' --date {args.date}'}"
          "   (the Dagster UI on this instance and registry, the demo site beside it)")
    return 0 if all(results) else 1


DEMO_REGISTRY = """# Written by `ingest-assets demo` for its local site at {base}: one provider per capability.
# `ingest-assets ui --demo` opens the UI on this registry and serves the site again on the same port.
demo:
  label: Riverside Historical Society
  harvest: {{type: oai, endpoint: '{base}/oai', metadata_prefix: oai_dc, allow_private: true}}
  mapping: oai_dc
  resourcesync: {{}}
  schedule: false   # the demo site's records are of fixed days: harvest them from the UI, no daily refresh
riverlod:
  label: Riverside places (demo linked data)
  void: '{base}/lod/void.ttl'
  allow_private: true
riverwiki:
  label: Riverside demo wiki
  repository: {{wiki_export: '{wiki}', base_url: 'http://wiki.riverside.demo.example/wiki/', default_language: en}}
"""


def _demo_registry(path: Path, base: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(DEMO_REGISTRY.format(base=base, wiki=files("ingest_assets.demo") / "wiki-export.xml"))
    return path


def _demo_runs(settings, instance, day: date, base: str) -> list[bool]:
    """Run each capability's assets once and print what each wrote; returns success per capability."""
    import dagster as dg

    from ingest_assets.cli.datasets import submit
    from ingest_assets.definitions import build_definitions
    from ingest_assets.defs.providers import linked_data_providers, record_providers, repository_providers
    from ingest_assets.demo.site import dataset_url
    from ingest_assets.linked_data.status import read_status
    from ingest_assets.storage import layout, open_storage
    from ingest_assets.storage.counts import day_counts
    from ingest_assets.storage.layout import status_page_key

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
    counts = day_counts(storage, "demo", day)
    if counts:
        explained = {
            "harvest": f"deleted {counts.harvest_deleted}, unreadable {counts.harvest_failed}",
            "mapping": f"failed {counts.mapping_failed}; deleted records are not mapped",
            "enrichment": "",
            "indexing": f"documents {counts.indexed - counts.index_deletions} + deletions {counts.index_deletions}",
        }
        written = {"harvest": counts.harvested, "mapping": counts.mapped, "enrichment": counts.enriched,
                   "indexing": counts.indexed}
        for activity in layout.ACTIVITIES:
            output = layout.latest_output(storage, "demo", activity, day)
            note = f" ({explained[activity]})" if explained[activity] else ""
            print(f"  {activity:<10} {written[activity]:>5} records{note}  {storage.uri(output.folder)}")
    outcomes.append(records.success)

    graph = run("2. linked data, riverlod (VoID -> named graph)", ["linked_data/provider_graph"], partition_key="riverlod")
    imported = metadata(graph, "linked_data/provider_graph")
    if imported:
        print(f"  {imported['strategy']} import of {json.dumps(imported.get('dumps', []))} into {settings.triplestore}")
    elif graph.success:  # the asset materializes nothing when the VoID's dcterms:modified has not moved
        held = read_status(storage, "riverlod").get("harvested", {}).get("triples")
        print(f"  nothing changed: the VoID is the one imported before, so its graph ({held} triples) stays as it is "
              f"in {settings.triplestore}")
    export = run("   N-Quads export of every provider graph", ["linked_data/export"])
    print(f"  {metadata(export, 'linked_data/export').get('triples', 0)} triples -> "
          f"{metadata(export, 'linked_data/export').get('path', '')}")
    outcomes.append(graph.success and export.success)

    wiki = run("3. repository, riverwiki (wiki export -> validated objects with PIDs)", ["repository_collections"],
               partition_key="riverwiki")
    ingested = metadata(wiki, "repository_collections")
    print(f"  {ingested.get('units_ingested', 0)} units, {ingested.get('objects_ingested', 0)} objects into "
          f"{settings.repository}; errors {ingested.get('errors', 0)}")
    if wiki.success and not ingested.get("units_ingested") and not ingested.get("refused"):
        print("  nothing changed: no unit of the wiki export changed since the last ingest, so the repository keeps "
              "what it holds")
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

    overview = run("6. the hub overview (record_counts, hub_status and its status page)", ["record_counts", "hub_status"])
    print(f"  status page: {storage.uri(status_page_key())}  (served as /status.html by serve-resourcesync)")
    outcomes.append(overview.success)
    return outcomes


def _serve_demo(args: argparse.Namespace) -> int:
    from ingest_assets.core.wsgi import WsgiServer
    from ingest_assets.demo.samples import sample_records
    from ingest_assets.demo.site import make_site

    server = WsgiServer(port=args.port)
    base = server.url
    print(f"serving the demo site at {base}: OAI-PMH {base}/oai, VoID {base}/lod/void.ttl (Ctrl-C to stop)", flush=True)
    server.run(make_site(sample_records(day=args.date), base))  # until SIGTERM or Ctrl-C
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="ingest-assets demo", description=__doc__)
    parser.add_argument("--date", type=iso_day, default=DEMO_DAY, help=f"the day of the sample records (default {DEMO_DAY})")
    parser.add_argument("--port", type=port_number, default=DEMO_PORT,
                        help=f"the demo site's port (default {DEMO_PORT}; 0: any free port)")
    return _demo(parser.parse_args(argv))


def serve(argv: list[str] | None = None) -> int:
    parser = Parser(prog="ingest-assets serve-demo", description="Serve the demo site (OAI-PMH, VoID and dump, a dataset).")
    parser.add_argument("--date", type=iso_day, default=DEMO_DAY)
    parser.add_argument("--port", type=port_number, default=DEMO_PORT)
    return _serve_demo(parser.parse_args(argv))
