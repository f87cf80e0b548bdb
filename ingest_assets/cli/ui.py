"""``ingest-assets ui [--demo] [--port 3000]``: the Dagster UI and daemon (``dagster dev``) on the configured
instance (``DAGSTER_HOME``, by default ``$INGEST_HOME/dagster``) and registry. ``--demo`` runs them on the
registry ``ingest-assets demo`` wrote, with the demo site served beside them first, so every run the UI starts
finds its source. Ctrl-C stops both."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from importlib.resources import as_file, files
from urllib.parse import urlsplit

from ingest_assets.cli.demo import DEMO_DAY, demo_registry_path
from ingest_assets.cli.instance import instance_home
from ingest_assets.cli.main import Parser, command_line, iso_day, port_number
from ingest_assets.core.errors import ConfigError, UsageError
from ingest_assets.core.registry import load_registry
from ingest_assets.core.settings import Settings

STOP_SECONDS = 60


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="ingest-assets ui", description=__doc__)
    parser.add_argument("--demo", action="store_true", help="on the demo's registry, with its site served beside")
    parser.add_argument("--date", type=iso_day, default=DEMO_DAY, help="with --demo: the day of the demo's records")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=port_number, default=3000, help="the UI's port (default 3000)")
    args = parser.parse_args(argv)
    settings = Settings.current()
    registry_path = demo_registry_path(settings) if args.demo else settings.registry_path
    if args.demo and not registry_path.exists():
        raise UsageError(f"no demo registry at {registry_path}", hint=f"run `{command_line(settings)} demo` first")
    registry = load_registry(registry_path)  # a registry that cannot load is one line here, not a failing UI
    free_port(args.host, args.port)
    site = _demo_site(registry, args.date) if args.demo else None
    env = {**os.environ, "DAGSTER_HOME": str(instance_home(settings)), "INGEST_REGISTRY": str(registry_path)}
    print(f"Dagster UI: http://{args.host}:{args.port}  (instance {env['DAGSTER_HOME']}, registry {registry_path})",
          flush=True)
    with as_file(files("ingest_assets.cli").joinpath("workspace.yaml")) as workspace:
        # its own session: Ctrl-C reaches dagster dev from here only, and it stops its webserver, daemon and code
        # servers itself (a SIGINT to each of them would print their tracebacks)
        process = subprocess.Popen([sys.executable, "-m", "dagster", "dev", "-w", str(workspace), "-h", args.host,
                                    "-p", str(args.port)], env=env, start_new_session=True)
        try:
            return process.wait()
        except KeyboardInterrupt:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            return 0
        finally:
            if site:
                site.shutdown()


def free_port(host: str, port: int) -> None:
    """Refuse a port something already listens on (``dagster dev`` would fail with a traceback)."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise UsageError(f"port {port} on {host} is in use ({exc.strerror})",
                             hint="stop what listens there or choose another --port") from None


def _demo_site(registry, day):
    from ingest_assets.demo.samples import sample_records
    from ingest_assets.demo.site import serve_site

    try:
        endpoint = registry["demo"].settings.harvest.endpoint
    except (ConfigError, AttributeError):
        raise UsageError(f"{registry.source} is not a registry the demo wrote", hint="run `ingest-assets demo` again") from None
    server, base = serve_site(sample_records(day=day), port=urlsplit(endpoint).port or 0)
    print(f"demo site: {base}", flush=True)
    return server
