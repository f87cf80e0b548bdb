"""``ingest-assets lineage``: where a record, graph, object or dataset came from, step by step.

    ingest-assets lineage <provider> <id>         a record (local or DPLA id): index -> ... -> harvest request
    ingest-assets lineage --graph <provider>      a linked-data graph: version -> imports -> dumps
    ingest-assets lineage --object <PID>          a repository object: object -> page revision -> source
    ingest-assets lineage --dataset <base_url>    a dataset: result -> manifest -> API answers -> request

``--json`` prints the same steps for programs.
"""

from __future__ import annotations

import argparse

from ingest_assets.cli.main import Parser, iso_day
from ingest_assets.core.errors import ConfigError
from ingest_assets.lineage import Lineage
from ingest_assets.core.registry import NAME_RE
from ingest_assets.core.settings import Settings


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="ingest-assets lineage", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("provider", nargs="?", help="the record's provider")
    parser.add_argument("id", nargs="?", help="a record's local id or DPLA id")
    parser.add_argument("--date", type=iso_day, help="a record: only the outputs of this partition day")
    other = parser.add_mutually_exclusive_group()
    other.add_argument("--graph", metavar="PROVIDER", help="a linked-data provider's graph")
    other.add_argument("--object", metavar="PID", help="a repository object")
    other.add_argument("--dataset", metavar="BASE_URL", help="a dataset ingest request's base_url")
    parser.add_argument("--json", action="store_true", help="print the lineage as JSON")
    args = parser.parse_args(argv)
    subjects = [args.graph, args.object, args.dataset]
    if any(subjects) == bool(args.provider) or (args.provider and not args.id):
        parser.error("give a provider and a record id, or one of --graph, --object, --dataset")
    lineage = _lineage(args, Settings.current())
    print(lineage.to_json() if args.json else lineage.to_text())
    return 0


def _lineage(args: argparse.Namespace, settings: Settings) -> Lineage:
    from ingest_assets.storage import open_storage

    provider = args.graph or args.provider
    if provider and not NAME_RE.fullmatch(provider):
        raise ConfigError("not a provider name (lowercase letters and digits, '-' between them)", provider=provider,
                          hint="give a registry entry's name")
    storage = open_storage(settings.storage_url)
    if args.graph:
        from ingest_assets.lineage.graphs import graph_lineage

        return graph_lineage(storage, args.graph)
    if args.object:
        from ingest_assets.lineage.objects import object_lineage
        from ingest_assets.repository import open_repository

        repository = open_repository(settings.repository, auth=settings.fedora_auth())
        return object_lineage(repository, args.object, settings.repository)
    if args.dataset:
        from ingest_assets.lineage.datasets import dataset_lineage

        return dataset_lineage(storage, args.dataset)
    from ingest_assets.lineage.records import record_lineage

    return record_lineage(storage, args.provider, args.id, args.date, _minter(settings, args.provider))


def _minter(settings, provider: str):
    """How the registry's entry for ``provider`` mints DPLA ids (its profile's id prefix), when it names a profile;
    else ``None`` (the provider's name)."""
    from ingest_assets.core.registry import load_registry
    from ingest_assets.records.mapping import minter_for

    try:
        entry = load_registry(settings.registry_path)[provider]
    except ConfigError:
        return None  # no registry here, or not in it: outputs alone say where the record came from
    return minter_for(entry) if entry.settings.mapping is not None else None
