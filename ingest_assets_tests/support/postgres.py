"""A private PostgreSQL server from the Debian binaries (initdb + pg_ctl on a free port), which a test can restart or
stop while clients use it (the session's ``pg_url`` fixture and the faults suite's own server)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ingest_assets_tests.support import free_port, require


def pg_bindir() -> Path | None:
    for candidate in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (candidate / "initdb").exists():
            return candidate
    found = shutil.which("initdb")
    return Path(found).parent if found else None


class PostgresServer:
    """``PostgresServer()`` initialises a cluster (trust auth, user ``ingest``, database ``ingest``) and starts it;
    ``url`` is its SQLAlchemy URL; :meth:`restart` (``pg_ctl restart -m fast``: every connection dropped),
    :meth:`stop` and :meth:`start` act on the same data directory; :meth:`remove` stops it and deletes it."""

    def __init__(self):
        bindir = pg_bindir()
        require(bindir is not None, "PostgreSQL server binaries not installed (.ci/run installs them)")
        self.bindir = bindir
        self.base = Path(tempfile.mkdtemp(prefix="ingest-pg-"))  # outside pytest's 0700 tree: postgres must reach it
        self.data, sockets = self.base / "data", self.base / "sock"
        sockets.mkdir()
        self.port = free_port()
        self.as_user: list[str] = []
        if os.geteuid() == 0:  # initdb refuses to run as root
            subprocess.run(["chown", "-R", "postgres", str(self.base)], check=True)
            self.as_user = ["runuser", "-u", "postgres", "--"]
        subprocess.run([*self.as_user, str(bindir / "initdb"), "-D", str(self.data), "-U", "ingest", "--auth=trust", "-E", "UTF8"],
                       check=True, capture_output=True)
        self.options = f"-p {self.port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off"
        self.start()
        subprocess.run([str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "ingest", "ingest"],
                       check=True, capture_output=True)
        self.url = f"postgresql+psycopg://ingest@127.0.0.1:{self.port}/ingest"

    def _ctl(self, *args: str) -> None:
        subprocess.run([*self.as_user, str(self.bindir / "pg_ctl"), "-D", str(self.data), *args], check=True,
                       capture_output=True)

    def start(self) -> None:
        self._ctl("-o", self.options, "-l", str(self.data / "log"), "-w", "start")

    def stop(self) -> None:
        self._ctl("-m", "fast", "-w", "stop")

    def restart(self) -> None:
        self._ctl("-o", self.options, "-l", str(self.data / "log"), "-m", "fast", "-w", "restart")

    def remove(self) -> None:
        remove_cluster({"bindir": str(self.bindir), "base": str(self.base), "as_user": self.as_user})


def remove_cluster(server: dict) -> None:
    """Stop the cluster under ``server["base"]`` (from any process: ``once_per_run``'s last user) and delete it."""
    pg_ctl = Path(server["bindir"]) / "pg_ctl"
    subprocess.run([*server["as_user"], str(pg_ctl), "-D", f"{server['base']}/data", "-m", "fast", "stop"], capture_output=True)
    shutil.rmtree(server["base"], ignore_errors=True)
