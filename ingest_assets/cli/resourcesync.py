"""``ingest-assets serve-resourcesync [--host 127.0.0.1] [--port 8080] [--publish]``: serve the published
ResourceSync documents and the resources of each set with the platform's settings and registry, and the hub
status page (``/status.html``)."""

from __future__ import annotations

from functools import partial

from ingest_assets.cli.main import Parser, port_number
from ingest_assets.core.wsgi import WsgiServer
from ingest_assets.resourcesync.server import RegistrySets, ResourceSyncApp
from ingest_assets.storage import open_storage


def serve(argv: list[str] | None = None) -> int:
    """Serve (after publishing once with ``--publish``) with the platform's settings and registry."""
    from ingest_assets.resourcesync import open_resource_index
    from ingest_assets.resourcesync.publish import Publisher
    from ingest_assets.core.registry import load_registry
    from ingest_assets.core.settings import Settings
    from ingest_assets.core.sql import make_engine

    parser = Parser(prog="ingest-assets serve-resourcesync", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=port_number, default=8080)
    parser.add_argument("--publish", action="store_true", help="regenerate the documents from the index first")
    args = parser.parse_args(argv)
    settings = Settings.current()
    load_registry(settings.registry_path)  # a registry that cannot load is one line now, not an error per request
    storage = open_storage(settings.storage_url)
    server = WsgiServer(args.host, args.port, quiet=False)
    base = settings.resourcesync_url or server.url
    sets = RegistrySets(settings.registry_path, base, settings.resourcesync_capabilities)
    if args.publish:
        index = open_resource_index(settings.search, partial(make_engine, settings.database_url))
        try:
            Publisher(index, storage, base).publish(sets())
        finally:
            index.close()
    print(f"serving ResourceSync on {base}/.well-known/resourcesync", flush=True)
    print(f"hub status page: {base}/status.html", flush=True)
    server.run(ResourceSyncApp(storage, sets))  # until SIGTERM or Ctrl-C
    return 0

