"""The one small threaded WSGI server: what the platform serves itself (the demo site, the demo OAI-PMH endpoint,
the ResourceSync documents) and the tests' local servers.

    server = WsgiServer(port=0)          # bound at once, so an app that needs its own base URL can be made
    server.start(make_app(server.url))   # serves from a daemon thread; server.shutdown() stops it
    server.run(app)                      # or serves in the foreground until SIGTERM or Ctrl-C

Each request gets a daemon thread; a connection silent for ``idle_seconds`` is closed (a half-open client
held a thread forever). :meth:`run` stops on SIGTERM as on Ctrl-C, within one poll interval, by its own handler
rather than the inherited disposition (a supervisor that started the process with SIGTERM ignored, as a
daemonising parent may, would otherwise leave it running until SIGKILL), then ends the process as SIGTERM does.
"""

from __future__ import annotations

import errno
import os
import signal
import threading
from collections.abc import Callable, Iterable
from socketserver import ThreadingMixIn
from typing import Any, Self
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from ingest_assets.core.errors import ConfigError

IDLE_SECONDS = 30.0
POLL_SECONDS = 0.05  # how long a stop waits at most for the serving loop to notice

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class _Terminated(BaseException):
    """Raised by the SIGTERM handler in the main thread, as Ctrl-C raises KeyboardInterrupt."""


def _terminate(_signum, _frame) -> None:
    raise _Terminated


class PortInUse(ConfigError):
    """The port asked for is taken."""


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True  # a stop never waits for a client that is still connected


class _Handler(WSGIRequestHandler):
    def setup(self) -> None:
        self.timeout = self.server.idle_seconds  # the socket's timeout, set by StreamRequestHandler.setup
        super().setup()

    def get_environ(self) -> dict[str, Any]:
        environ = super().get_environ()
        environ["RAW_URI"] = self.path  # the request target as sent, %-escapes kept (as gunicorn gives it)
        return environ

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - the base class's signature
        if not self.server.quiet:
            super().log_message(format, *args)


class WsgiServer:
    """A threaded WSGI server bound to ``host``:``port`` (0: a free port) as soon as it is made."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, quiet: bool = True, idle_seconds: float = IDLE_SECONDS):
        self.app: WsgiApp | None = None
        try:
            self._server = make_server(host, port, self._dispatch, server_class=_ThreadingServer, handler_class=_Handler)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise PortInUse(f"port {port} on {host} is in use", hint="pass --port 0 (any free port) or another port") from None
            raise
        self._server.quiet, self._server.idle_seconds = quiet, idle_seconds
        self.host = host
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        """``http://host:port`` (no trailing slash)."""
        return f"http://{self.host}:{self.port}"

    def _dispatch(self, environ, start_response):
        return self.app(environ, start_response)

    def start(self, app: WsgiApp) -> Self:
        """Serve ``app`` from a daemon thread."""
        self.app = app
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": POLL_SECONDS},
                                        name=f"wsgi-{self.port}", daemon=True)
        self._thread.start()
        return self

    def run(self, app: WsgiApp) -> None:
        """Serve ``app`` until SIGTERM or Ctrl-C, then stop and close the socket (the main thread only). After
        SIGTERM the process then ends as SIGTERM ends one, at once (status -15): not after a Python teardown of
        every loaded module, which takes seconds on a loaded machine."""
        previous = signal.signal(signal.SIGTERM, _terminate)
        terminated = False
        try:
            self.start(app).join()
        except _Terminated:
            terminated = True
        except KeyboardInterrupt:
            pass
        finally:
            signal.signal(signal.SIGTERM, previous)
            self.shutdown()
        if terminated:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)

    def join(self) -> None:
        """Wait until the serving thread ends (a signal handler's exception ends the wait)."""
        if self._thread is not None:
            self._thread.join()

    def shutdown(self) -> None:
        """Stop serving (waits at most one poll interval) and close the socket."""
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info) -> None:
        self.shutdown()
