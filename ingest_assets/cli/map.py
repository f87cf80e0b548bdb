"""``ingest-assets map [--profile NAME|FILE] [--provider NAME] INPUT...``: map XML, JSON, JSON lines or OAI-PMH
files, or harvest:<provider> (its newest harvest output), and print per record the MAP JSON-LD and the mapping
messages, then the field coverage. With a registry provider, the preview runs as its pipeline would: its mapping,
its DPLA ids. ``--enrich`` also enriches each record (ingestion3's chain, less ``--skip`` steps) and
shows the enriched document beside the mapped one, which steps changed which field, and the enrichment report.
Writes nothing."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from ingest_assets.cli.main import Parser
from ingest_assets.core.registry import ENRICHMENT_STEPS


def _map(args: argparse.Namespace) -> int:
    """Map files or a provider's newest harvest with a profile, writing nothing (``records/preview.py``)."""
    import yaml

    from ingest_assets.core.errors import ConfigError, UsageError, context
    from ingest_assets.records.enrichment import Chain
    from ingest_assets.records.mapping.mapper import (ProviderSettings, build_mapper, deployment_catalog, profile_for,
                                                      provider_settings)
    from ingest_assets.records.preview import HARVEST, preview, read_inputs
    from ingest_assets.core.settings import Settings
    from ingest_assets.storage import open_storage

    harvests = [given[len(HARVEST):] for given in args.inputs if given.startswith(HARVEST)]
    provider = args.provider or (harvests[0] if harvests else "preview")
    catalog = deployment_catalog()
    entry = _registry_entry(provider)
    if args.profile is None and entry is None:
        raise UsageError(f"--profile is needed: {provider!r} is no record provider of the registry",
                         hint="name a profile with --profile, or the provider with --provider")
    profile = catalog.profile(args.profile) if args.profile else profile_for(entry, catalog)
    overrides = entry.settings.mapping_overrides if entry else {}
    if args.override:
        try:
            overrides = yaml.safe_load(args.override.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise ConfigError(f"cannot read the overrides: {exc}", file=str(args.override)) from None
    if entry is not None:  # label, URI and DPLA id prefix as the provider's pipeline mints them
        settings = provider_settings(entry, profile)
        settings = replace(settings, label=args.label or settings.label)
    else:
        prefix = profile.provider.id_prefix
        settings = ProviderSettings(provider, args.label or profile.provider.label or provider, profile.provider.uri,
                                    provider if prefix is None else prefix or None)
    with context(file=str(args.override) if args.override else None):
        mapper = build_mapper(settings, profile, overrides, catalog)
    storage = open_storage(Settings.current().storage_url) if harvests else None
    chain = Chain(skip=frozenset(args.skip), dates=args.dates) if args.enrich else None
    harvest = entry.settings.harvest if entry else None
    report = preview(mapper, read_inputs(args.inputs, profile, provider, storage, harvest), sys.stdout,
                     output=args.format, limit=args.limit, enrich=chain)
    return 1 if report.failed else 0


def _registry_entry(provider: str):
    """The registry entry of ``provider`` when the registry file has it as a record provider, else None (a preview
    needs no registry)."""
    from ingest_assets.core.registry import load_registry
    from ingest_assets.core.settings import Settings

    path = Settings.current().registry_path
    if not path.is_file():
        return None
    registry = load_registry(path)
    return registry[provider] if provider in registry.providers_of("records") else None


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="ingest-assets map", description=__doc__)
    parser.add_argument("inputs", nargs="+", metavar="INPUT")
    parser.add_argument("--profile", help="a profile's name (shipped, or in INGEST_PROFILES) or a profile file of one's "
                                           "own (default: the --provider's registry mapping)")
    parser.add_argument("--override", type=Path, metavar="FILE",
                         help="YAML: field -> rule, merged onto the profile as a registry's mapping_overrides")
    parser.add_argument("--provider", help="provider name (default: the harvest's provider, or 'preview'); a record "
                                           "provider of the registry is previewed as its pipeline runs: its mapping, "
                                           "overrides and label, files read and DPLA ids minted as its harvest does; "
                                           "another name mints DPLA ids with the profile's id_prefix, else itself")
    parser.add_argument("--label", help="provider label (default: the profile's, else the provider name)")
    parser.add_argument("--limit", type=int, help="print only the first N records (all are counted)")
    parser.add_argument("--format", choices=("table", "json"), default="table")
    parser.add_argument("--enrich", action="store_true",
                        help="also enrich: the enriched document beside the mapped one, and the enrichment report")
    parser.add_argument("--skip", action="append", default=[], choices=ENRICHMENT_STEPS, metavar="STEP",
                        help="with --enrich: leave out an enrichment step, as a registry entry's enrichment.skip "
                             f"does (repeatable; one of {', '.join(ENRICHMENT_STEPS)})")
    parser.add_argument("--dates", choices=("date_builder", "parse_date"), default="date_builder",
                        help="with --enrich: the date reader, as a registry entry's enrichment.dates")
    args = parser.parse_args(argv)
    if (args.skip or args.dates != "date_builder") and not args.enrich:
        parser.error("--skip and --dates need --enrich")
    return _map(args)
