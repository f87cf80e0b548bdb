"""Real servers for the ``live`` tests, made the way an operator would run them: each is a Maven Central artifact
fetched with ``mvn`` into ``~/.m2``, started once per test session on a free loopback port (as the system user
:data:`SERVICE_USER` when the server refuses root: CI runs as root, and ``.ci/run`` creates that user), waited for,
and stopped with its whole process group.

Nothing here skips: a server that cannot be fetched or started raises :class:`Unavailable`, and the session
fixtures (root ``conftest.py``) turn that into a skip on a developer machine without Java or Maven and into a
failure under CI (``support.require``).
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import requests

from ingest_assets_tests.support import free_port, stop_group

SERVICE_USER = "ingest-live"  # a system user (``useradd -r``) for servers that refuse to run as root
CACHE = Path(tempfile.gettempdir()) / "ingest-assets-servers"  # unpacked distributions, readable by SERVICE_USER


class Unavailable(Exception):
    """A live server could not be fetched or started; the message says why and what to install."""


def java_home() -> Path:
    """The Java runtime's home (``JAVA_HOME``, else the ``java`` on PATH)."""
    if os.environ.get("JAVA_HOME"):
        return Path(os.environ["JAVA_HOME"])
    java = shutil.which("java")
    if not java:
        raise Unavailable("no Java runtime (java not on PATH; .ci/run installs openjdk-17-jre-headless)")
    return Path(java).resolve().parents[1]


_fetch_lock = threading.Lock()  # one mvn at a time: parallel runs would race on ~/.m2


def maven(coordinates: str) -> Path:
    """The artifact ``group:artifact:version[:type[:classifier]]`` in the local Maven repository, fetched from
    Maven Central with ``mvn dependency:get`` when it is not there yet."""
    group, artifact, version, *rest = coordinates.split(":")
    kind = rest[0] if rest else "jar"
    classifier = f"-{rest[1]}" if len(rest) > 1 else ""
    repository = Path(os.environ.get("MAVEN_REPO_LOCAL") or Path.home() / ".m2" / "repository")
    path = repository / group.replace(".", "/") / artifact / version / f"{artifact}-{version}{classifier}.{kind}"
    with _fetch_lock:
        if path.is_file():
            return path
        mvn = shutil.which("mvn")
        if not mvn:
            raise Unavailable(f"{coordinates} is not in {repository} and Maven is not installed (.ci/run installs maven)")
        command = [mvn, "-q", "-B", "dependency:get", "-Dtransitive=false", f"-Dartifact={coordinates}",
                   f"-Dmaven.repo.local={repository}"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=900)
        if done.returncode != 0 or not path.is_file():
            raise Unavailable(f"mvn could not fetch {coordinates}: {(done.stdout + done.stderr).strip()[-800:]}")
    return path


def unpacked(archive: Path) -> Path:
    """``archive`` (a zip) extracted once into :data:`CACHE` (kept between sessions, readable by every user);
    the folder the archive holds."""
    target = CACHE / archive.stem
    marker = target / ".complete"
    with _fetch_lock:
        if not marker.exists():
            shutil.rmtree(target, ignore_errors=True)
            staging = Path(tempfile.mkdtemp(dir=CACHE.parent if CACHE.exists() else None, prefix="unpack-"))
            with zipfile.ZipFile(archive) as zipped:
                for member in zipped.infolist():
                    extracted = Path(zipped.extract(member, staging))
                    mode = member.external_attr >> 16
                    if mode and not member.is_dir():
                        extracted.chmod((mode & 0o777) | 0o444)
            CACHE.mkdir(parents=True, exist_ok=True)
            CACHE.chmod(0o755)
            staging.chmod(0o755)
            staging.rename(target)
            marker.touch()
    (top,) = [p for p in target.iterdir() if p.is_dir()]
    return top


def service_user() -> list[str]:
    """The command prefix that runs a server as :data:`SERVICE_USER` when we are root, else nothing."""
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam(SERVICE_USER)
    except KeyError:
        raise Unavailable(f"running as root and no user {SERVICE_USER!r} to start the server as "
                          f"(.ci/run creates it: useradd -r {SERVICE_USER})") from None
    return ["runuser", "-u", SERVICE_USER, "--"]


