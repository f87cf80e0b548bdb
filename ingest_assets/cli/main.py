"""``ingest-assets``: the one entry point. Each command group is a module of this package with its own parser
(:class:`Parser`), imported only when its command runs (so ``ingest-assets --help`` and every command start fast).

A command reports a problem by raising; :func:`main` turns every error into one line on stderr,
``ingest-assets <command>: <problem>; hint: <what to do>``, and an exit status (:func:`exit_status`). When the
reader of the output goes away (``| head``) any command ends quietly with :data:`READER_GONE`.
``--verbose`` anywhere on the line adds the traceback and the libraries' logs (for ``harvest``, Dagster's event log).
"""

from __future__ import annotations

import argparse
import errno
import logging
import os
import shutil
import sys
import traceback
from datetime import date
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

from ingest_assets.core.errors import (
    ConfigError,
    FetchError,
    IngestError,
    NotFoundError,
    ParseError,
    UsageError,
    ValidationError,
)

if TYPE_CHECKING:
    from ingest_assets.core.settings import Settings

# command -> (module, function, help): NAME is cli/NAME.py's main, serve-NAME its serve (test_cli.py holds to it);
# each command's ordinary mistakes are listed in ingest_assets_tests/test_cli_mistakes.py (which names one missing)
COMMANDS = {
    "demo": ("demo", "main", "all five capabilities once, on embedded defaults, against a local demo site"),
    "serve-demo": ("demo", "serve", "serve the demo site (OAI-PMH, VoID, a dataset) for runs from the UI"),
    "ui": ("ui", "main", "the Dagster UI and daemon on the configured instance (--demo: on the demo's registry)"),
    "harvest": ("harvest", "main", "run the record pipeline for a provider's day(s) on the instance"),
    "map": ("map", "main", "preview a mapping profile on files or a provider's newest harvest (writes nothing)"),
    "snapshot": ("snapshot", "main", "rebuild a provider's records as of a date (newest versions, deletions applied)"),
    "search": ("search", "main", "query the search index"),
    "serve-resourcesync": ("resourcesync", "serve", "serve the ResourceSync documents and the hub status page over HTTP"),
    "repository": ("repository", "main", "repository ingest commands"),
    "datasets": ("datasets", "main", "submit or process dataset ingest requests"),
    "lineage": ("lineage", "main", "where a record, graph, object or dataset came from"),
    "index": ("index", "main", "the search alias, its indices and those kept for rollback; roll back"),
    "review": ("review", "main", "list, approve or reject days held for review before publishing"),
    "report": ("report", "main", "a provider day's report: counts, problems, coverage, what changed"),
    "takedown": ("takedown", "main", "keep records out of the index and the change feed until undone"),
    "status": ("status", "main", "per provider: last harvest, counts, failures, review, live index, history"),
    "hubs": ("hubs", "main", "the hubs DPLA's ingestion3 harvests, shipped: list them, or copy one into your registry"),
}
VERBOSE = "--verbose"
READER_GONE = 128 + 13  # the status of a command ended by SIGPIPE, as `yes | head` leaves `yes`
_verbose = False
DESCRIPTION = ("The ingest-assets commands. A mistake is one line on stderr with a hint; --verbose anywhere on the line "
               "adds the traceback (and, for harvest, Dagster's event log).")


class Parser(argparse.ArgumentParser):
    """The argument parser of every command: a mistake raises :class:`UsageError` (one line, see :func:`main`)
    instead of printing argparse's usage and exiting."""

    def error(self, message: str):
        raise UsageError(message, hint=f"see {self.prog} --help")


def iso_day(text: str) -> date:
    """An argument type: a day as ``YYYY-MM-DD``."""
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a day (YYYY-MM-DD)") from None


