"""Mapping, enrichment and indexing on Spark: the same steps and the same storage layout as in-process.

A task takes a run of consecutive part files of one input (parts hold up to 250,000 records, like file splits):
two tasks per core of the cluster and input where there are parts enough (a task's start is a fixed cost), at most
four parts each (:func:`task_groups`). It streams its parts through the activity's steps
(:mod:`ingest_assets.records.engines.steps`, built once per task), writes Avro parts to a local temporary folder,
uploads them under ``_spark-staging/<job>/`` with names unique to the task attempt, and returns its record count
and report. The driver moves the winning attempt's parts of each task into the output folder as
``part-NNNNN.avro`` (input order; a rename on local storage, a copy elsewhere), merges the reports in the same
order, writes the activity's tail (indexing: a full harvest's absences) as the last part, and ``write_activity``
adds ``_LOGS`` and ``_MANIFEST`` last, then ``-prov.json`` and the plan entry. A mapping whose run also enriches
and indexes has each task stage its records' enrichment and index documents too; the driver stages them in task
order for those steps to commit (:mod:`~ingest_assets.records.engines.ahead`): one Spark job where there were three.

A failed, killed or retried attempt leaves at most a staged file nobody reads, deleted with the job's
staging folder; an aborted job leaves no output folder. Tasks use the DataFrame API (``mapInArrow``), so
the same code runs on ``local[*]``, a ``spark://`` cluster and Spark Connect (``sc://``). Executors open
the storage with ``open_storage``, a picklable callable (default: ``open_storage(storage.url)``): local
storage must be a path every executor sees; S3 executors build the same client as the driver.
"""

from __future__ import annotations

import pickle
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import chain, groupby
from operator import itemgetter
from pathlib import Path
from typing import BinaryIO

from ingest_assets.core.errors import IngestError
from ingest_assets.records.engines.ahead import AheadSteps, stage_parts
from ingest_assets.records.engines.steps import RecordActivity, applied
from ingest_assets.storage import layout
from ingest_assets.storage.activities import RecordSource, RecordStream
from ingest_assets.storage.avro import PartWriter, WriteStats, default_codec, part_keys, read_part, write_parts
from ingest_assets.storage.backends import FolderWriter, Storage
from ingest_assets.storage import open_storage as open_default

RESULT_SCHEMA = "task long, staged array<string>, records long, report binary, ahead binary"
TASKS_PER_SLOT = 2  # a task's start is a fixed cost: few tasks, but more than one per core so a slower core's share
MAX_PARTS_PER_TASK = 4  # goes to the others; and a task of at most a million records (parts hold up to 250,000)


class _TemporaryFolder(FolderWriter):
    """A task's part file, written to a local directory before its upload."""

    def __init__(self, directory: Path):
        self.directory = directory

    def open(self, name: str) -> BinaryIO:
        return open(self.directory / name, "xb")

    @property
    def bytes_written(self) -> int:
        return sum(p.stat().st_size for p in self.directory.iterdir())


@dataclass(frozen=True)
class SparkTasks:
    """What every task of one job needs (pickled to the executors): task ``i`` maps the parts ``groups[i]``."""

    open_storage: Callable[[], Storage]
    activity: RecordActivity
    groups: tuple[tuple[tuple[int, str], ...], ...]  # per task, its (input index, part key)s; all in input order
    schema: dict
    codec: tuple[str, int | None]
    job: str
    ahead: tuple[str, ...] = ()  # a mapping's later stages, staged from each record it maps (records/engines/ahead.py)

    def run(self, task: int) -> dict:
        storage = self.open_storage()
        report = self.activity.new_report()
        steps = self.activity.steps(report)
        records = chain.from_iterable(applied(steps[step_input], read_part(storage, key))
                                      for step_input, key in self.groups[task])
        attempt = uuid.uuid4().hex
        with tempfile.TemporaryDirectory(prefix="ingest-spark-") as tmp:
            ahead = _TaskAhead(self, Path(tmp)) if self.ahead else None
            stats = write_parts(_TemporaryFolder(Path(tmp)), self.schema, ahead.records(records) if ahead else records,
                                provider=self.activity.entry.name, codec=self.codec)
            staged = self._upload(storage, Path(tmp), stats.parts, f"{task:05d}", attempt)
            staged_ahead = ahead.upload(storage, task, attempt) if ahead else None
        return {"task": task, "staged": staged, "records": stats.records, "report": pickle.dumps(report),
                "ahead": pickle.dumps(staged_ahead) if staged_ahead is not None else b""}

    def _upload(self, storage: Storage, directory: Path, parts: list[str], prefix: str, attempt: str) -> list[str]:
        """The task attempt's part files under the job's staging folder, in order."""
        staged = []
        for n, part in enumerate(parts):
            staged.append(layout.spark_staging_key(self.job, f"{prefix}-{n:05d}-{attempt}.avro"))
            storage.write_file(staged[-1], directory / part)
        return staged

    def function(self):
        """The ``mapInArrow`` function: task ids in, one result row per task out."""

        def run(batches: Iterator) -> Iterator:
            import pyarrow as pa

            schema = pa.schema([("task", pa.int64()), ("staged", pa.list_(pa.string())), ("records", pa.int64()),
                                ("report", pa.binary()), ("ahead", pa.binary())])
            for batch in batches:
                for task in batch.column(0).to_pylist():
                    yield pa.RecordBatch.from_pylist([self.run(task)], schema=schema)

        return run