def workdir(name: str) -> Path:
    """A fresh folder for one server's data, logs and configuration: in memory (``/dev/shm``) where there is one,
    since the servers fsync every metadata change and a test's data is small."""
    shm = Path("/dev/shm")
    base = shm if shm.is_dir() and os.access(shm, os.W_OK) else None
    path = Path(tempfile.mkdtemp(prefix=f"ingest-live-{name}-", dir=base))
    path.chmod(0o755)
    return path


def hand_over(path: Path) -> None:
    """Give ``path`` (recursively) to :data:`SERVICE_USER` when the server runs as that user."""
    if os.geteuid() == 0:
        subprocess.run(["chown", "-R", f"{SERVICE_USER}:", str(path)], check=True)


@dataclass
class Server:
    """A running server: its ``url``, process group, working folder and log."""

    name: str
    url: str
    process: subprocess.Popen
    home: Path
    log: Path
    facts: dict = field(default_factory=dict)  # what a test may need to know (credentials, paths, version)

    def stop(self) -> None:
        if self.process.poll() is None:
            stop_group(self.process, timeout=60)
        shutil.rmtree(self.home, ignore_errors=True)

    def tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text("utf-8", "replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


def launch(name: str, command: list[str], *, home: Path, env: dict[str, str] | None = None, cwd: Path | None = None,
           as_service: bool = False) -> tuple[subprocess.Popen, Path]:
    """Start ``command`` in its own session, output to ``home/server.log``; with ``as_service`` as
    :data:`SERVICE_USER` (when we are root)."""
    prefix = service_user() if as_service else []
    log = home / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen([*prefix, *command], stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   env={**os.environ, **(env or {})}, cwd=cwd or home, start_new_session=True)
    return process, log


def wait_ready(server: Server, ready: Callable[[], bool], timeout: float) -> Server:
    """Poll ``ready`` until it holds; a server that exits or never gets ready is stopped and :class:`Unavailable`."""
    deadline = time.monotonic() + timeout
    while True:
        if server.process.poll() is not None:
            tail = server.tail()
            server.stop()
            raise Unavailable(f"{server.name} exited with {server.process.returncode} while starting:\n{tail}")
        try:
            if ready():
                return server
        except requests.RequestException:
            pass
        if time.monotonic() > deadline:
            tail = server.tail()
            server.stop()
            raise Unavailable(f"{server.name} was not ready within {timeout:.0f} s:\n{tail}")
        time.sleep(0.25)


def ports(count: int) -> list[int]:
    """``count`` distinct free loopback ports."""
    found: list[int] = []
    while len(found) < count:
        port = free_port()
        if port not in found:
            found.append(port)
    return found


class LiveServers:
    """The session's live servers by name, each started once and kept until :meth:`stop_all`. :meth:`start` begins
    starting servers in background threads (downloads and JVM start-ups overlap); :meth:`get` waits for one. A
    server that could not start is not tried again (its :class:`Unavailable` is raised to every later caller)."""

    def __init__(self, starters: dict[str, Callable[[], Server]]):
        self._starters = starters
        self._servers: dict[str, Server] = {}
        self._failures: dict[str, Unavailable] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._lock = threading.Lock()

    def _run(self, name: str) -> None:
        try:
            self._servers[name] = self._starters[name]()
        except Unavailable as err:
            self._failures[name] = err
        except Exception as err:  # noqa: BLE001 - reported to the test that needs the server
            self._failures[name] = Unavailable(f"{name} failed to start: {err!r}")

    def start(self, *names: str) -> None:
        with self._lock:
            for name in names:
                if name not in self._threads:
                    self._threads[name] = threading.Thread(target=self._run, args=(name,), daemon=True)
                    self._threads[name].start()

    def get(self, name: str) -> Server:
        self.start(name)
        self._threads[name].join()
        if name in self._failures:
            raise self._failures[name]
        return self._servers[name]

    def stop_all(self) -> None:
        for thread in self._threads.values():
            thread.join()
        for server in self._servers.values():
            server.stop()
        self._servers.clear()
