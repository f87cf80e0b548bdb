"""``ingest-assets ui`` started by a test and always stopped with its whole process tree: the UI leaves
``dagster dev`` (webserver, daemon, code servers, runs) in a session of its own, out of reach of the test's
signal to the UI's group, so a UI that failed to stop them would leave them running after the test."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import psutil

from ingest_assets_tests.support import wait_for_ui


class RunningUI:
    """An ``ingest-assets ui`` process (started in its own session) and the URL it answers on."""

    def __init__(self, process: subprocess.Popen, base: str, log: Path):
        self.process, self.base, self.log = process, base, log
        self.leftovers: list[str] | None = None  # set by stop(): what outlived the UI (then killed)
        self.sessions: set[int] = set()  # of the UI's tree once it answered (dagster dev's among them)

    def remember(self) -> None:
        """Note the sessions of the UI's tree now (a UI that dies first leaves its tree without a parent)."""
        self.sessions |= {sid for p in _tree(self.process.pid) if (sid := _session(p.pid)) is not None}

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 150) -> list[str]:
        """Send ``sig`` to the UI's process group (as ``kill -- -PGID``), wait up to ``timeout`` for the UI to
        exit, then SIGKILL every process of its tree and of the sessions the tree ran in that is still alive.
        Returns those (pid and command line): empty when the UI stopped everything it started."""
        if self.leftovers is not None:
            return self.leftovers
        self.remember()
        tree, sessions = _tree(self.process.pid), self.sessions
        try:
            os.killpg(self.process.pid, sig)
            self.process.wait(timeout)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
        survivors = {p.pid: p for p in tree if _alive(p)}
        survivors.update({p.pid: p for p in psutil.process_iter() if _session(p.pid) in sessions and _alive(p)})
        self.leftovers = [f"{pid} {_command(p)}" for pid, p in sorted(survivors.items())]
        for p in survivors.values():
            try:
                p.kill()
            except psutil.NoSuchProcess:
                pass
        psutil.wait_procs(list(survivors.values()), timeout=30)
        self.process.wait()
        return self.leftovers


@contextmanager
def running_ui(command: Sequence[str], port: int, *, cwd: Path, env: dict[str, str], log: Path,
               ignore_sigint: bool = False, timeout: float = 300) -> Iterator[RunningUI]:
    """Start ``command`` (an ``ingest-assets ui ... --port port`` line) with its output in ``log``; yield once
    the UI answers. ``ignore_sigint``: started as a script's background job is (SIGINT ignored). Whatever
    happens, the UI and all it started are stopped on the way out (:meth:`RunningUI.stop`, SIGTERM, if the test
    did not stop it)."""
    ignore = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint else None
    with open(log, "wb") as out:
        process = subprocess.Popen(list(command), cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True, preexec_fn=ignore)
    ui = RunningUI(process, f"http://127.0.0.1:{port}", log)
    try:
        wait_for_ui(ui.base, process, timeout, log)
        ui.remember()
        yield ui
    finally:
        ui.stop()


def _tree(pid: int) -> list[psutil.Process]:
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def _session(pid: int) -> int | None:
    try:
        return os.getsid(pid)
    except OSError:
        return None


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _command(process: psutil.Process) -> str:
    try:
        return " ".join(process.cmdline())[:160]
    except psutil.Error:
        return "?"
