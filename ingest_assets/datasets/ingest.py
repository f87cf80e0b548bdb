"""One dataset ingest request end to end: fetch -> platform -> manifest -> strategy -> archive -> result.

With a change feed, what a request stores is published at paths stable across captures of the item:
``web/<item>.warc.gz`` (the WARC) or ``items/<item>/<file>`` (the item folder's files), so a re-stored
dataset arrives as ``updated``.
"""

from __future__ import annotations

import json
import mimetypes
import shutil
import tempfile
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import IO
from urllib.parse import unquote, urlsplit

from sqlalchemy import Engine

from ingest_assets.core import json_input
from ingest_assets.core.archives import Limits
from ingest_assets.datasets.deposit import (
    ArchiveOrgUploader,
    item_file_names,
    item_metadata,
    item_name,
    write_item_folder,
    write_warc,
)
from ingest_assets.datasets.bundle import BundleEntry, list_bundle
from ingest_assets.datasets.detect import PlatformHosts, doi_url, match_url, normalize_doi, parse_landing
from ingest_assets.datasets.download import Capture, download
from ingest_assets.datasets.fetch import RecordingClient, Terminal, fetch_terminal
from ingest_assets.datasets.hashing import mismatch
from ingest_assets.datasets.model import FilesetResult, IngestRequest, ManifestFile, PlatformManifest
from ingest_assets.datasets.platforms import PlatformConfig, builder_for
from ingest_assets.datasets.results import ResultStore, RunSummary, write_result_line
from ingest_assets.datasets.status import (
    SUCCESS,
    SUCCESS_EXISTING,
    SUCCESS_FILE,
    SUCCESSES,
    DatasetIngestFailure,
    is_retryable,
)
from ingest_assets.datasets.strategy import Thresholds, choose_strategy
from ingest_assets.core.errors import IngestError, ValidationError
from ingest_assets.core.http import HttpClient
from ingest_assets.resourcesync.feed import ChangeFeed
from ingest_assets.storage import Storage
from ingest_assets.storage.layout import dataset_key, dataset_lineage_key
from ingest_assets.core.version import software_version


@dataclass
class IngestContext:
    """Everything a request needs; built by the Dagster resource or the CLI."""

    client: HttpClient
    storage: Storage
    store: ResultStore
    thresholds: Thresholds = field(default_factory=Thresholds)
    platforms: PlatformConfig = field(default_factory=PlatformConfig)
    hosts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    doi_resolver: str = "https://doi.org"
    landing_max_bytes: int = 16 * 1024 * 1024
    bundle_limits: Limits = field(default_factory=Limits)
    uploader: ArchiveOrgUploader | None = None
    workdir: Path | None = None
    feed: ChangeFeed | None = None  # publishes the stored files


def make_context(
    storage: Storage,
    engine: Engine,
    *,
    allow_private: bool = False,
    platform_hosts: PlatformHosts = PlatformHosts(),
    ia_access_key: str | None = None,
    ia_secret_key: str | None = None,
    **options,
) -> IngestContext:
    """A context on ``storage`` and a results database; ``platform_hosts`` adds platform hosts (and the hosts
    reached on private addresses); archive.org upload only when both keys are given."""
    uploader = ArchiveOrgUploader(ia_access_key, ia_secret_key) if ia_access_key and ia_secret_key else None
    return IngestContext(
        client=HttpClient(allow_private=allow_private, private_hosts=platform_hosts.private),
        storage=storage,
        store=ResultStore(engine),
        uploader=uploader,
        hosts=platform_hosts.hosts,
        **options,
    )


def ingest_request(request: IngestRequest, ctx: IngestContext) -> FilesetResult:
    """Process one request once: an earlier success -> ``success-existing``, an earlier final failure is
    returned as it was; retryable failures and ``force_recrawl`` requests are processed again."""
    if not request.force_recrawl:
        existing = ctx.store.get(request.ingest_type, request.base_url)
        if existing is not None and existing.status in SUCCESSES:
            return replace(existing, status=SUCCESS_EXISTING)
        if existing is not None and not is_retryable(existing.status):
            return existing
    result = FilesetResult(ingest_type=request.ingest_type, base_url=request.base_url, status="")
    try:
        _process(request, ctx, result)
    except DatasetIngestFailure as failure:
        result.status, result.error_message, result.hit = failure.status, failure.message, False
        if "terminal_status_code" in failure.extra and result.terminal_status_code is None:
            result.terminal_status_code = failure.extra["terminal_status_code"]
    except (IngestError, KeyError, TypeError, ValueError, AttributeError) as exc:  # malformed platform answer
        result.status, result.hit = "platform-error", False
        result.error_message = f"{type(exc).__name__}: {exc} (record {request.base_url!r})"
    except OSError as exc:  # local disk or storage backend
        result.status, result.hit = "storage-error", False
        result.error_message = f"{type(exc).__name__}: {exc} (record {request.base_url!r})"
    ctx.store.upsert(result)
    lineage = {**json.loads(result.to_json(request, is_retryable(result.status))), "software_version": software_version()}
    ctx.storage.write_bytes(dataset_lineage_key(request.ingest_type, request.base_url),
                            json.dumps(lineage, indent=2, sort_keys=True).encode(), overwrite=True)
    return result


