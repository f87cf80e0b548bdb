"""Helpers the tests share (imported by tests and conftests; fixtures stay in conftest.py, and no test imports
one): paths, ports, skips, server processes and workers; the fake Elasticsearch is in :mod:`.elasticsearch`."""

from __future__ import annotations

import fcntl
import io
import os
import random
import resource
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

SHARED_FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures"
SHARED_MISSING = f"{SHARED_FIXTURES} not found (a clone without ../shared)"  # the skip reason of shared_fixtures
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _claimable_ports() -> range:
    """The loopback ports :func:`free_port` hands out: the larger span outside the kernel's ephemeral range, which
    outgoing connections and every port-0 bind (Spark's, the servers' own) draw from."""
    try:
        low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    except (OSError, ValueError):
        low, high = 32768, 60999  # Linux's default
    return max(range(10000, low), range(high + 1, 65536), key=len)


PORT_CLAIMS = Path(tempfile.gettempdir()) / "ingest-assets-ports"  # one file per handed-out port: the claimant's pid


def free_port() -> int:
    """A loopback port free now, for a server that binds it seconds later (a JVM after its start-up). It is taken
    outside the ephemeral range, so no outgoing connection or port-0 bind of the busy test run takes it meanwhile
    (a live Elasticsearch once lost its transport port that way), and claimed under a lock across every process
    of the machine's test runs, so no two callers get the same port while the claimant lives."""
    PORT_CLAIMS.mkdir(exist_ok=True)
    span = _claimable_ports()
    with locked(PORT_CLAIMS / ".lock"):
        for _ in range(1000):
            port = random.choice(span)
            claim = PORT_CLAIMS / str(port)
            if claim.exists() and _alive(claim.read_text()):
                continue
            with socket.socket() as sock:
                try:
                    sock.bind(("127.0.0.1", port))
                except OSError:
                    continue
            claim.write_text(str(os.getpid()))
            return port
    raise RuntimeError(f"no free loopback port in {span.start}-{span.stop - 1} after 1,000 tries")


def _alive(pid: str) -> bool:
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` (created if missing) held by this thread, across every process that asks
    (pytest-xdist workers, a second test run on the same machine)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def raw_tcp_server(answer: Callable[[socket.socket], None]) -> tuple[int, list[int]]:
    """A listener on 127.0.0.1 that hands each connection to ``answer`` (then closes it), from a daemon thread, for
    what no well-behaved server sends (a body cut short, a connection dropped at once); returns its port and the
    list of connections it accepted so far."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    accepted: list[int] = []

    def serve() -> None:
        while True:
            conn, _ = listener.accept()
            accepted.append(1)
            with conn:
                answer(conn)

    threading.Thread(target=serve, daemon=True).start()
    return listener.getsockname()[1], accepted


def require(condition: bool, reason: str) -> None:
    """Skip on a developer machine that lacks something; in CI a missing prerequisite is a failure."""
    if not condition:
        if IN_CI:
            pytest.fail(f"CI prerequisite missing: {reason}")
        pytest.skip(reason)


def alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie, exited but not yet reaped by its parent, does not)."""
    try:
        os.kill(pid, 0)
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (ProcessLookupError, OSError):
        return False


def stop_pid(pid: int, timeout: float = 30, sig: int = signal.SIGTERM) -> None:
    """Stop the process group led by ``pid`` (started with ``start_new_session=True``) from any process, its parent
    or not: ``sig``, then SIGKILL if it lingers."""
    for signal_now, wait in ((sig, timeout), (signal.SIGKILL, 10)):
        try:
            os.killpg(pid, signal_now)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if not alive(pid):
            return


def stop_group(process: subprocess.Popen, timeout: float = 30, sig: int = signal.SIGTERM) -> None:
    """Stop a server this process started with ``start_new_session=True`` (:func:`stop_pid`), and reap it."""
    stop_pid(process.pid, timeout, sig)
    process.wait()


class Worker:
    """A Python worker process running ``code`` in its own session (SIGKILL reaches the whole group);
    ``memory_mb`` caps its address space (RLIMIT_AS)."""

    def __init__(self, code: str, env: dict[str, str], memory_mb: int | None = None):
        def cap() -> None:
            if memory_mb:
                limit = memory_mb * 1024 * 1024
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

        self.process = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, **env}, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=cap)

    def kill(self) -> None:
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(30)

    def finish(self, timeout: float = 240) -> tuple[int, str, str]:
        try:
            out, err = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise
        return self.process.returncode, out, err


def run_with_reader_gone(*args: str, **options) -> subprocess.CompletedProcess:
    """``ingest-assets *args`` with its stdout a pipe whose reader has already gone (as ``| head`` leaves it once
    ``head`` has its lines): every write meets EPIPE."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([sys.executable, "-m", "ingest_assets.cli", *args], stdout=write, stderr=subprocess.PIPE,
                              text=True, timeout=120, **options)
    finally:
        os.close(write)


def wait_for_ui(base: str, process: subprocess.Popen, timeout: float = 300, log: Path | None = None) -> None:
    """Wait until the Dagster webserver at ``base`` answers (``ingest-assets ui`` started as ``process``); fail
    with the end of ``log`` if the process exits first."""
    import requests

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the UI exited with status {process.returncode}: {log.read_text()[-2000:] if log else ''}")
        try:
            if requests.get(f"{base}/server_info", timeout=2).ok:
                return
        except requests.ConnectionError:
            time.sleep(0.5)
    pytest.fail(f"the UI at {base} did not answer within {timeout:.0f} s")


def next_second(after: datetime) -> str:
    """A TemplateParameterIndex time (whole seconds) later than ``after`` and already past (waits for it)."""
    moment = after.replace(microsecond=0) + timedelta(seconds=1)
    wait = (moment - datetime.now(timezone.utc)).total_seconds()
    if wait > 0:
        time.sleep(wait + 0.01)
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def wait_for(what: str, condition: Callable[[], bool], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not happen within {timeout:.0f} s")
        time.sleep(0.05)


def tar_bytes(members, mode: str = "w:gz") -> bytes:
    """A tar archive of ``(name, tarfile type, payload)`` members: a regular file's payload is its content,
    a link's is its target."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode) as archive:
        for name, kind, payload in members:
            info = tarfile.TarInfo(name)
            info.type = kind
            if kind == tarfile.REGTYPE:
                info.size = len(payload)
                archive.addfile(info, io.BytesIO(payload))
            else:
                info.linkname = payload.decode() if kind in (tarfile.SYMTYPE, tarfile.LNKTYPE) else ""
                archive.addfile(info)
    return buffer.getvalue()


def zip_bytes(members) -> bytes:
    """A deflated zip of ``(name, data, st_mode)`` members (the mode says file, directory or symlink)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data, mode in members:
            info = zipfile.ZipInfo(name)
            info.external_attr = mode << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return buffer.getvalue()


def shared_skips_line(skipped) -> str | None:
    """The terminal summary's line for the tests skipped because ``../shared/fixtures`` is missing (None if none
    was): one line saying why, where pytest lists hundreds of skips."""
    missing = sum(1 for report in skipped if SHARED_MISSING in str(report.longrepr))
    if not missing:
        return None
    return (f"{missing} test{'s' * (missing != 1)} skipped: ../shared/fixtures not found (third-party fixtures, read "
            "in place: a clone without them skips these; CI fails instead; see the README on tests)")
