"""A Spark standalone cluster on 127.0.0.1 (a master and N workers from the pyspark package), for tests,
benchmarks and trying the Spark engine on one machine. Production clusters are started by their own tools.

    with standalone_cluster(workers=2, cores=1, directory=tmp) as master:   # "spark://127.0.0.1:<port>"
        spark = SparkSession.builder.master(master).getOrCreate()
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pyspark

from ingest_assets.records.engines.choice import JVM_OPTIONS

START_TIMEOUT = 120.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def _daemon(args: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen]:
    """One Spark daemon in its own process group, stopped (group-wide) on exit."""
    spark_class = Path(pyspark.__file__).parent / "bin" / "spark-class"
    with open(log, "ab") as out:
        process = subprocess.Popen(
            [str(spark_class), *args], env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        yield process
    finally:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(process.pid, sig)
                process.wait(timeout=10)
                break
            except ProcessLookupError:
                break
            except subprocess.TimeoutExpired:
                continue


@contextmanager
def standalone_cluster(directory: Path, workers: int = 2, cores: int = 1, memory: str = "1g") -> Iterator[str]:
    """A master and ``workers`` workers of ``cores`` cores each; yields the master URL once all are alive.
    Executors run this interpreter (``PYSPARK_PYTHON``)."""
    directory.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_HOME": str(Path(pyspark.__file__).parent),
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_DAEMON_MEMORY": "256m",
        "SPARK_DAEMON_JAVA_OPTS": JVM_OPTIONS,  # the master and workers only schedule, like the engine's JVMs
        "SPARK_LOG_DIR": str(directory),
    }
    port, ui = _free_port(), _free_port()
    master = f"spark://127.0.0.1:{port}"
    with ExitStack() as stack:
        stack.enter_context(_daemon(
            ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port), "--webui-port", str(ui)],
            env, directory / "master.log",
        ))
        for n in range(workers):
            work = directory / f"worker-{n}"
            work.mkdir(exist_ok=True)
            stack.enter_context(_daemon(
                ["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", str(cores), "--memory", memory,
                 "--webui-port", str(_free_port()), "--work-dir", str(work), master],
                env, directory / f"worker-{n}.log",
            ))
        _wait_for_workers(f"http://127.0.0.1:{ui}/json/", workers, directory)
        yield master


def _wait_for_workers(url: str, count: int, directory: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                state = json.load(response)
            if sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE") >= count:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise TimeoutError(f"Spark standalone cluster not up after {START_TIMEOUT:.0f} s (logs in {directory})")
