"""The shared HTTP client against a real local server: retries, limits, redirects and the URL guard."""

import pytest

from ingest_assets.errors import FetchError
from ingest_assets.http import HttpClient, check_url


def app_factory(script):
    """A WSGI app answering each path with the next (status, headers, body) of its script."""
    calls = []

    def app(environ, start_response):
        path = environ["PATH_INFO"]
        calls.append(path)
        steps = script[path]
        status, headers, body = steps.pop(0) if len(steps) > 1 else steps[0]
        start_response(status, headers)
        return [body]

    return app, calls


def test_retries_5xx_with_backoff_then_succeeds(http_server):
    app, calls = app_factory({"/x": [("503 Busy", [("Retry-After", "0")], b""), ("502 Bad", [], b""), ("200 OK", [], b"fine")]})
    base = http_server(app=app)
    response = HttpClient(allow_private=True, backoff=0.01).get(f"{base}/x")
    assert response.content == b"fine" and calls == ["/x", "/x", "/x"]


def test_final_error_keeps_status_body_and_retryability(http_server):
    oai_error = b'<OAI-PMH><error code="badArgument">bad</error></OAI-PMH>'
    app, calls = app_factory({"/gone": [("404 Not Found", [], oai_error)], "/down": [("500 Oops", [], b"x")]})
    base = http_server(app=app)
    client = HttpClient(allow_private=True, backoff=0.01, retries=2)
    with pytest.raises(FetchError) as err:
        client.get(f"{base}/gone")
    assert err.value.status == 404 and not err.value.retryable and err.value.body == oai_error
    assert calls == ["/gone"]  # a 404 is not retried
    with pytest.raises(FetchError) as err:
        client.get(f"{base}/down")
    assert err.value.status == 500 and err.value.retryable and calls.count("/down") == 3


def test_size_limit_and_redirect_hops(http_server):
    app, _ = app_factory({
        "/a": [("301 Moved", [("Location", "/b")], b"")],
        "/b": [("302 Found", [("Location", "/c")], b"")],
        "/c": [("200 OK", [], b"x" * 5000)],
    })
    base = http_server(app=app)
    client = HttpClient(allow_private=True)
    response = client.get(f"{base}/a")
    assert response.url == f"{base}/c" and [s for _, s in response.history] == [301, 302]
    with pytest.raises(FetchError, match="larger than 1000 bytes"):
        client.get(f"{base}/a", max_bytes=1000)


def test_url_guard_refuses_hostile_urls(http_server):
    base = http_server(app=app_factory({"/": [("200 OK", [], b"")]})[0])
    for url in (
        "file:///etc/passwd", "ftp://example.org/x", "gopher://x", base, "http://10.1.2.3/x", "http://[::1]/",
        "http://[64:ff9b::7f00:1]/", "http://[2002:7f00:1::]/", "http://[::ffff:10.0.0.1]/",  # IPv4 inside IPv6
        "http://example.org:99999/", "http://[not-ipv6/",  # malformed: a FetchError, not a bare ValueError
    ):
        with pytest.raises(FetchError) as err:
            check_url(url)
        assert not err.value.retryable
    check_url(base, allow_private=True)
    app, _ = app_factory({"/r": [("302 Found", [("Location", "file:///etc/passwd")], b"")]})
    with pytest.raises(FetchError, match="scheme 'file'"):
        HttpClient(allow_private=True).get(f"{http_server(app=app)}/r")


def test_connection_broken_mid_body_is_retried():
    import socket
    import threading

    attempts = []
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def serve():
        while True:
            conn, _ = listener.accept()
            conn.recv(65536)
            attempts.append(1)
            if len(attempts) == 1:  # promise 100 bytes, send 10, hang up
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
            else:
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\nwhole")
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    response = HttpClient(allow_private=True, backoff=0.01).get(f"http://127.0.0.1:{listener.getsockname()[1]}/")
    assert response.content == b"whol" and len(attempts) == 2
