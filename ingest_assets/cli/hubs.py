"""``ingest-assets hubs list|init``: the hubs DPLA's ingestion3 harvests, shipped as registry entries.

``list`` prints each shipped hub: its harvest type, profile, display name and what its delivery needs from you.
``init <hub> [--to registry.yaml]`` copies the hub's entry into your registry (``INGEST_REGISTRY`` by default, made
when absent) and says what to fill in: until then the registry refuses that entry, naming the key (docs/hubs.md)."""

from __future__ import annotations

from pathlib import Path

from ingest_assets.cli.main import Parser, command_line


def _list() -> int:
    from ingest_assets.core.version import software_version
    from ingest_assets.records.mapping.hubs import shipped_hubs, shipped_source

    hubs = shipped_hubs()
    print(f"{len(hubs)} hubs shipped with ingest-assets {software_version()} ({shipped_source()})")
    for name in sorted(hubs):
        settings = hubs[name].settings
        placeholder = settings.harvest.placeholder()
        needs = f"fill in harvest.{placeholder[0]}" if placeholder else "public"
        print(f"{name:20} {settings.harvest.type:5} {settings.mapping:20} {settings.label} [{needs}]")
    return 0


def _init(hub: str, to: Path | None) -> int:
    from ingest_assets.core.settings import Settings
    from ingest_assets.records.mapping.hubs import add_hub

    settings = Settings.current()
    added = add_hub(hub, to.resolve() if to else settings.registry_path)
    harvest = added.entry.settings.harvest
    print(f"{hub}: the shipped entry ({harvest.type} harvest, profile {added.entry.settings.mapping}) "
          f"is now in {added.registry}")
    if added.fill_in:
        needs = "; and ".join(f"harvest.{key}: {what}" for key, what in added.fill_in.items())
        print(f"{hub} needs your delivery location, {needs}. Fill it in, then remove harvest.delivery and "
              "harvest.fill_in; until then the registry refuses the entry")
    print(f"next: {command_line(settings)} harvest {hub} --date YYYY-MM-DD")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="ingest-assets hubs", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands.add_parser("list", help="the shipped hubs")
    init = commands.add_parser("init", help="copy a shipped hub's entry into your registry")
    init.add_argument("hub", help="a shipped hub's name (see: ingest-assets hubs list)")
    init.add_argument("--to", type=Path, help="the registry file (default: INGEST_REGISTRY, else ./registry.yaml)")
    args = parser.parse_args(argv)
    return _list() if args.command == "list" else _init(args.hub, args.to)
