"""The Dagster daemon as its own process group on a PostgreSQL instance of its own, which a test kills and restarts."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path

import pytest

from ingest_assets_tests.support import stop_group

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
WORKSPACE = str(files("ingest_assets.cli").joinpath("workspace.yaml"))  # the code location `ingest-assets ui` starts
# the records group as "Materialize all" submits it: the review gate and its report come before the index is published
RECORD_ASSETS = ("original_records", "mapped_records", "enriched_records", "indexed_records", "provider_report",
                 "review_gate", "search_index", "resourcesync_changes")


class DaemonProcess:
    """``dagster-daemon run`` on a PostgreSQL Dagster instance of its own (the shipped deploy/postgres/dagster.yaml),
    which a test kills (SIGKILL to its process group: the code server and the run workers it launched go with it) and
    starts again. ``env`` is the environment of every process of the instance, ``instance`` the test's handle."""

    def __init__(self, tmp_path: Path, pg_url: str, registry: Path, partition_start: str):
        import psycopg

        database = f"dagster_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(pg_url.replace("postgresql+psycopg://", "postgresql://"), autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{database}"')
        self.home, self.log = tmp_path / "dagster", tmp_path / "daemon.log"
        self.home.mkdir()
        shutil.copy(ROOT / "deploy" / "postgres" / "dagster.yaml", self.home / "dagster.yaml")
        self.env = {**os.environ, "DAGSTER_HOME": str(self.home), "INGEST_HOME": str(tmp_path / "ingest"),
                    "DAGSTER_POSTGRES_URL": pg_url.replace("+psycopg:", "+psycopg2:").rsplit("/", 1)[0] + f"/{database}",
                    "INGEST_REGISTRY": str(registry), "INGEST_PARTITION_START": partition_start, "DAGSTER_TELEMETRY_DISABLED": "1",
                    # the runs here are the record pipeline's: an export after each publication would take the
                    # provider's one run slot between them (test_exports_automation.py tests the exports' conditions)
                    "INGEST_AUTO_EXPORTS": "",
                    # a loaded 2-core machine can take over Dagster's 60 s to start a run worker (spawn, import the
                    # code location): the launch then fails with a timeout and the run stays queued
                    "DAGSTER_GRPC_TIMEOUT_SECONDS": "300"}
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        with self.log.open("ab") as log:
            self.process = subprocess.Popen([str(BIN / "dagster-daemon"), "run", "-w", WORKSPACE], cwd=ROOT, env=self.env,
                                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def kill(self) -> None:
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(30)

    def stop(self) -> None:
        """SIGKILL to the group, at the end of a test: its instance is thrown away, so nothing is gained by the daemon's
        own stop (it waits for the ticks and run launches in flight, then each process of the group spends a CPU-second
        or more in interpreter shutdown)."""
        if self.process is not None:
            stop_group(self.process, sig=signal.SIGKILL)

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]


def submit_asset_backfill(instance, env: dict[str, str], keys: list[str]) -> str:
    """Add an asset backfill of the records group over ``keys`` (``day|provider``) as the group's "Materialize all"
    in the UI submits it, and return its id: the backfill daemon launches its runs (one per 31 days of a provider,
    the assets' backfill policy) and keeps it in progress until they and their retries have finished."""
    import dagster as dg
    from dagster._core.execution.backfill import PartitionBackfill
    from dagster._core.utils import make_new_backfill_id

    from ingest_assets.core.settings import Settings
    from ingest_assets.definitions import build_definitions

    backfill = PartitionBackfill.from_asset_partitions(
        backfill_id=make_new_backfill_id(), asset_graph=build_definitions(Settings.from_env(env)).resolve_asset_graph(),
        partition_names=keys, asset_selection=[dg.AssetKey(a) for a in RECORD_ASSETS], backfill_timestamp=time.time(),
        tags={}, dynamic_partitions_store=instance, all_partitions=False, title=None, description=None, run_config=None,
    )
    instance.add_backfill(backfill)
    return backfill.backfill_id


def wait_until(what: str, check: Callable[[], object], daemon: DaemonProcess, timeout: float = 240,
               every: float = 1.0) -> object:
    """Poll ``check`` every ``every`` seconds until it returns something true, and return that; fail with the end of
    the daemon's log after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(every)
    pytest.fail(f"{what} did not happen within {timeout:.0f} s\n{daemon.tail()}")
