"""The one threaded WSGI server: bound at once, raw request targets kept, a taken port named, and a foreground
server that stops on SIGTERM by its own handler."""

import os
import signal
import subprocess
import sys
from urllib.error import HTTPError
from urllib.request import urlopen

import pytest

from ingest_assets.core.wsgi import PortInUse, WsgiServer


def echo(environ, start_response):
    body = f"{environ['PATH_INFO']} {environ['RAW_URI']}".encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]


def test_serves_from_a_thread_keeps_the_raw_target_and_names_a_taken_port():
    with WsgiServer().start(echo) as server:
        assert server.url == f"http://127.0.0.1:{server.port}"
        with urlopen(f"{server.url}/rest/a%3Ab?x=1", timeout=5) as response:
            assert response.read() == b"/rest/a:b /rest/a%3Ab?x=1"
        with pytest.raises(PortInUse, match=f"port {server.port} on 127.0.0.1 is in use"):
            WsgiServer(port=server.port)


def _ignore_sigterm() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # as a parent that ignores it passes it on through exec


def test_serve_resourcesync_stops_on_sigterm_even_when_started_with_it_ignored(tmp_path):
    (tmp_path / "registry.yaml").write_text("{}\n")
    env = {**os.environ, "INGEST_HOME": str(tmp_path / "home"), "INGEST_REGISTRY": str(tmp_path / "registry.yaml")}
    server = subprocess.Popen([sys.executable, "-m", "ingest_assets.cli", "serve-resourcesync", "--port", "0"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              preexec_fn=_ignore_sigterm, start_new_session=True)
    try:
        line = server.stdout.readline()
        assert line.startswith("serving ResourceSync on http://127.0.0.1:"), line
        with pytest.raises(HTTPError) as missing:  # serving: nothing is published yet
            urlopen(line.split()[-1], timeout=5)
        assert missing.value.code == 404
    except Exception:
        os.killpg(server.pid, signal.SIGKILL)
        raise
    finally:
        server.terminate()
        assert server.wait(timeout=10) == -signal.SIGTERM  # stopped by its handler, then ended as SIGTERM ends a process
