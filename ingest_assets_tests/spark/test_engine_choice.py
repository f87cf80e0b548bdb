"""Which engine runs a provider: the registry's ``engine:``, else ``INGEST_ENGINE``; ``auto`` by size."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from ingest_assets.core.errors import ConfigError
from ingest_assets.records.engines.choice import JVM_OPTIONS, choose_engine, spark_config
from ingest_assets.core.registry import ProviderEntry
from ingest_assets.core.settings import Settings
from ingest_assets.defs.records.resources import RecordEngineResource
from ingest_assets_tests.support import require


def test_registry_setting_overrides_the_global_default():
    assert choose_engine(ProviderEntry("a"), "in-process", 100, 10**9) == "in-process"
    assert choose_engine(ProviderEntry("a"), "spark", 100, 1) == "spark"
    assert choose_engine(ProviderEntry("a", {"engine": "spark"}), "in-process", 100, 1) == "spark"
    assert choose_engine(ProviderEntry("a", {"engine": "in-process"}), "spark", 100, 10**9) == "in-process"


def test_auto_picks_spark_from_the_threshold_the_provider_may_override():
    assert choose_engine(ProviderEntry("a"), "auto", 100, 99) == "in-process"
    assert choose_engine(ProviderEntry("a"), "auto", 100, 100) == "spark"
    big = ProviderEntry("nara", {"engine": "auto", "engine_threshold": 1000})
    assert choose_engine(big, "in-process", 100, 999) == "in-process"
    assert choose_engine(big, "in-process", 100, 1000) == "spark"


@pytest.mark.parametrize("settings", [{"engine": "flink"}, {"engine": "auto", "engine_threshold": "lots"}, {"engine_threshold": -1}])
def test_bad_engine_settings_name_the_provider(settings):
    with pytest.raises(ConfigError) as raised:
        choose_engine(ProviderEntry("nara", settings), "auto", 100, 5)
    assert raised.value.provider == "nara"


def test_settings_and_masters():
    settings = Settings.from_env(
        {"INGEST_ENGINE": "auto", "INGEST_SPARK_MASTER": "spark://10.0.0.5:7077", "INGEST_SPARK_THRESHOLD": "5000"}
    )
    assert (settings.engine, settings.spark_master, settings.spark_threshold) == ("auto", "spark://10.0.0.5:7077", 5000)
    assert Settings.from_env({}).engine == "in-process"
    with pytest.raises(ConfigError):
        Settings.from_env({"INGEST_SPARK_THRESHOLD": "1e6"})
    with pytest.raises(ConfigError, match="INGEST_ENGINE must be one of in-process, spark, auto, got 'flink'"):
        Settings.from_env({"INGEST_ENGINE": "flink"})
    assert spark_config("local[*]")["spark.master"] == "local[*]"
    assert spark_config("sc://spark-connect:15002") == {"spark.remote": "sc://spark-connect:15002", "spark.app.name": "ingest-assets"}


def test_the_spark_engine_without_the_spark_extra_says_how_to_install_it(monkeypatch):
    """pyspark and dagster-pyspark are the ``spark`` extra: where it is not installed (as after README command 1),
    a Spark run fails with a ConfigError saying how to install it, not a ModuleNotFoundError."""
    monkeypatch.setitem(sys.modules, "dagster_pyspark", None)  # the import fails as where the extra is missing
    engine = RecordEngineResource.from_settings(Settings.from_env({"INGEST_ENGINE": "spark"}))
    with pytest.raises(ConfigError, match="the Spark engine needs pyspark and dagster-pyspark") as raised:
        engine.spark_session()
    assert "uv sync --locked --extra spark" in raised.value.hint


PYTHON_PROBE = """
import json
import sys
from ingest_assets.core.settings import Settings
from ingest_assets.defs.records.resources import RecordEngineResource
engine = RecordEngineResource.from_settings(Settings.from_env({"INGEST_SPARK_MASTER": "local[1]"}))
session = engine.spark_session()
try:
    jvm = session.sparkContext._jvm
    print(json.dumps({"jvm": list(jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()),
                      "ui": session.sparkContext.uiWebUrl}))
    print(session.sparkContext.parallelize([0], 1).map(lambda _: sys.executable).collect()[0])
finally:
    session.stop()
"""


@pytest.fixture(scope="module")
def engine_session_probe(tmp_path_factory) -> list[str]:
    """The probe's output lines: the engine's session (from ``INGEST_SPARK_MASTER=local[1]``) started with another
    ``python3`` first on PATH."""
    require(shutil.which("java") is not None, "Java is not installed (Spark needs a JRE)")
    decoy = tmp_path_factory.mktemp("decoy") / "bin"
    decoy.mkdir()
    (decoy / "python3").write_text("#!/bin/sh\necho 'the decoy python3 ran' >&2\nexit 3\n")
    (decoy / "python3").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "PYSPARK_PYTHON"}
    env["PATH"] = f"{decoy}{os.pathsep}{env['PATH']}"
    done = subprocess.run([sys.executable, "-c", PYTHON_PROBE], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()


def test_local_executors_run_the_platform_interpreter_whatever_python3_is_first_on_path(engine_session_probe):
    """Another ``python3`` first on PATH (one without the platform's libraries) is not what the executors run."""
    assert engine_session_probe[-1] == sys.executable


def test_the_engine_session_starts_a_light_jvm_without_web_ui(engine_session_probe):
    """The driver JVM (local mode: the executors' too) runs the engine's options: the C1 compiler only and the serial
    collector (half the CPU of a session start); no web UI."""
    started = json.loads(engine_session_probe[-2])
    assert set(JVM_OPTIONS.split()) <= set(started["jvm"])
    assert started["ui"] is None
