"""Mapping, enrichment and indexing on Spark: the same steps and the same storage layout as in-process.

One Spark task per input part file (parts hold up to 250,000 records, like a file split). A task streams
its part through the activity's step (:mod:`ingest_assets.records.engines.steps`, built once per task), writes one
Avro part to a local temporary file, uploads it under ``_spark-staging/<job>/`` with a name unique to the
task attempt, and returns its record count and report. The driver copies the winning attempt of each
task into the output folder as ``part-NNNNN.avro`` (input order), merges the reports in the same order, writes
the activity's tail (indexing: a full harvest's absences) as the last part, and ``write_activity`` adds
``_LOGS`` and ``_MANIFEST`` last, then ``-prov.json`` and the plan entry.

A failed, killed or retried attempt leaves at most a staged file nobody reads, deleted with the job's
staging folder; an aborted job leaves no output folder. Tasks use the DataFrame API (``mapInArrow``), so
the same code runs on ``local[*]``, a ``spark://`` cluster and Spark Connect (``sc://``). Executors open
the storage with ``open_storage``, a picklable callable (default: ``open_storage(storage.url)``): local
storage must be a path every executor sees; S3 executors build the same client as the driver.
"""

from __future__ import annotations

import pickle
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import BinaryIO

from ingest_assets.core.errors import IngestError
from ingest_assets.records.engines.steps import RecordActivity
from ingest_assets.storage import layout
from ingest_assets.storage.activities import RecordSource, RecordStream
from ingest_assets.storage.avro import WriteStats, default_codec, part_keys, read_part, write_parts
from ingest_assets.storage.backends import FolderWriter, Storage
from ingest_assets.storage import open_storage as open_default

RESULT_SCHEMA = "task long, staged string, records long, report binary"
COPY_BUFFER = 1 << 20


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
    """What every task of one job needs (pickled to the executors): task ``i`` maps ``parts[i]``."""

    open_storage: Callable[[], Storage]
    activity: RecordActivity
    parts: tuple[tuple[int, str], ...]  # (input index, part key), in input order
    schema: dict
    codec: tuple[str, int | None]
    job: str

    def run(self, task: int) -> dict:
        step_input, key = self.parts[task]
        storage = self.open_storage()
        report = self.activity.new_report()
        step = self.activity.steps(report)[step_input]
        records = (out for out in map(step, read_part(storage, key)) if out is not None)
        staged = None
        with tempfile.TemporaryDirectory(prefix="ingest-spark-") as tmp:
            stats = write_parts(
                _TemporaryFolder(Path(tmp)), self.schema, records,
                provider=self.activity.entry.name, part_records=sys.maxsize, codec=self.codec,
            )
            if stats.records:
                staged = layout.spark_staging_key(self.job, f"{task:05d}-{uuid.uuid4().hex}.avro")
                storage.write_file(staged, Path(tmp) / stats.parts[0])
        return {"task": task, "staged": staged, "records": stats.records, "report": pickle.dumps(report)}

    def function(self):
        """The ``mapInArrow`` function: task ids in, one result row per task out."""

        def run(batches: Iterator) -> Iterator:
            import pyarrow as pa

            schema = pa.schema([("task", pa.int64()), ("staged", pa.string()), ("records", pa.int64()), ("report", pa.binary())])
            for batch in batches:
                for task in batch.column(0).to_pylist():
                    yield pa.RecordBatch.from_pylist([self.run(task)], schema=schema)

        return run


def spark_stream(
    spark,
    storage: Storage,
    activity: RecordActivity,
    inputs: Sequence[RecordSource],
    open_storage: Callable[[], Storage] | None = None,
) -> RecordStream:
    """The activity as a job on ``spark`` (a SparkSession), written by ``write_activity`` like any stream."""
    opener = open_storage or partial(open_default, storage.url)
    report = activity.new_report()

    def write(folder: FolderWriter, schema: dict) -> WriteStats:
        parts = tuple((i, key) for i, source in enumerate(inputs) for key in part_keys(storage, source.key))
        tasks = SparkTasks(opener, activity, parts, schema, default_codec(), uuid.uuid4().hex)
        stats = WriteStats()
        try:
            try:
                rows = _collect(spark, tasks) if parts else []
            except IngestError:
                _await_idle(spark)  # tasks of the aborted job may still be writing staged parts
                raise
            for row in sorted(rows, key=lambda r: r["task"]):
                report.merge(pickle.loads(row["report"]))
                if row["staged"]:
                    name = f"part-{len(stats.parts):05d}.avro"
                    with storage.open_read(row["staged"]) as source, folder.open(name) as target:
                        shutil.copyfileobj(source, target, COPY_BUFFER)
                    stats.parts.append(name)
                    stats.records += row["records"]
            tail = write_parts(folder, schema, activity.tail(report, inputs), provider=activity.entry.name,
                               first_part=len(stats.parts))
            stats.parts += tail.parts
            stats.records += tail.records
        finally:
            storage.delete(layout.spark_staging_key(tasks.job))
        return stats

    return RecordStream(
        (), inputs=list(inputs), write=write, logs=lambda: activity.logs(report), summary=lambda: activity.summary(report)
    )


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
    count = len(tasks.parts)
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
