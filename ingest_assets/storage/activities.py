"""Writing and reading whole record activities: Avro folder, ``_LOGS``, ``_MANIFEST``, prov and plan files."""

from __future__ import annotations

import contextlib
import errno
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from typing import Any

from ingest_assets.core.errors import ConfigError, StorageError, StorageLimitError
from ingest_assets.storage import layout
from ingest_assets.storage.avro import WriteStats, part_keys, read_folder, schema_with_doc, write_parts
from ingest_assets.storage.backends import FolderWriter, Storage
from ingest_assets.storage.manifest import Manifest, plan_document, prov_document
from ingest_assets.core.version import software_version


# errno of a write the storage refused for lack of room -> (what happened, whether a retry can help)
LIMITS = {
    errno.ENOSPC: ("storage full", True),
    errno.EDQUOT: ("storage quota exceeded", True),
    errno.EFBIG: ("file-size limit reached", False),
}


@dataclass
class RecordSource:
    """A lazy, re-iterable view of one complete activity output."""

    storage: Storage
    output: layout.ActivityOutput

    def __iter__(self) -> Iterator[dict]:
        return read_folder(self.storage, self.output.folder)

    @property
    def key(self) -> str:
        return self.output.folder

    @property
    def uri(self) -> str:
        return self.storage.uri(self.output.folder)

    def manifest(self) -> Manifest:
        return Manifest.from_bytes(self.storage.read_bytes(self.output.manifest))


@dataclass
class RecordStream:
    """What a record activity produces: records (an iterator) plus what to say about them afterwards.

    ``logs`` and ``summary`` are called after ``records`` is exhausted (reports are complete then); a log is
    bytes or an iterable of byte chunks (written as it streams).
    ``write``, when given, writes the part files itself instead of ``records`` (the Spark engine).
    ``committed``, when given, is called with the output once it is whole (folder, prov and plan entry).
    """

    records: Iterable[dict]
    inputs: Sequence[RecordSource] = ()
    started: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    logs: Callable[[], Mapping[str, bytes | Iterable[bytes]]] | None = None
    summary: Callable[[], Mapping[str, Any]] | None = None
    write: Callable[[FolderWriter, dict], WriteStats] | None = None
    committed: Callable[[layout.ActivityOutput], None] | None = None


@dataclass
class ActivityResult:
    output: layout.ActivityOutput
    uri: str
    records: int
    bytes: int | None  # None: an output written earlier (:func:`planned_output`), whose size nobody counted
    parts: list[str]
    plan: str | None
    summary: Mapping[str, Any] = field(default_factory=dict)


def write_activity(
    storage: Storage,
    stream: RecordStream,
    *,
    provider: str,
    activity: str,
    day: date,
    started: datetime,
    schema: str,
    partition: str,
    plan: PlanRef | None = None,
    version: str | None = None,
) -> ActivityResult:
    """Write one activity output atomically, then its prov file and a new plan journal entry.

    Outputs are never overwritten: if another output of the same provider, activity and day already
    holds this second, the activity takes the next free second. ``version``: the software's by default.
    """
    version = version or software_version()
    def output_at(moment: datetime) -> layout.ActivityOutput:
        return layout.activity_output(provider, activity, day, moment, layout.schema_name(schema))

    def free(moment: datetime) -> bool:
        candidate = output_at(moment)
        return not (storage.exists(candidate.folder) or storage.exists(candidate.prov))

    output = output_at(layout.next_free_second(started, free))
    inputs = [source.key for source in stream.inputs]
    doc = f"{activity} of {provider} for {day.isoformat()} by ingest-assets {version}" + (
        f"; derived from {', '.join(inputs)}" if inputs else ""
    )
    published: list[str] = []
    try:
        with storage.folder(output.folder) as folder:
            avro_schema = schema_with_doc(schema, doc)
            stats = (stream.write(folder, avro_schema) if stream.write
                     else write_parts(folder, avro_schema, stream.records, provider=provider))
            write_logs(folder, stream.logs() if stream.logs else {})
            summary = dict(stream.summary()) if stream.summary else {}
            manifest = Manifest(
                activity=activity,
                provider=provider,
                schema=output.schema,
                record_count=stats.records,
                start_time=output.started,
                software_version=version,
                partition=partition,
                inputs=inputs,
                extra={f"Summary {k}": str(v) for k, v in summary.items() if isinstance(v, (int, float, str))},
            )
            folder.write_bytes(layout.MANIFEST, manifest.to_bytes())
            size = folder.bytes_written
        published += [output.folder, output.prov]  # the prov may land even when its write fails (an answer lost)
        storage.write_bytes(output.prov, prov_document([source.output.relative for source in stream.inputs], version))
        plan_key = _journal(storage, output, plan, version) if plan else None
    except BaseException as exc:
        for key in reversed(published):  # the output is whole (folder, prov and plan entry) or absent
            with contextlib.suppress(OSError, StorageError):  # a dead backend: the next run's write takes the next second
                storage.delete(key)
        limit = LIMITS.get(exc.errno) if isinstance(exc, OSError) else None
        if limit is None:
            raise
        what, retryable = limit
        raise StorageLimitError(f"{what} while writing the {activity} output {storage.uri(output.folder)}: {exc.strerror}",
                                provider=provider, file=output.folder, retryable=retryable) from exc
    if stream.committed:
        stream.committed(output)
    return ActivityResult(output, storage.uri(output.folder), stats.records, size, stats.parts, plan_key, summary)


def write_logs(folder: FolderWriter, logs: Mapping[str, bytes | Iterable[bytes]]) -> None:
    """An activity's ``_LOGS`` files into its folder (a log of byte chunks is written as it streams)."""
    for name, data in logs.items():
        with folder.open(layout.log_name(name)) as handle:
            handle.write(data) if isinstance(data, bytes) else handle.writelines(data)