class _TaskAhead:
    """A mapping task's later stages: each record's stage records into local parts, uploaded with the task's own."""

    def __init__(self, tasks: SparkTasks, directory: Path):
        self.tasks = tasks
        self.ahead = AheadSteps(tasks.activity.entry, tasks.ahead)
        self.folders = [directory / stage.activity for stage in self.ahead.stages]
        self.parts = []
        for folder, stage in zip(self.folders, self.ahead.stages):
            folder.mkdir()
            self.parts.append(PartWriter(_TemporaryFolder(folder), AheadSteps.schema(stage), provider=stage.entry.name,
                                         codec=tasks.codec))
        self.failed = False

    def records(self, mapped: Iterator[dict]) -> Iterator[dict]:
        return self.ahead.following(mapped, self.parts, self._fail)

    def _fail(self, _exc: Exception) -> None:
        self.failed = True
        for parts in self.parts:
            parts.abort()

    def upload(self, storage: Storage, task: int, attempt: str) -> list | None:
        """Per stage: its staged part keys, record count and report; None when a record failed a stage."""
        if self.failed:
            return None
        return [(self.tasks._upload(storage, folder, parts.close().parts, f"{stage.activity}-{task:05d}", attempt),
                 parts.stats.records, report)
                for stage, report, folder, parts in zip(self.ahead.stages, self.ahead.reports, self.folders, self.parts)]


def spark_stream(
    spark,
    storage: Storage,
    activity: RecordActivity,
    inputs: Sequence[RecordSource],
    open_storage: Callable[[], Storage] | None = None,
    ahead: Sequence[str] = (),
    run: str = "",
) -> RecordStream:
    """The activity as a job on ``spark`` (a SparkSession), written by ``write_activity`` like any stream; a
    mapping also stages its ``ahead`` stages for the later steps of ``run`` (:mod:`~ingest_assets.records.engines.ahead`)."""
    opener = open_storage or partial(open_default, storage.url)
    report = activity.new_report()
    ahead = tuple(ahead) if activity.activity == "mapping" else ()
    if ahead[1:] and RecordActivity("indexing", activity.entry).reads(1, inputs[0]):
        ahead = ahead[:1]  # indexing reads a harvest that holds deletions: its own job reads it in parallel tasks
    claims = []

    def write(folder: FolderWriter, schema: dict) -> WriteStats:
        parts = [(i, key) for i, source in enumerate(inputs) if activity.reads(i, source)
                 for key in part_keys(storage, source.key)]
        tasks = SparkTasks(opener, activity, task_groups(parts, _slots(spark)), schema, default_codec(), uuid.uuid4().hex,
                           ahead)
        stats = WriteStats()
        try:
            try:
                rows = _collect(spark, tasks) if parts else []
            except IngestError:
                _await_idle(spark)  # tasks of the aborted job may still be writing staged parts
                raise
            rows = sorted(rows, key=lambda r: r["task"])
            for row in rows:
                report.merge(pickle.loads(row["report"]))
                for staged in row["staged"]:
                    name = f"part-{len(stats.parts):05d}.avro"
                    folder.adopt(name, storage, staged)
                    stats.parts.append(name)
                stats.records += row["records"]
            tail = write_parts(folder, schema, activity.tail(report, inputs), provider=activity.entry.name,
                               first_part=len(stats.parts))
            stats.parts += tail.parts
            stats.records += tail.records
            stages = [pickle.loads(row["ahead"]) if row["ahead"] else None for row in rows]
            if ahead and None not in stages:  # every task staged its records' later stages
                claims.append(_stage_ahead(storage, inputs[0], AheadSteps(activity.entry, ahead), stages, run))
        finally:
            storage.delete(layout.spark_staging_key(tasks.job))
        return stats

    def committed(output: layout.ActivityOutput) -> None:
        for claim in filter(None, claims):
            claim(output)

    return RecordStream((), inputs=list(inputs), write=write, logs=lambda: activity.logs(report),
                        summary=lambda: activity.summary(report), committed=committed)


