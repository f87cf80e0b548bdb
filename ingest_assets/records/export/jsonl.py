"""The JSON-L export DPLA's indexer reads (contract 2 of DPLA's pipeline documents; ingestion3's ``JsonlExecutor``).

For a provider and day it writes the provider's published records as of that day, one DPLA API document a line::

    <export root>/<s3 prefix>/jsonl/<yyyyMMdd_HHmmss>-<provider>-MAP3_1.IndexRecord.jsonl/
        part-00000.gz, part-00001.gz ...   gzipped JSON-L, up to PART_BYTES each (Spark reads every file
                                           whose name does not start with _ or ., gzip by the suffix)
        _MANIFEST                          Activity, Provider, Record count, Input ... (``Key: value`` lines)
        _SUCCESS                           written last: the folder is complete

sparkindexer takes the newest folder with ``_SUCCESS`` (by name) as the hub's whole dataset, so an export holds
the provider's complete published state (:class:`PublishedState`), and its name sorts by the day whose state it
holds (:func:`export_stamp`). A line is what ingestion3's ``jsonlRecord`` writes, ``{"_id", "_source", "_type"}``,
its ``_source`` the index document of ``records/indexing/documents.py`` with what the JSON-L adds
(:func:`jsonl_source`). Memory stays flat: records stream, one batch of lines at a time.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from itertools import islice

from ingest_assets.core.errors import IngestError, ValidationError
from ingest_assets.core.registry import ProviderEntry, Registry
from ingest_assets.core.version import software_version
from ingest_assets.records.indexing.documents import dumps, index_document
from ingest_assets.records.mapping import minter_for
from ingest_assets.records.publishing.review import PUBLISHED, Ledger
from ingest_assets.records.snapshot import deleted_ids
from ingest_assets.storage import layout
from ingest_assets.storage.activities import RecordSource, source_from_path
from ingest_assets.storage.backends import FolderWriter, Storage
from ingest_assets.storage.manifest import Manifest
from ingest_assets.storage.snapshot import snapshot_records, snapshot_sources

PART_BYTES = 128 * 1024 * 1024  # gzipped bytes a part grows to (a gzip file is one Spark task: one HDFS block)
GZIP_LEVEL = 6  # Hadoop's GzipCodec writes zlib's default level, as Spark's text writer does with compression=gzip
BATCH = 512  # lines compressed per write
SUCCESS = "_SUCCESS"
ACTIVITY = "JSON-L"  # the _MANIFEST's Activity, as ingestion3 writes it
MAX_FAILURES = 20  # records that could not be rendered, named in the result (all are counted)


def s3_prefix(registry: Registry, provider: str) -> str:
    """The provider's folder under the export root: its registry ``s3_prefix``, else its name. Two record
    providers with one prefix would overwrite each other's dataset in DPLA's index: a ConfigError."""
    def prefix(entry: ProviderEntry) -> str:
        return entry.settings.s3_prefix or entry.name

    mine = prefix(registry[provider])
    for other in registry.providers_of("records"):
        if other != provider and prefix(registry[other]) == mine:
            raise registry[provider].error(f"{provider}.s3_prefix", f"{mine!r} is also the JSON-L folder of {other!r}")
    return mine


def jsonl_source(record: dict, base_id: Callable[[str], str]) -> dict:
    """A line's ``_source``: the record's index document and where the JSON-L differs from it, as ingestion3's
    ``jsonlRecord`` writes it: ``_id``, what the DPLA id is minted from (its prehashId); ``originalRecord`` as
    ``{"stringValue": ...}`` (DPLA's API serves the original record; the search index leaves it out to stay
    small); ``intermediateProvider`` one name (ingestion3's model holds one, DPLA's API serves a string)."""
    source = index_document(record)
    local_id = record.get("originalId")
    if not isinstance(local_id, str) or not local_id:
        raise ValidationError("MAPRecord has no originalId (the local id its _id is made of)", record=source["id"])
    source["_id"] = base_id(local_id)
    source["originalRecord"] = {"stringValue": record.get("originalRecord") or ""}
    if "intermediateProvider" in source:
        source["intermediateProvider"] = source["intermediateProvider"][0]
    return source


def jsonl_line(record: dict, base_id: Callable[[str], str]) -> str:
    """One line of the export: ``{"_id": <prehashId>, "_source": <document>, "_type": "item"}``."""
    source = jsonl_source(record, base_id)
    return dumps({"_id": source["_id"], "_source": source, "_type": "item"})


class PublishedState:
    """``entry``'s records as of ``day``, as the published state is made (``storage.snapshot``): each day's newest
    enrichment output up to ``day``, newest first, walked back to the one of a full harvest (``sources``);
    ``exclude``: days never published; each record's newest version, the harvests' deletions applied, records under
    a takedown left out (``kept_out`` counts them once iterated)."""

    def __init__(self, storage: Storage, entry: ProviderEntry, day: date, *, exclude: set[date], suppressed: set[str]):
        self.sources = snapshot_sources(storage, entry.name, day, "enrichment", exclude)
        self.mint, self.suppressed, self.kept_out = minter_for(entry), suppressed, 0

    def __iter__(self) -> Iterator[dict]:
        for record in snapshot_records(self.sources, hidden=lambda source: deleted_ids(self.mint, source)):
            if record["id"] in self.suppressed:
                self.kept_out += 1
            else:
                yield record


def refusal(storage: Storage, ledger: Ledger, provider: str, day: date, enriched: RecordSource) -> str:
    """Why ``provider``'s ``day`` may not be exported ('' when it may). A day is exported once it is published
    (its run passed every blocking check, its review and the index gates), from the outputs that were published:
    the day's newest indexing output, made from ``enriched``, its newest enrichment output."""
    where = f"{provider} {day.isoformat()}"
    state = ledger.get(provider, day)
    if state is None:
        return (f"{where} was never reported for publishing: its run stopped at a failed check, or did not index "
                "the day")
    if state.state != PUBLISHED:
        return f"{where} is {state.state.replace('_', ' ')}, not published"
    indexing = layout.latest_output(storage, provider, "indexing", day)
    if indexing is None or indexing.folder != state.output:
        newer = indexing.folder if indexing else "none"
        return f"{where}: the published indexing output is {state.output}, the day's newest is {newer}"
    made_from = source_from_path(storage, state.output, "enrichment")
    if made_from.output != enriched.output:
        return f"{where}: the day's newest enriched output {enriched.key} is not the published one ({made_from.key})"
    return ""


