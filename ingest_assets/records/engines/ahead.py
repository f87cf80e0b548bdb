"""Steps ahead: a mapping's enrichment and index documents made while the mapping streams, committed by their steps.

A run that maps, enriches and indexes a provider's day would write each mapped record to Avro and decode it again at
once for enrichment, and the same for each enriched record: two of the three Avro decodes of every record, the
largest share of the run's reading. When the run holds the later steps too, the in-process mapping passes each
record it has written on through the enrichment step and the indexing step's document step, and writes their
records to ``_ahead-staging/<provider>/<yyyymmdd>/<id>/<activity>/`` as it goes (one record at a time: memory stays
flat), with their ``_LOGS`` and summary.

The enrichment and indexing steps still run as steps of their own, after the mapping's blocking checks pass. Each
commits the staged output made from exactly its input (``claim.json``: the input's folder, and a fingerprint of the
provider's entry, the software version and the run: only the run that staged an output commits it) instead of
computing it again: the part files are copied into the step's own output folder under the step's schema doc
(:func:`~ingest_assets.storage.avro.restamp`: the data blocks byte for byte), with the staged ``_LOGS`` and summary;
indexing then adds the harvest's deletions and absences as it always does. Nothing staged is committed without its
step: what a step never claims (a check failed, the run stopped) is removed by the next mapping of that provider
and day. A failure while staging (a record the enrichment refuses) drops the staging, and the step computes, and
fails, as it would have.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack
from itertools import chain

from ingest_assets.core.errors import StorageError
from ingest_assets.core.registry import ProviderEntry
from ingest_assets.core.version import software_version
from ingest_assets.records.engines.steps import BURST, RecordActivity
from ingest_assets.storage import layout
from ingest_assets.storage.activities import RecordSource, RecordStream, write_logs
from ingest_assets.storage.avro import INDEX_RECORD, MAP_RECORD, PartWriter, WriteStats, part_keys, restamp, schema_with_doc, write_parts
from ingest_assets.storage.backends import FolderWriter, Storage

STAGES = ("enrichment", "indexing")  # in order: each stage takes the records of the one before
SCHEMAS = {"enrichment": MAP_RECORD, "indexing": INDEX_RECORD}
CLAIM, SUMMARY = "claim.json", "summary.json"


def fingerprint(entry: ProviderEntry, run: str) -> str:
    """What staged records were made with and for: the provider's entry, the software's version and the run (only
    a step of the run that staged them commits them: settings beyond the entry cannot have changed in between)."""
    made_with = [entry.name, entry.settings.model_dump(mode="json"), software_version(), run]
    return hashlib.sha256(json.dumps(made_with, sort_keys=True, default=str).encode()).hexdigest()


class AheadSteps:
    """The later ``stages`` of one provider's mapping (a prefix of :data:`STAGES`): each mapped record in, its
    record of each stage out, each stage's report counting as the stage's own step would."""

    def __init__(self, entry: ProviderEntry, stages: Sequence[str]):
        self.stages = [RecordActivity(name, entry) for name in STAGES[: len(stages)]]
        self.reports = [stage.new_report() for stage in self.stages]
        self._steps = [stage.steps(report)[0] for stage, report in zip(self.stages, self.reports)]

    def following(self, mapped: Iterable[dict], parts: Sequence[PartWriter],
                  dropped: Callable[[Exception], None]) -> Iterator[dict]:
        """``mapped`` passed on unchanged; after the mapping has written a burst of records (:data:`BURST`, as the
        steps take their input), each stage makes its records of the burst and writes them to that stage's
        ``parts``. The first failure of a stage calls ``dropped`` and stops the staging (the stage's own step will
        meet the record and say so, in its own step)."""
        stages = [(step, writer.write) for step, writer in zip(self._steps, parts, strict=True)]  # paired once
        staging, burst = True, []
        for record in mapped:
            yield record
            if staging:
                burst.append(record)
                if len(burst) == BURST:
                    staging, burst = _staged(burst, stages, dropped), []
        if staging and burst:
            _staged(burst, stages, dropped)

    @staticmethod
    def schema(stage: RecordActivity) -> dict:
        """The schema staged parts are written in (its doc is replaced when a step commits them)."""
        return schema_with_doc(SCHEMAS[stage.activity], f"{stage.activity} of {stage.entry.name}, staged")


class Staging:
    """The later ``stages`` of one in-process mapping, applied to each record the mapping writes and staged."""

    def __init__(self, storage: Storage, entry: ProviderEntry, source: RecordSource, stages: Sequence[str], run: str):
        self.storage, self.entry, self.run = storage, entry, run
        self.key = _new_job(storage, entry, source)
        self.ahead = AheadSteps(entry, stages)
        self._exits = ExitStack()
        self.folders: list[FolderWriter] = []
        self.parts: list[PartWriter] = []
        for stage in self.ahead.stages:
            folder = self._exits.enter_context(storage.folder(f"{self.key}/{stage.activity}", marker=SUMMARY))
            self.folders.append(folder)
            self.parts.append(self._exits.enter_context(PartWriter(folder, AheadSteps.schema(stage), provider=entry.name)))
        self.active = True

    def records(self, mapped: Iterable[dict]) -> Iterator[dict]:
        """``mapped``, passed on unchanged: each record is written by the mapping before the stages see it."""
        try:
            yield from self.ahead.following(mapped, self.parts, self._drop)
        except BaseException as exc:
            self._drop(exc)
            raise
        self._finish()

    def _finish(self) -> None:
        if not self.active:
            return
        try:
            for stage, report, folder, parts in zip(self.ahead.stages, self.ahead.reports, self.folders, self.parts):
                _seal(folder, stage, report, parts.close().records)
            self._exits.close()
        except Exception as exc:  # noqa: BLE001 - staging is an optimisation: the steps compute without it
            self._drop(exc)

    def _drop(self, exc: BaseException) -> None:
        if not self.active:
            return
        self.active = False
        self._exits.__exit__(type(exc), exc, exc.__traceback__)
        _forget(self.storage, self.key)

    def claim(self, output: layout.ActivityOutput) -> None:
        """The mapping's output is whole: its first stage may be committed from it."""
        if self.active:
            _write_claim(self.storage, f"{self.key}/{STAGES[0]}", output, self.entry, self.run)


