"""Spark fixtures: one SparkSession at a time (``local[2]``, then a real standalone master + 2 workers started
once per session); the harvests they run on are in ``support/spark.py``."""

from __future__ import annotations

import shutil
import sys

import pytest

from ingest_assets.records.engines.choice import ENGINE_SETTINGS, PYTHON, use_python
from ingest_assets.records.engines.spark_cluster import standalone_cluster
from ingest_assets.records.engines.spark_avro import SPARK_AVRO_PACKAGE
from ingest_assets_tests.support import require
from ingest_assets_tests.support.servers import Unavailable, maven


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory) -> str:
    require(shutil.which("java") is not None, "Java is not installed (Spark needs a JRE)")
    with standalone_cluster(tmp_path_factory.mktemp("spark-standalone"), workers=2, cores=1, memory="1g") as master:
        yield master


@pytest.fixture(scope="session", params=["local[2]", "standalone"])
def spark(request):
    """A SparkSession on ``local[2]`` or on the standalone cluster (tests are grouped per master)."""
    require(shutil.which("java") is not None, "Java is not installed (Spark needs a JRE)")
    from pyspark.sql import SparkSession

    master = request.getfixturevalue("spark_cluster") if request.param == "standalone" else request.param
    try:  # Spark's avro data source, for the tests that read and write the layout through it (spark_avro_jar)
        jars = str(maven(SPARK_AVRO_PACKAGE))
    except Unavailable:
        jars = ""
    session = (
        SparkSession.builder.master(master)
        .config("spark.jars", jars)
        .appName("ingest-assets-tests")
        .config(PYTHON, sys.executable)
        .config("spark.executor.memory", "512m")
        .config(map=ENGINE_SETTINGS)  # the engine's own: light JVMs (half the start's CPU), no web UI
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.task.maxFailures", "2")  # the cluster retries a task once (local mode never retries)
        .getOrCreate()
    )
    use_python(session)  # executors run this interpreter, whatever python3 is first on PATH
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()