def export_stamp(target: Storage, prefix: str, day: date, started: datetime) -> datetime:
    """The time in the export's folder name: ``day`` at the UTC time of day the export started, one second after
    the day's newest export when that is later. Names sort by the day whose state they hold, so an older day
    exported after a newer one never becomes the newest."""
    stamp = datetime.combine(day, started.astimezone(UTC).time().replace(microsecond=0), tzinfo=UTC)
    taken = [parsed[0] for name in target.list_children(layout.jsonl_exports(prefix))
             if (parsed := layout.parse_jsonl_export(name)) and parsed[0].date() == day]
    if taken and max(taken) >= stamp:
        stamp = max(taken) + timedelta(seconds=1)
    if stamp.date() != day:
        raise IngestError(f"no second of {day.isoformat()} is left for another JSON-L export", file=prefix)
    return stamp


def newest_export(target: Storage, prefix: str) -> str | None:
    """The export sparkindexer would read: the complete folder (with ``_SUCCESS``) whose name sorts last."""
    folder = layout.jsonl_exports(prefix)
    names = sorted((n for n in target.list_children(folder) if layout.parse_jsonl_export(n)), reverse=True)
    return next((f"{folder}/{n}" for n in names if target.is_complete(f"{folder}/{n}", SUCCESS)), None)


@dataclass
class JsonlExport:
    folder: str
    uri: str
    records: int
    parts: list[str]
    bytes: int
    failed: int = 0
    failures: list[str] = field(default_factory=list)  # the first MAX_FAILURES, "<id>: <why>"


class _Lines:
    """The export's lines; a record that cannot be rendered is counted and named, the others go on."""

    def __init__(self, records: Iterable[dict], base_id: Callable[[str], str]):
        self.records, self.base_id = records, base_id
        self.failed, self.failures = 0, []

    def __iter__(self) -> Iterator[str]:
        for record in self.records:
            try:
                yield jsonl_line(record, self.base_id)
            except ValidationError as exc:
                self.failed += 1
                if len(self.failures) < MAX_FAILURES:
                    self.failures.append(f"{record.get('id')}: {exc.message}")


def export_jsonl(target: Storage, folder: str, records: Iterable[dict], base_id: Callable[[str], str], *,
                 provider: str, partition: str, started: datetime, inputs: list[str],
                 summary: Callable[[], dict] | None = None, part_bytes: int = PART_BYTES) -> JsonlExport:
    """Write ``records`` (MAPRecord dicts) into ``folder`` of ``target``: the parts, then ``_MANIFEST``, then
    ``_SUCCESS``. Nothing of a failed export is visible (local: staged, then one rename; S3: ``_SUCCESS`` last,
    the parts deleted). An export without a record is refused: sparkindexer would drop the hub from DPLA's index."""
    lines = _Lines(records, base_id)
    stream = iter(lines)
    first = next(stream, None)
    if first is None:
        raise ValidationError(f"no record to export (failed: {lines.failed}): an empty JSON-L export would take the "
                              "hub out of DPLA's index", provider=provider, file=target.uri(folder))
    with target.folder(folder, marker=SUCCESS) as writer:
        parts, count = _write_parts(writer, first, stream, part_bytes)
        extra = {"Summary failed": str(lines.failed), "Summary parts": str(len(parts)),
                 **{f"Summary {k}": str(v) for k, v in (summary() if summary else {}).items()}}
        manifest = Manifest(activity=ACTIVITY, provider=provider, schema=layout.JSONL_SCHEMA, record_count=count,
                            start_time=started, software_version=software_version(), partition=partition,
                            inputs=inputs, extra=extra)
        writer.write_bytes(layout.MANIFEST, manifest.to_bytes())
        writer.write_bytes(SUCCESS, b"")
        size = writer.bytes_written
    return JsonlExport(folder, target.uri(folder), count, parts, size, lines.failed, lines.failures)


def _write_parts(writer: FolderWriter, line: str | None, lines: Iterator[str], part_bytes: int) -> tuple[list[str], int]:
    """Gzipped parts of ``line`` and ``lines``, a new part once one holds ``part_bytes``; ``(names, lines)``."""
    parts, count = [], 0
    while line is not None:
        name = f"part-{len(parts):05d}.gz"
        with writer.open(name) as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=GZIP_LEVEL,
                                                     mtime=0) as part:
            while True:  # a part holds at least one batch
                batch = [line, *islice(lines, BATCH - 1)]
                part.write(("\n".join(batch) + "\n").encode("utf-8"))
                count += len(batch)
                line = next(lines, None)
                if line is None or raw.tell() >= part_bytes:
                    break
        parts.append(name)
    return parts, count