def stage_parts(storage: Storage, source: RecordSource, ahead: AheadSteps, parts: Sequence[Sequence[str]],
                records: Sequence[int], run: str) -> Callable[[layout.ActivityOutput], None] | None:
    """Stage what another engine's tasks wrote (Spark): per stage, its part files of ``storage`` in order (moved
    where the backend can) and its record count, with ``ahead``'s (merged) reports; returns the mapping stream's
    ``committed`` hook, or None if staging failed (the steps then compute)."""
    entry = ahead.stages[0].entry
    key = _new_job(storage, entry, source)
    try:
        for stage, report, keys, count in zip(ahead.stages, ahead.reports, parts, records, strict=True):
            with storage.folder(f"{key}/{stage.activity}", marker=SUMMARY) as folder:
                for n, part in enumerate(keys):
                    folder.adopt(f"part-{n:05d}.avro", storage, part)
                _seal(folder, stage, report, count)
    except (OSError, StorageError):
        _forget(storage, key)
        return None
    return lambda output: _write_claim(storage, f"{key}/{STAGES[0]}", output, entry, run)


def _staged(burst: list[dict], stages: Sequence[tuple[Callable, Callable]], dropped: Callable[[Exception], None]) -> bool:
    """Each stage's records of ``burst`` made and written, stage after stage; whether staging goes on."""
    try:
        for step, write in stages:
            burst = list(map(step, burst))
            deque(map(write, burst), maxlen=0)
    except Exception as exc:  # noqa: BLE001 - see AheadSteps.following
        dropped(exc)
        return False
    return True


def _new_job(storage: Storage, entry: ProviderEntry, source: RecordSource) -> str:
    """A new staging folder for a mapping of ``source``'s day; what earlier mappings of that day staged goes (their
    outputs' steps ran, or never will)."""
    day = layout.ahead_staging_key(entry.name, source.output.day)
    storage.delete(day)
    return f"{day}/{uuid.uuid4().hex}"


def _seal(folder: FolderWriter, stage: RecordActivity, report, records: int) -> None:
    """A staged output's ``_LOGS`` and summary (its marker, written last)."""
    write_logs(folder, stage.logs(report))
    folder.write_bytes(SUMMARY, json.dumps({"records": records, "summary": dict(stage.summary(report))}).encode())