def port_number(text: str) -> int:
    """An argument type: a TCP port, 0 (any free port) to 65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port (0 to 65535; 0: any free port)")
    return port


def command_line(settings: Settings) -> str:
    """How the reader of a printed command runs ``ingest-assets`` here: ``uv run ingest-assets`` under ``uv run``
    (the full path of that uv when none is on PATH, as right after install.py), ``ingest-assets`` when that is the
    one on PATH, else the full path of the script that runs now."""
    if settings.uv_run:
        return f"{'uv' if shutil.which('uv') else settings.uv_run} run ingest-assets"
    script = Path(sys.argv[0]).resolve()
    if script.name != "ingest-assets":
        return f"{sys.executable} -m ingest_assets.cli"
    on_path = shutil.which("ingest-assets")
    return "ingest-assets" if on_path and Path(on_path).resolve() == script else str(script)


def verbose() -> bool:
    """Whether this invocation asked for ``--verbose`` (tracebacks, libraries' logs, Dagster's event log)."""
    return _verbose


def exit_status(error: BaseException) -> int:
    """2: nothing ran because something given is wrong (argument, setting, registry, input file, port);
    1: it ran and failed (a fetch, a bound, an unexpected error); 130: interrupted."""
    if isinstance(error, KeyboardInterrupt):
        return 130
    if isinstance(error, (ConfigError, ValidationError, ParseError)):
        return 2
    if isinstance(error, OSError) and (error.filename is not None or error.errno == errno.EADDRINUSE):
        return 2
    return 1


def describe(error: BaseException) -> tuple[str, str]:
    """The problem and the hint printed for ``error``."""
    if isinstance(error, IngestError):
        return str(error), error.hint or _default_hint(error)
    if isinstance(error, KeyboardInterrupt):
        return "interrupted", "run it again; outputs appear whole or not at all"
    if isinstance(error, OSError) and error.filename is not None:
        return f"{error.filename}: {error.strerror or error}", "check the path and its permissions"
    if isinstance(error, OSError) and error.errno == errno.EADDRINUSE:
        return f"address in use: {error.strerror or error}", "stop what listens there or choose another --port"
    first = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"unexpected {type(error).__name__}{': ' + first if first else ''}", f"run again with {VERBOSE} for the traceback"


def _default_hint(error: IngestError) -> str:
    if isinstance(error, FetchError):
        return "the source did not answer as expected; a later run retries" if error.retryable else "check the URL"
    if isinstance(error, NotFoundError):
        return "check the name or id"
    if isinstance(error, ParseError):
        return "the input is not in the expected format"
    if isinstance(error, ConfigError):
        return "fix the setting or registry entry it names"
    return f"run again with {VERBOSE} for the traceback"


def main(argv: list[str] | None = None) -> int:
    global _verbose
    argv = list(sys.argv[1:] if argv is None else argv)
    options = argv[:argv.index("--")] if "--" in argv else argv
    _verbose = VERBOSE in options
    if _verbose:
        argv.remove(VERBOSE)
    _configure_logging()
    command = argv[0] if argv and argv[0] in COMMANDS else None
    prog = f"ingest-assets {command}" if command else "ingest-assets"
    try:
        if command:
            module, function, _ = COMMANDS[command]
            status = getattr(import_module(f"ingest_assets.cli.{module}"), function)(argv[1:]) or 0
        else:
            status = _top_level(argv)
        sys.stdout.flush()  # inside the try: a pipe closed since the last write fails here, not at exit
        return status
    except BrokenPipeError:  # the reader went away (`ingest-assets lineage ... | head`): end quietly, any command
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the interpreter's last flush goes nowhere
        return READER_GONE
    except SystemExit as exc:  # --help, or a parser that is not a Parser
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001 - every error is one line (the point of main)
        if _verbose:
            traceback.print_exc()
        problem, hint = describe(exc)
        print(f"{prog}: {' '.join(problem.split())}; hint: {' '.join(hint.split())}", file=sys.stderr)
        return exit_status(exc)


def _top_level(argv: list[str]) -> int:
    parser = Parser(prog="ingest-assets", description=DESCRIPTION)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (_, _, help_text) in COMMANDS.items():  # listed in --help; a known command is handed on in main
        commands.add_parser(name, help=f"{help_text} (see: ingest-assets {name} --help)")
    if argv and not argv[0].startswith("-"):
        raise UsageError(f"unknown command {argv[0]!r}", hint=f"commands: {', '.join(COMMANDS)}")
    parser.parse_args(argv)
    return 2


OWN_LOGGER = "ingest_assets"


class _OwnWarnings(logging.Filter):
    """Without ``--verbose``: this package's warnings (a retry, a fallback it took) and every library's errors; the
    libraries' own warnings (urllib3's retries, the search clients' transports) say what ours already say, less
    clearly."""

    def filter(self, record: logging.LogRecord) -> bool:
        own = record.name == OWN_LOGGER or record.name.startswith(f"{OWN_LOGGER}.")
        return _verbose or own or record.levelno >= logging.ERROR


def _configure_logging() -> None:
    """Warnings and errors on stderr (everything with ``--verbose``), no INFO chatter; of the other libraries only
    errors unless ``--verbose``. A process whose logging is already set up (a test runner) keeps its handlers."""
    root = logging.getLogger()
    if not root.handlers:
        logging.basicConfig(format="%(levelname)s %(name)s: %(message)s")
        root.handlers[0].addFilter(_OwnWarnings())
    if any(isinstance(f, _OwnWarnings) for handler in root.handlers for f in handler.filters):
        root.setLevel(logging.DEBUG if _verbose else logging.WARNING)
