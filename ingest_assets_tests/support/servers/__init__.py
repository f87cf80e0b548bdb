"""Real servers for the ``live`` tests, made the way an operator would run them: each is a Maven Central artifact
downloaded once into the local Maven repository (``~/.m2/repository``), started on a free loopback port (as the
system user :data:`SERVICE_USER` when the server refuses root: CI runs as root, and ``.ci/run`` creates that
user), waited for, and stopped with its whole process group. :mod:`.session` shares each server among all the
pytest processes of one run.

Nothing here skips: a server that cannot be fetched or started raises :class:`Unavailable`, and the session
fixtures (root ``conftest.py``) turn that into a skip on a developer machine without Java and into a failure
under CI (``support.require``).
"""

from __future__ import annotations

import hashlib
import os
import pwd
import shutil
import subprocess
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import requests

from ingest_assets_tests.support import free_port, locked, stop_group, stop_pid

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


CENTRAL = "https://repo1.maven.org/maven2"
_fetch_lock = threading.Lock()  # one download or unpacking at a time per process
_PROCESS_LOCKS = Path(tempfile.gettempdir())  # where the cross-process locks of the shared caches live


def local_repository() -> Path:
    """The local Maven repository the artifacts are cached in: ``MAVEN_REPO_LOCAL``, else ``~/.m2/repository``
    (shared with Maven itself). On a fresh machine it is empty and every artifact is downloaded once."""
    return Path(os.environ.get("MAVEN_REPO_LOCAL") or Path.home() / ".m2" / "repository")


def maven(coordinates: str) -> Path:
    """The artifact ``group:artifact:version[:type[:classifier]]`` in the local Maven repository, downloaded from
    Maven Central when it is not there yet (straight over HTTPS, its published SHA-1 checked, laid out as Maven
    lays it out). Maven itself is not used: its start-up and plugin resolution took 44 s for a 200 KB jar on the
    loaded 2-core machine, the HTTPS download of the same file under a second."""
    group, artifact, version, *rest = coordinates.split(":")
    kind = rest[0] if rest else "jar"
    classifier = f"-{rest[1]}" if len(rest) > 1 else ""
    relative = f"{group.replace('.', '/')}/{artifact}/{version}/{artifact}-{version}{classifier}.{kind}"
    path = local_repository() / relative
    if path.is_file():
        return path
    with locked(_PROCESS_LOCKS / f"ingest-maven-{artifact}-{version}.lock"):
        if not path.is_file():
            _download(f"{CENTRAL}/{relative}", path, coordinates)
    return path


def _download(url: str, path: Path, coordinates: str) -> None:
    try:
        expected = requests.get(f"{url}.sha1", timeout=30)
        expected.raise_for_status()
        digest = hashlib.sha1()
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}.part")
        with requests.get(url, stream=True, timeout=(10, 120)) as answer, partial.open("wb") as out:
            answer.raise_for_status()
            for chunk in answer.iter_content(1 << 20):
                digest.update(chunk)
                out.write(chunk)
    except (requests.RequestException, OSError) as err:
        raise Unavailable(f"could not download {coordinates} from Maven Central ({url}): {err}") from err
    if digest.hexdigest() != expected.text.split()[0].strip().lower():
        partial.unlink(missing_ok=True)
        raise Unavailable(f"{coordinates}: the download does not match Maven Central's SHA-1 ({url}.sha1)")
    partial.replace(path)


def unpacked(archive: Path) -> Path:
    """``archive`` (a zip) extracted once into :data:`CACHE` (kept between sessions, readable by every user);
    the folder the archive holds."""
    target = CACHE / archive.stem
    marker = target / ".complete"
    with _fetch_lock, locked(_PROCESS_LOCKS / f"ingest-unpack-{archive.stem}.lock"):
        if not marker.exists():
            shutil.rmtree(target, ignore_errors=True)
            CACHE.mkdir(parents=True, exist_ok=True)
            CACHE.chmod(0o755)
            staging = Path(tempfile.mkdtemp(dir=CACHE, prefix=".unpack-"))
            with zipfile.ZipFile(archive) as zipped:
                for member in zipped.infolist():
                    extracted = Path(zipped.extract(member, staging))
                    mode = member.external_attr >> 16
                    if mode and not member.is_dir():
                        extracted.chmod((mode & 0o777) | 0o444)
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