def staging_ahead(stream: RecordStream, activity: RecordActivity, stages: Sequence[str], storage: Storage,
                  run: str = "") -> RecordStream:
    """The mapping ``stream`` that also stages its records' ``stages`` (a prefix of :data:`STAGES`) for the later
    steps of ``run``."""
    if activity.activity != "mapping" or not stages:
        return stream
    staging = Staging(storage, activity.entry, stream.inputs[0], stages, run)
    return RecordStream(staging.records(stream.records), inputs=stream.inputs, started=stream.started, logs=stream.logs,
                        summary=stream.summary, committed=staging.claim)


def staged_stream(activity: RecordActivity, inputs: Sequence[RecordSource], storage: Storage,
                  run: str = "") -> RecordStream | None:
    """The stream that commits the output staged from exactly ``inputs[0]`` for ``activity`` of ``run``, if one was."""
    if activity.activity not in STAGES:
        return None
    source = inputs[0]
    day = layout.ahead_staging_key(source.output.provider, source.output.day)
    wanted = {"input": source.key, "fingerprint": fingerprint(activity.entry, run)}
    for job in storage.list_children(day):  # bounded: each mapping clears its day's staging before it stages
        key = f"{day}/{job}/{activity.activity}"
        if storage.is_complete(key, SUMMARY) and _read_claim(storage, key) == wanted:
            return _committing(activity, inputs, storage, f"{day}/{job}", run)
    return None


def _committing(activity: RecordActivity, inputs: Sequence[RecordSource], storage: Storage, job: str,
                run: str) -> RecordStream:
    key = f"{job}/{activity.activity}"
    staged = json.loads(storage.read_bytes(f"{key}/{SUMMARY}"))
    report = activity.new_report()
    if activity.activity == "indexing":
        report.documents = staged["summary"]["documents"]  # the rest of its report is counted below, as always

    def write(folder: FolderWriter, schema: dict) -> WriteStats:
        stats = WriteStats(records=staged["records"])
        for part in part_keys(storage, key):
            stats.parts.append(f"part-{len(stats.parts):05d}.avro")
            with storage.open_read(part) as source, folder.open(stats.parts[-1]) as target:
                restamp(source, target, schema)
        steps = activity.steps(report)
        later = ((step, source) for index, (step, source) in enumerate(zip(steps, inputs, strict=True))
                 if index and activity.reads(index, source))
        rest = chain((out for step, source in later for out in map(step, source) if out is not None),
                     activity.tail(report, inputs))
        more = write_parts(folder, schema, rest, provider=activity.entry.name, first_part=len(stats.parts))
        stats.parts += more.parts
        stats.records += more.records
        return stats

    def logs():
        if activity.activity == "indexing":
            return activity.logs(report)
        return {name.rsplit("/", 1)[1]: storage.read_bytes(name) for name in storage.list_keys(f"{key}/{layout.LOGS}")}

    def committed(output: layout.ActivityOutput) -> None:
        later = STAGES[STAGES.index(activity.activity) + 1:]
        if later and storage.is_complete(f"{job}/{later[0]}", SUMMARY):
            _write_claim(storage, f"{job}/{later[0]}", output, activity.entry, run)
        _forget(storage, key if later else job)
        if not later and not storage.list_children(job.rsplit("/", 1)[0]):
            _forget(storage, job.rsplit("/", 1)[0])  # the day's folder, emptied

    summary = (lambda: activity.summary(report)) if activity.activity == "indexing" else (lambda: staged["summary"])
    return RecordStream((), inputs=list(inputs), write=write, logs=logs, summary=summary, committed=committed)


def _write_claim(storage: Storage, key: str, output: layout.ActivityOutput, entry: ProviderEntry, run: str) -> None:
    claim = {"input": output.folder, "fingerprint": fingerprint(entry, run)}
    try:
        storage.write_bytes(f"{key}/{CLAIM}", json.dumps(claim).encode(), overwrite=True)
    except (OSError, StorageError):  # unclaimed: the step computes its output itself
        pass


def _read_claim(storage: Storage, key: str) -> dict | None:
    try:
        return json.loads(storage.read_bytes(f"{key}/{CLAIM}"))
    except (OSError, StorageError, ValueError):
        return None


def _forget(storage: Storage, key: str) -> None:
    try:
        storage.delete(key)
    except (OSError, StorageError):  # the next mapping of the day removes it
        pass