def _journal(storage: Storage, output: layout.ActivityOutput, plan: "PlanRef", version: str) -> str:
    """Add the activity to its plan: a new write-once file holding every activity of the plan so far.

    A new plan takes the first free second at or after ``plan.started`` (backfill runs of one provider
    can start in the same second); ``plan.started`` is updated to the folder actually used.
    """
    activities: dict[str, str] = {}
    if plan.new:
        plan.started = layout.next_free_second(plan.started, lambda moment: not storage.list_children(
            f"{output.provider}/{layout.PLAN}/{layout.timestamp(moment)}"))
        plan.new = False
    else:  # a re-run activity replaces its earlier output in the plan
        activities = _plan_so_far(storage, output.provider, plan)[1]
    activities[output.activity] = output.relative
    document = plan_document(activities, version)

    def written(entry: datetime) -> bool:  # activities of one plan may start within the same second and share a schema
        try:
            storage.write_bytes(layout.plan_key(output.provider, plan.started, entry, output.schema), document)
            return True
        except FileExistsError:
            return False

    return layout.plan_key(output.provider, plan.started, layout.next_free_second(output.started, written), output.schema)


@dataclass
class PlanRef:
    """The plan (one run's sequence of activities for a provider) an activity belongs to."""

    started: datetime
    new: bool = True


def _plan_so_far(storage: Storage, provider: str, plan: PlanRef) -> tuple[str | None, dict[str, str]]:
    """The newest entry of ``plan`` (it holds the plan so far) and its activities (name -> provider-relative output)."""
    entries = {key: storage.read_bytes(key) for key in layout.plan_files(storage, provider, plan.started)}
    if not entries:
        return None, {}
    # entries of one second: the one holding more activities is the later
    newest = max(entries, key=lambda k: (k.rsplit("/", 1)[1][: len("yyyymmdd_hhmmss")], len(entries[k])))
    activities = json.loads(entries[newest])
    activities.pop("version", None)
    return newest, activities


def planned_output(storage: Storage, provider: str, activity: str, plan: PlanRef,
                   inputs: Sequence[RecordSource]) -> ActivityResult | None:
    """The whole output of ``activity`` that ``plan`` already names, made from exactly ``inputs`` by this software
    version, as the result of its write: what a retried step commits instead of writing the activity a second time
    (its first attempt committed it, then failed or was killed before the step was done). None if there is none."""
    if plan.new:
        return None
    entry, activities = _plan_so_far(storage, provider, plan)
    if activity not in activities:
        return None
    try:
        output = layout.parse_output(f"{provider}/{activities[activity]}")
    except ValueError:
        return None
    if output.activity != activity or not storage.is_complete(output.folder):
        return None
    manifest = RecordSource(storage, output).manifest()
    if manifest.inputs != [source.key for source in inputs] or manifest.software_version != software_version():
        return None
    parts = [key.rsplit("/", 1)[1] for key in part_keys(storage, output.folder)]
    summary = {key.removeprefix("Summary "): _scalar(value) for key, value in manifest.extra.items()
               if key.startswith("Summary ")}
    return ActivityResult(output, storage.uri(output.folder), manifest.record_count, None, parts, entry, summary)


def _scalar(text: str) -> int | float | str:
    """A summary value as the ``_MANIFEST`` holds it (``str(value)`` of an int, float or str), typed again: a number
    only where ``str`` of that number gives back the very text (not ``"1_000"`` or ``"007"``)."""
    for kind in (int, float):
        try:
            value = kind(text)
        except ValueError:
            continue
        if str(value) == text:
            return value
    return text


def latest_source(storage: Storage, provider: str, activity: str, day: date) -> RecordSource | None:
    output = layout.latest_output(storage, provider, activity, day)
    return RecordSource(storage, output) if output else None


def source_from_path(storage: Storage, path: str, activity: str) -> RecordSource:
    """A source named by the user: a plan file (its ``activity`` entry) or an output folder, of ``activity`` or
    derived from one (an enrichment output names, through its ``_MANIFEST`` inputs, the harvest it came from).

    Paths may be given relative to the storage root or to the provider folder (as plan/prov files cite them).
    """
    path = path.strip("/")
    if path.endswith(".json"):
        provider = path.split("/", 1)[0]
        try:
            plan = json.loads(storage.read_bytes(path))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"plan {path} cannot be read: {exc}", provider=provider, file=path) from exc
        if activity not in plan:
            raise ConfigError(f"plan {path} has no {activity!r} entry (has {sorted(set(plan) - {'version'})})",
                              provider=provider, file=path)
        path = f"{provider}/{plan[activity]}"
    return _derived_from(_complete(storage, path), activity)


def _complete(storage: Storage, folder: str) -> RecordSource:
    try:
        output = layout.parse_output(folder)
    except ValueError as exc:
        raise ConfigError(str(exc), file=folder) from exc
    if not storage.is_complete(output.folder):
        raise ConfigError(f"{storage.uri(output.folder)} is not a complete output (no _MANIFEST)",
                          provider=output.provider, file=folder)
    return RecordSource(storage, output)


def _derived_from(source: RecordSource, activity: str) -> RecordSource:
    """``source`` if it is an output of ``activity``, else the one of its inputs' lineage that is (one hop back
    per activity, so the walk is bounded by the number of activities)."""
    frontier = [source]
    for _ in layout.ACTIVITIES:
        for candidate in frontier:
            if candidate.output.activity == activity:
                return candidate
        frontier = [_complete(source.storage, key) for candidate in frontier for key in candidate.manifest().inputs]
    raise ConfigError(f"{source.uri} is a {source.output.activity} output, not derived from any {activity} output",
                      provider=source.output.provider, file=source.key)