def _stage_ahead(storage: Storage, source: RecordSource, ahead: AheadSteps, staged: list[list], run: str):
    """Stage the tasks' stage parts in task order, their reports merged in the same order (as the mapping's)."""
    for index, report in enumerate(ahead.reports):
        for task in staged:
            report.merge(task[index][2])
    parts = [[key for task in staged for key in task[index][0]] for index in range(len(ahead.stages))]
    records = [sum(task[index][1] for task in staged) for index in range(len(ahead.stages))]
    return stage_parts(storage, source, ahead, parts, records, run)


def task_groups(parts: Sequence[tuple[int, str]], slots: int) -> tuple[tuple[tuple[int, str], ...], ...]:
    """``parts`` cut, in order, into consecutive groups, one group per task: each input's parts apart (inputs go
    through different steps of different cost: indexing's enrichment parts are indexed, its harvest parts only
    looked through for deletions, so a task mixing them would take far longer than one holding only the harvest's),
    and each input's parts into groups of as equal a count as can be, at least :data:`TASKS_PER_SLOT` tasks per slot
    (core) of the cluster where there are parts enough, at most :data:`MAX_PARTS_PER_TASK` parts per task, and a
    whole number of tasks per slot (no last wave of a few tasks while the other cores idle)."""
    groups = []
    for _input, run in groupby(parts, key=itemgetter(0)):
        run = list(run)
        needed = max(slots * TASKS_PER_SLOT, -(-len(run) // MAX_PARTS_PER_TASK))
        count = min(len(run), -(-needed // slots) * slots)
        size, larger = divmod(len(run), count)
        start = 0
        for n in range(count):
            end = start + size + (n < larger)
            groups.append(tuple(run[start:end]))
            start = end
    return tuple(groups)


def _slots(spark) -> int:
    """The cluster's task slots (its default parallelism); a Spark Connect session does not say: one."""
    try:
        return max(1, spark.sparkContext.defaultParallelism)
    except Exception:  # noqa: BLE001 - a Connect session has no SparkContext
        return 1


def _await_idle(spark, timeout: float = 120.0) -> None:
    """Wait (at most ``timeout`` s) until no executor runs a task; Spark Connect sessions have no executor view."""
    context = getattr(spark, "sparkContext", None)
    if context is None:
        return
    tracker = context._jsc.sc().statusTracker()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(info.numRunningTasks() for info in tracker.getExecutorInfos()):
        time.sleep(0.2)


def _collect(spark, tasks: SparkTasks) -> list:
    count = len(tasks.groups)
    try:
        return spark.range(0, count, 1, count).mapInArrow(tasks.function(), RESULT_SCHEMA).collect()
    except Exception as exc:  # noqa: BLE001 - Py4J/Connect errors: keep the task's own message
        text = str(exc)
        lines = [line for line in text.splitlines() if line.strip()]
        cause = next((line for line in reversed(lines) if "Error" in line), lines[-1] if lines else repr(exc))
        raise IngestError(  # our own typed errors (bad input) do not go away on a retry; cluster failures may
            f"{tasks.activity.activity} on Spark failed: {cause.strip()}", provider=tasks.activity.entry.name,
            retryable="ingest_assets.core.errors." not in text,
        ) from exc
