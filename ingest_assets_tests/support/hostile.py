"""The reliability suite's gate: a WSGI wrapper whose answers can be made to hang mid-body (a fault no real
server produces on cue)."""

from __future__ import annotations

import threading
from collections.abc import Callable


class Gate:
    """Wraps a WSGI app: requests matching ``hang_when`` block (until released) after sending the first
    ``send_first`` bytes of the body; ``reached`` is set when such a request arrives."""

    def __init__(self, app):
        self.app, self.hang_when, self.send_first = app, None, 0
        self.reached, self.release = threading.Event(), threading.Event()

    def hang(self, when: Callable[[dict], bool], send_first: int = 0) -> None:
        self.hang_when, self.send_first = when, send_first
        self.reached.clear()
        self.release.clear()

    def open(self) -> None:
        self.hang_when = None
        self.release.set()

    def __call__(self, environ, start_response):
        if self.hang_when is None or not self.hang_when(environ):
            return self.app(environ, start_response)
        body = b"".join(self.app(environ, start_response))

        def trickle():
            yield body[: self.send_first]
            self.reached.set()
            self.release.wait(120)
            yield body[self.send_first:]

        return trickle()