def _process(request: IngestRequest, ctx: IngestContext, result: FilesetResult) -> None:
    doi = normalize_doi(request.base_url)
    start_url = request.base_url if request.base_url.startswith(("http://", "https://")) else None
    if start_url is None:
        if doi is None:
            raise DatasetIngestFailure("invalid-request", f"base_url {request.base_url!r} is neither a URL nor a DOI")
        start_url = doi_url(doi, ctx.doi_resolver)
    terminal = fetch_terminal(ctx.client, start_url, landing_max_bytes=ctx.landing_max_bytes)
    result.terminal_url, result.terminal_dt, result.terminal_status_code = terminal.url, terminal.dt, terminal.status
    result.terminal_sha1hex, result.hops = terminal.sha1hex, terminal.hops

    manifest = _manifest(request, ctx, terminal, result)
    result.platform, result.platform_domain = manifest.platform, manifest.platform_domain
    result.platform_id = manifest.platform_id
    result.manifest = [f.to_dict() for f in manifest.files]
    check_file_names([f.path for f in manifest.files], manifest.platform_id)
    result.file_count, result.total_size = len(manifest.files), manifest.total_size
    strategy = choose_strategy(manifest, ctx.thresholds)
    result.ingest_strategy = strategy
    try:
        _archive(ctx, manifest, strategy, result)
    finally:  # a bundle adds its interior files; failures mark the file that failed
        result.manifest = [f.to_dict() for f in manifest.files]
        result.file_count, result.total_size = len(manifest.files), manifest.total_size
    if manifest.platform == "direct" and len(manifest.files) == 1:
        result.terminal_sha1hex = manifest.files[0].sha1
    result.status = SUCCESS_FILE if strategy.endswith("-file") else SUCCESS
    result.hit = True


MAX_NAME_BYTES = 255  # one path segment (the common file-system limit)
MAX_PATH_BYTES = 1024


