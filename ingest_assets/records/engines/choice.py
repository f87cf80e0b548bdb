"""Which engine runs a provider's mapping, enrichment and indexing: in this process or on Spark.

Registry (per provider, overriding ``INGEST_ENGINE``)::

    nara:
      engine: auto               # in-process | spark | auto
      engine_threshold: 500000   # auto: Spark from this many input records (default INGEST_SPARK_THRESHOLD)
"""

from __future__ import annotations

from ingest_assets.core.registry import ProviderEntry
from ingest_assets.core.settings import ENGINES

IN_PROCESS, SPARK, AUTO = ENGINES


def choose_engine(entry: ProviderEntry, default: str, threshold: int, records: int) -> str:
    """``in-process`` or ``spark`` for an activity whose (first) input holds ``records`` records."""
    name = entry.settings.engine or default
    limit = entry.settings.engine_threshold or threshold
    if name == AUTO:
        return SPARK if records >= limit else IN_PROCESS
    return name


PLATFORM_MASTERS = ("local", "spark://")  # masters whose executors run on this machine's interpreters
PYTHON = "spark.pyspark.python"
# The engine's JVMs only schedule tasks and pass one small row per task back (the records stay in the Python
# workers): the C1 compiler alone and the serial collector halve their CPU (session start 22 -> 11 CPU s, 0.5 ->
# 0.2 CPU s a job on 2 cores), and the web UI is not started (the runs are Dagster's to show).
JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
ENGINE_SETTINGS = {"spark.driver.extraJavaOptions": JVM_OPTIONS, "spark.executor.extraJavaOptions": JVM_OPTIONS,
                   "spark.ui.enabled": "false"}


def spark_config(master: str, python: str | None = None) -> dict[str, str]:
    """SparkSession settings for ``INGEST_SPARK_MASTER``: ``local[*]``, ``spark://host:7077`` (standalone),
    ``yarn``/``k8s://...`` (classic masters), or ``sc://host:15002`` (Spark Connect). A local or standalone
    master's executors run ``python`` (the platform's interpreter; see :func:`use_python`). A session this process
    starts gets :data:`ENGINE_SETTINGS`; a Spark Connect server's are its own."""
    if master.startswith("sc://"):
        return {"spark.remote": master, "spark.app.name": "ingest-assets"}
    config = {"spark.master": master, "spark.app.name": "ingest-assets", **ENGINE_SETTINGS}
    if python and master.startswith(PLATFORM_MASTERS):
        config[PYTHON] = python
    return config


def use_python(session):
    """Make the session's executors run the interpreter its ``spark.pyspark.python`` names. PySpark hands
    executors ``SparkContext.pythonExec``, taken from ``PYSPARK_PYTHON`` or else the first ``python3`` on
    PATH (which may lack the platform's libraries); that setting is read only by ``spark-submit``."""
    python = session.conf.get(PYTHON, None)
    if python:
        session.sparkContext.pythonExec = python
    return session
