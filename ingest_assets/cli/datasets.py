"""Command-line entry points the main CLI wires in: ``submit`` (queue for the sensor) and ``process`` (now)."""

from __future__ import annotations

import argparse
import json
import tempfile
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import get_args

from ingest_assets.core.registry import DatasetsBlock, load_registry
from ingest_assets.datasets.detect import PlatformHosts
from ingest_assets.datasets.ingest import make_context, parse_request_lines, run_requests
from ingest_assets.datasets.model import IngestRequest
from ingest_assets.core.errors import ValidationError
from ingest_assets.core.settings import Settings
from ingest_assets.core.sql import make_engine
from ingest_assets.storage import Storage, open_storage
from ingest_assets.storage.layout import dataset_key, next_free_second

PLATFORMS = get_args(DatasetsBlock.model_fields["platform"].annotation)


def submit(requests_jsonl: str | Path, *, storage: Storage | None = None) -> dict:
    """Check a JSON-lines requests file and drop it into the requests folder the sensor watches.

    Raises :class:`ValidationError` (naming file and line) when no line is a valid request.
    """
    source = Path(requests_jsonl)
    with open(source, encoding="utf-8") as handle:
        parsed = list(parse_request_lines(handle, str(source)))
    valid = sum(isinstance(p, IngestRequest) for p in parsed)
    if not valid:
        problems = "; ".join(p.error_message or "" for p in parsed[:3]) or "file is empty"
        raise ValidationError(f"no valid dataset request: {problems}", file=str(source))
    storage = storage or open_storage(Settings.current().storage_url)
    started = datetime.now(timezone.utc)
    key = dataset_key("requests", f"{uuid.uuid4().hex[:12]}-{source.stem}.jsonl", started)
    storage.write_file(key, source)
    return {"key": key, "valid": valid, "invalid": len(parsed) - valid}


def process(requests_jsonl: str | Path, *, settings: Settings | None = None, allow_private: bool = False,
            hosts: dict[str, tuple[str, ...]] | None = None) -> dict:
    """Process a requests file at once (no Dagster); returns the results key and counts per status.

    Platform hosts come from the registry's ``datasets:`` blocks (when the registry file exists) and ``hosts``;
    ``allow_private`` lets every host resolve to a private address (a registry block lets its own hosts)."""
    settings = settings or Settings.current()
    storage = open_storage(settings.storage_url)
    registry = load_registry(settings.registry_path).values() if settings.registry_path.is_file() else ()
    ctx = make_context(
        storage,
        make_engine(settings.database_url),
        allow_private=allow_private,
        platform_hosts=PlatformHosts.of(registry, hosts),
        ia_access_key=settings.secret("IA_ACCESS_KEY"),
        ia_secret_key=settings.secret("IA_SECRET_KEY"),
    )
    name = f"{Path(requests_jsonl).stem}.jsonl"
    started = next_free_second(datetime.now(timezone.utc),
                               lambda moment: not storage.exists(dataset_key("results", name, moment)))
    key = dataset_key("results", name, started)
    with open(requests_jsonl, encoding="utf-8") as handle, tempfile.NamedTemporaryFile("w+", suffix=".jsonl") as out:
        summary = run_requests(handle, ctx, str(requests_jsonl), out)
        out.flush()
        storage.write_file(key, out.name)
    return {"results": key, "status": dict(sorted(summary.by_status.items()))}


def _platform_host(text: str) -> tuple[str, str]:
    platform, _, host = text.partition("=")
    if platform not in PLATFORMS or not host:
        raise argparse.ArgumentTypeError(f"expected PLATFORM=HOST with PLATFORM one of {', '.join(PLATFORMS)}")
    return platform, host.lower()


def main(argv: list[str] | None = None) -> int:
    """``ingest-assets datasets submit|process FILE.jsonl [--allow-private] [--host PLATFORM=HOST ...]``."""
    from ingest_assets.cli.main import Parser

    parser = Parser(
        prog="ingest-assets datasets", description="Queue (submit) or run now (process) a file of dataset ingest requests."
    )
    parser.add_argument("command", choices=["submit", "process"])
    parser.add_argument("requests", type=Path, help="JSON lines: {ingest_type: dataset, base_url: ...}")
    parser.add_argument("--allow-private", action="store_true",
                        help="process: let every host resolve to a loopback/private address (a registry datasets: "
                             "block with allow_private lets only its own hosts)")
    parser.add_argument("--host", type=_platform_host, action="append", default=[], metavar="PLATFORM=HOST",
                        help="process: a host of a platform's own, e.g. zenodo=data.example.org (repeatable; "
                             "the registry's datasets: blocks add theirs)")
    args = parser.parse_args(argv)
    if args.command == "submit":
        result = submit(args.requests)
    else:
        hosts: dict[str, tuple[str, ...]] = {}
        for platform, host in args.host:
            hosts[platform] = (*hosts.get(platform, ()), host)
        result = process(args.requests, allow_private=args.allow_private, hosts=hosts)
    print(json.dumps(result, indent=2))
    return 0