def check_file_names(paths: list[str], record: str) -> None:
    """A platform's file names become storage keys and item paths: relative, no ``..``, no empty or over-long
    segment, no name that is also a folder of another file (files sharing a name get suffixes later). Anything
    else is a final ``unsafe-file-name`` naming the file (a retry would meet the same name)."""
    def refuse(path: str, why: str):
        raise DatasetIngestFailure("unsafe-file-name", f"{record}: file name {path!r} {why}")

    seen: set[str] = set()
    for path in paths:
        if not isinstance(path, str) or not path:
            refuse(str(path), "is empty")
        if path.startswith("/") or "\\" in path or any(ord(c) < 32 for c in path):
            refuse(path, "is absolute or holds a backslash or control character")
        segments = path.split("/")
        if any(s in ("", ".", "..") for s in segments):
            refuse(path, "has an empty, '.' or '..' segment")
        if len(path.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES or any(
                len(s.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES for s in segments):
            refuse(path, f"is longer than {MAX_NAME_BYTES} bytes per segment or {MAX_PATH_BYTES} in all")
        seen.add(path)
    folders = {"/".join(p.split("/")[:n]) for p in seen for n in range(1, p.count("/") + 1)}
    for path in sorted(seen & folders):
        refuse(path, "is both a file and a folder of other files")


def _manifest(
    request: IngestRequest, ctx: IngestContext, terminal: Terminal, result: FilesetResult
) -> PlatformManifest:
    """Detect the platform (URL patterns, then landing-page DOIs resolved) and build its manifest."""
    match = match_url(terminal.url, ctx.hosts) or match_url(request.base_url, ctx.hosts)
    items: list[tuple[str, str | None]] = []
    if match is None and terminal.is_html:
        hints = parse_landing(terminal.body or b"", terminal.url, terminal.headers.get("Link"))
        items = hints.items
        for doi in hints.dois[:3]:
            resolved = fetch_terminal(
                ctx.client, doi_url(doi, ctx.doi_resolver), landing_max_bytes=ctx.landing_max_bytes
            )
            if match := match_url(resolved.url, ctx.hosts):
                break
    if match is not None:
        result.platform, result.platform_domain = match.platform, match.domain
        result.platform_id = match.platform_id
        client = RecordingClient(ctx.client)
        try:
            return builder_for(match.platform)(client, match, ctx.platforms)
        finally:
            result.api_responses = client.responses
    if items:
        return _signposting_manifest(terminal, items)
    if not terminal.is_html:
        return _direct_manifest(terminal)
    raise DatasetIngestFailure("no-platform-match", f"no dataset platform recognised at {terminal.url}")


def _file_name(url: str) -> str:
    return unquote(urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1]) or "file"


def _direct_manifest(terminal: Terminal) -> PlatformManifest:
    length = terminal.headers.get("Content-Length")
    host = urlsplit(terminal.url).hostname or "unknown"
    entry = ManifestFile(
        path=_file_name(terminal.url),
        platform_url=terminal.url,
        size=int(length) if length and length.isdigit() else None,
        mimetype=terminal.mimetype or None,
    )
    return PlatformManifest("direct", host, terminal.url, [entry])


def _signposting_manifest(terminal: Terminal, items: list[tuple[str, str | None]]) -> PlatformManifest:
    """Signposting ``rel=item`` links of a landing page no platform helper knows: the files it declares."""
    host = urlsplit(terminal.url).hostname or "unknown"
    files = [ManifestFile(path=_file_name(url), platform_url=url, mimetype=kind) for url, kind in items]
    return PlatformManifest("signposting", host, terminal.url, files)


def _verify(entry: ManifestFile, capture: Capture) -> None:
    """Fill in what was fetched and check it against the platform's declaration."""
    digests = capture.digests
    declared = {"md5": entry.md5, "sha1": entry.sha1, "sha256": entry.sha256}
    problem = mismatch(entry.size, declared, digests)
    entry.terminal_url, entry.terminal_dt = capture.url, capture.dt
    entry.status = problem or "success"
    if problem:
        received = {"md5": digests.md5, "sha1": digests.sha1, "sha256": digests.sha256}
        what = problem.removeprefix("mismatch-")
        said, got = (entry.size, digests.size) if what == "size" else (declared[what], received[what])
        raise DatasetIngestFailure(problem, f"{entry.path}: {problem}: declared {said}, received {got} "
                                            f"({digests.size} bytes from {capture.url})")
    entry.size, entry.md5, entry.sha1, entry.sha256 = digests.size, digests.md5, digests.sha1, digests.sha256
    entry.mimetype = entry.mimetype or capture.mimetype


def _fetch(ctx: IngestContext, url: str, target: Path, declared: int | None, budget: int, what: str) -> Capture:
    """Download with a byte limit: the declared size (more is mismatch-size) or what is left of the budget."""
    try:
        return download(ctx.client, url, target, max_bytes=budget if declared is None else declared, what=what)
    except DatasetIngestFailure as failure:
        if declared is None and failure.status == "mismatch-size":
            raise DatasetIngestFailure("too-large-size", failure.message) from failure
        raise


def _archive(ctx: IngestContext, manifest: PlatformManifest, strategy: str, result: FilesetResult) -> None:
    started = datetime.now(timezone.utc)
    name = item_name(manifest.platform, manifest.platform_domain, manifest.platform_id)
    unique = f"{name}-{uuid.uuid4().hex[:8]}"  # two captures of one item may start in the same second
    with tempfile.TemporaryDirectory(prefix="dataset-", dir=ctx.workdir) as tmp:
        stored = _fetch_all(ctx, manifest, strategy, name, Path(tmp), result)
        if strategy.startswith("web-"):
            key = dataset_key("web", f"{unique}.warc.gz", started)
            for (path, _capture), location in zip(stored, write_warc(ctx.storage, key, [c for _, c in stored])):
                for entry in manifest.files:
                    if entry.path == path or strategy.endswith("-bundled"):
                        entry.extra.update(location)
            if ctx.feed is not None:
                local = Path(tmp) / "published.warc.gz"
                with ctx.storage.open_read(key) as source, open(local, "wb") as target:
                    shutil.copyfileobj(source, target, 1024 * 1024)
                ctx.feed.put(f"web/{name}.warc.gz", local, started, "application/warc")
        else:
            if not strategy.endswith("-bundled"):  # files sharing a name (or one of the item's own) get a suffix
                names = item_file_names(name, [path for path, _ in stored])
                stored = [(stored_name, capture) for stored_name, (_, capture) in zip(names, stored)]
                for entry, stored_name in zip(manifest.files, names):
                    if stored_name != entry.path:
                        entry.extra["item_path"] = stored_name
            metadata = item_metadata(manifest.archiveorg_metadata, ctx.platforms.archiveorg_collection)
            write_item_folder(ctx.storage, dataset_key("items", unique, started), name, metadata, stored)
            result.item_name = name
            for stored_name, capture in stored if ctx.feed is not None else ():
                mime = mimetypes.guess_type(stored_name)[0] or "application/octet-stream"  # as the server serves it
                ctx.feed.put(f"items/{name}/{stored_name}", capture.path, started, mime)
            if ctx.uploader is not None:
                ctx.uploader.upload(name, metadata, stored)


def _fetch_all(ctx: IngestContext, manifest: PlatformManifest, strategy: str, name: str, tmp: Path,
               result: FilesetResult) -> list[tuple[str, Capture]]:
    """The item's bundle (verified against the declared files) or each declared file (verified), within the size
    limit, as ``(name, capture)`` pairs."""
    limit = ctx.thresholds.max_total_size
    if strategy.endswith("-bundled"):
        capture = _fetch(ctx, manifest.bundle_url, tmp / "bundle", None, limit, name)
        bundle_name = _file_name(capture.url) if "." in _file_name(capture.url) else f"{name}.zip"
        bundle_name = item_file_names(name, [bundle_name])[0]
        _verify_bundle(manifest, list_bundle(capture.path, ctx.bundle_limits, bundle_name), capture, bundle_name)
        result.item_bundle_path = bundle_name
        return [(bundle_name, capture)]
    stored: list[tuple[str, Capture]] = []
    fetched = 0
    for index, entry in enumerate(manifest.files):
        capture = _fetch(ctx, entry.platform_url, tmp / f"{index:05d}", entry.size, limit - fetched, entry.path)
        _verify(entry, capture)
        fetched += capture.digests.size
        stored.append((entry.path, capture))
    return stored


def _verify_bundle(
    manifest: PlatformManifest, entries: list[BundleEntry], capture: Capture, bundle_name: str
) -> None:
    """Match bundle entries to declared files (by path, else a unique basename), verify them, and add the
    bundle's other entries (a Dataverse MANIFEST.TXT, in-bundle links) to the manifest."""
    by_path = {e.path: e for e in entries}
    by_base: dict[str, list[BundleEntry]] = {}
    for e in entries:
        by_base.setdefault(e.path.rsplit("/", 1)[-1], []).append(e)
    used = set()
    for entry in manifest.files:
        same_base = by_base.get(entry.path.rsplit("/", 1)[-1], [])
        found = by_path.get(entry.path) or (same_base[0] if len(same_base) == 1 else None)
        if found is None or found.digests is None:
            entry.status = "bundle-incomplete"
            raise DatasetIngestFailure("bundle-incomplete", f"bundle {bundle_name} lacks {entry.path}")
        used.add(found.path)
        entry.mimetype = entry.mimetype or found.mimetype  # declared by the platform, else its own (not the zip's)
        _verify(entry, replace(capture, digests=found.digests))
        entry.extra["bundle_path"] = found.path
    for other in (e for e in entries if e.path not in used):
        digests = other.digests
        extra = {"bundle_path": other.path, "bundle_only": True}
        if other.link_target is not None:
            extra["link_target"] = other.link_target
        manifest.files.append(
            ManifestFile(
                path=other.path,
                platform_url=capture.url,
                size=digests.size if digests else None,
                md5=digests.md5 if digests else None,
                sha1=digests.sha1 if digests else None,
                sha256=digests.sha256 if digests else None,
                mimetype=other.mimetype,
                status="success" if digests else "link",
                terminal_url=capture.url,
                terminal_dt=capture.dt,
                extra=extra,
            )
        )
    for entry in manifest.files:
        entry.extra["bundle"] = bundle_name


def parse_request_lines(lines: Iterable[str], source: str) -> Iterable[IngestRequest | FilesetResult]:
    """Requests from JSON lines; a bad line yields an ``invalid-request`` result naming file and line."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield IngestRequest.from_dict(json_input.loads(line), file=source, record=f"line {number}")
        except (ValueError, ValidationError) as exc:
            if isinstance(exc, ValidationError):
                message = str(exc)
            else:
                message = f"bad JSON: {exc} (file {source!r}, line {number})"
            yield FilesetResult(ingest_type="dataset", base_url="", status="invalid-request", error_message=message)


def run_requests(lines: Iterable[str], ctx: IngestContext, source: str, stream: IO[str]) -> RunSummary:
    """Process every request of a JSON-lines source; each result goes to the table and to ``stream``."""
    summary = RunSummary()
    for item in parse_request_lines(lines, source):
        request = item if isinstance(item, IngestRequest) else None
        result = ingest_request(request, ctx) if request is not None else item
        write_result_line(stream, request, result)
        summary.add(result)
    return summary