# JVM options for a quick start of a small test server: the client compiler only (the optimizing compiler spends
# CPU seconds on code a test runs a few times) and the serial collector (no GC threads competing for 2 cores)
FAST_START = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]

_CHILDREN: dict[int, subprocess.Popen] = {}  # servers this process started, by process group, to reap them


@dataclass
class Server:
    """A running server: its ``url``, process group ``pid``, working folder and log, and what a test may need to
    know of it (``facts``: credentials, paths, version, ``seconds``: how long it took to be ready)."""

    name: str
    url: str
    pid: int
    home: Path
    log: Path
    facts: dict = field(default_factory=dict)

    def record(self) -> dict:
        """The server as JSON, for the other processes of the run."""
        return {**asdict(self), "home": str(self.home), "log": str(self.log)}

    @classmethod
    def from_record(cls, record: dict) -> "Server":
        return cls(**{**record, "home": Path(record["home"]), "log": Path(record["log"])})

    def running(self) -> bool:
        child = _CHILDREN.get(self.pid)
        if child is not None:
            return child.poll() is None
        try:
            os.kill(self.pid, 0)
            return Path(f"/proc/{self.pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
        except (ProcessLookupError, FileNotFoundError):
            return False

    def stop(self, timeout: float = 60) -> None:
        """SIGTERM to the server's process group, SIGKILL if it lingers; its working folder removed."""
        child = _CHILDREN.pop(self.pid, None)
        if child is not None:
            stop_group(child, timeout)
        else:  # started by another process of the run
            stop_pid(self.pid, timeout)
        shutil.rmtree(self.home, ignore_errors=True)

    def cpu_seconds(self) -> float:
        """CPU time (user + system) the server's processes have used so far: what starting it costs a machine,
        whatever else runs beside it."""
        ticks = 0
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(") ", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[2]) == self.pid:  # the process group
                ticks += int(fields[11]) + int(fields[12])
        return ticks / os.sysconf("SC_CLK_TCK")

    def tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text("utf-8", "replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


def launch(name: str, command: list[str], *, home: Path, env: dict[str, str] | None = None, cwd: Path | None = None,
           as_service: bool = False) -> tuple[int, Path]:
    """Start ``command`` in its own session, output to ``home/server.log``; with ``as_service`` as
    :data:`SERVICE_USER` (when we are root). Returns the process group and the log."""
    prefix = service_user() if as_service else []
    log = home / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen([*prefix, *command], stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   env={**os.environ, **(env or {})}, cwd=cwd or home, start_new_session=True)
    _CHILDREN[process.pid] = process
    return process.pid, log


def stop_launched(keep: set[int], timeout: float = 10) -> None:
    """Stop every server this process launched that still runs, but those in ``keep`` (process groups)."""
    for pid, child in list(_CHILDREN.items()):
        if pid not in keep and child.poll() is None:
            stop_group(child, timeout)
            _CHILDREN.pop(pid, None)


def wait_ready(server: Server, ready: Callable[[], bool], timeout: float) -> Server:
    """Poll ``ready`` until it holds; a server that exits or never gets ready is stopped and :class:`Unavailable`."""
    deadline = time.monotonic() + timeout
    while True:
        if not server.running():
            tail = server.tail()
            server.stop()
            raise Unavailable(f"{server.name} exited while starting:\n{tail}")
        try:
            if ready():
                server.facts["cpu_seconds"] = round(server.cpu_seconds(), 1)
                return server
        except requests.RequestException:
            pass
        if time.monotonic() > deadline:
            tail = server.tail()
            server.stop()
            raise Unavailable(f"{server.name} was not ready within {timeout:.0f} s:\n{tail}")
        time.sleep(0.25)


def ports(count: int) -> list[int]:
    """``count`` distinct free loopback ports (each claimed: see :func:`free_port`)."""
    return [free_port() for _ in range(count)]
