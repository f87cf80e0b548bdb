"""``ingest-assets ui [--demo] [--port 3000]``: the Dagster UI and daemon (``dagster dev``) on the configured
instance (``DAGSTER_HOME``, by default ``$INGEST_HOME/dagster``) and registry. ``--demo`` runs them on the
registry ``ingest-assets demo`` wrote, with the demo site served beside them first, so every run the UI starts
finds its source. Ctrl-C, SIGTERM or SIGHUP stops it with all it started."""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
import time
from importlib.resources import as_file, files
from urllib.parse import urlsplit

import psutil

from ingest_assets.cli.demo import DEMO_DAY, demo_registry_path
from ingest_assets.cli.instance import instance_home
from ingest_assets.cli.main import Parser, command_line, iso_day, port_number
from ingest_assets.core.errors import ConfigError, UsageError
from ingest_assets.core.registry import load_registry
from ingest_assets.core.settings import Settings

STOP_SECONDS = 60  # for dagster dev to stop its webserver and daemon (it gives each up to 60 s itself)
KILL_SECONDS = 10  # for what is left of its process group to be gone after SIGKILL
RUN_WORKER = "multiprocessing.spawn"  # in a run worker's command line: Dagster's code servers spawn them so


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
        try:
            return supervise([sys.executable, "-m", "dagster", "dev", "-w", str(workspace), "-h", args.host,
                              "-p", str(args.port)], env)
        finally:
            if site:
                site.shutdown()


def supervise(command: list[str], env: dict[str, str]) -> int:
    """Run ``command`` (dagster dev) in a session of its own until it ends, or until SIGINT, SIGTERM or SIGHUP
    here stops it with all it started (:func:`stop`; then 0). Its own session: Ctrl-C in a terminal reaches it
    from here only, and it stops its webserver, daemon and code servers itself (a SIGINT to each of them would
    print their tracebacks)."""
    stop_on_signals()
    process = None
    try:
        process = subprocess.Popen(command, env=env, start_new_session=True)
        return process.wait()
    except KeyboardInterrupt:
        if process:
            stop(process, env.get("DAGSTER_HOME"))
        return 0


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def stop_on_signals() -> None:
    """SIGINT, SIGTERM and SIGHUP raise KeyboardInterrupt here, once, so each stops the UI and all it started. SIGINT
    also when the shell ignored it (a background job of a script); dagster dev, started after this, inherits the
    default disposition (an ignored SIGINT would stay ignored there, and its SIGTERM with it). A SIGHUP ignored by
    ``nohup`` stays ignored."""
    for number in STOP_SIGNALS:
        if number != signal.SIGHUP or signal.getsignal(number) != signal.SIG_IGN:
            signal.signal(number, _interrupt)


def _interrupt(number, frame):
    """The first stop signal stops the UI; the ones after it change nothing: ``uv run`` forwards to its child the
    signal the child's process group already got (Ctrl-C, ``kill -- -PGID``), and the stop is bounded anyway."""
    for each in STOP_SIGNALS:
        signal.signal(each, signal.SIG_IGN)
    raise KeyboardInterrupt


def stop(process: subprocess.Popen, home: str | None) -> None:
    """Stop dagster dev with all it started, in seconds. SIGINT, on which it stops its webserver and daemon (the
    daemon ends the ticks and run launches in flight) and asks its code servers to stop; once it has ended (or
    after STOP_SECONDS), SIGKILL to what is left of its process group: the code servers, which hold nothing (their
    own stop waits for the runs in flight, then each spends seconds of CPU in interpreter shutdown, one after the
    other; their socket files are removed here), and the workers of runs in flight (Dagster defers an interrupt
    while a step writes its output), whose runs are then marked failed in the instance at ``home``
    (:func:`fail_orphaned_runs`: not left STARTED; ``run_retries`` run them again from the step that did not
    finish). No SIGTERM: Dagster takes it for a second Ctrl-C, and a process already stopping prints its
    traceback."""
    process.send_signal(signal.SIGINT)
    try:
        process.wait(STOP_SECONDS)
    except subprocess.TimeoutExpired:
        pass  # killed with its group
    left = _commands_of_group(process.pid)
    _signal_group(process.pid, signal.SIGKILL)
    _wait_group(process, KILL_SECONDS)
    for command in left:
        _remove_socket(command)
    if home and any(RUN_WORKER in " ".join(command) for command in left):
        _fail_stopped_runs(home)


def _commands_of_group(group: int) -> list[list[str]]:
    """The command lines of the processes of the group."""
    found = []
    for each in psutil.process_iter(["cmdline"]):
        try:
            if os.getpgid(each.pid) == group:
                found.append(each.info["cmdline"] or [])
        except OSError:
            continue
    return found


def _remove_socket(command: list[str]) -> None:
    """Remove the socket file a killed code server served on (``--socket PATH``), as its own stop would have."""
    for option, value in zip(command, command[1:]):
        try:
            if option == "--socket" and stat.S_ISSOCK(os.lstat(value).st_mode):
                os.unlink(value)
        except FileNotFoundError:
            continue


def _fail_stopped_runs(home: str) -> None:
    import dagster as dg

    from ingest_assets.defs.operations.orphans import fail_orphaned_runs

    with dg.DagsterInstance.from_config(home) as instance:
        failed = fail_orphaned_runs(instance)
    if failed:
        print(f"stopped {len(failed)} run(s) in flight, marked failed (run again from the step that did not finish): "
              f"{', '.join(failed)}", flush=True)


def _wait_group(process: subprocess.Popen, seconds: float) -> None:
    """Wait up to ``seconds`` for dagster dev and every other process of its group to be gone."""
    deadline = time.monotonic() + seconds
    try:
        process.wait(seconds)
    except subprocess.TimeoutExpired:
        return
    while _signal_group(process.pid, 0) and time.monotonic() < deadline:
        time.sleep(0.05)


def _signal_group(group: int, number: int) -> bool:
    """Send ``number`` to the process group; whether it still had a process."""
    try:
        os.killpg(group, number)
    except ProcessLookupError:
        return False
    return True


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
