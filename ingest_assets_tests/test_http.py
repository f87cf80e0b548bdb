"""The shared HTTP client against a real local server: retries, limits, redirects and the URL guard."""

import pytest

from ingest_assets.core.errors import FetchError
from ingest_assets.core.http import HttpClient, check_url
from ingest_assets_tests.support import raw_tcp_server


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


def test_credentials_never_follow_a_redirect_to_another_origin(http_server):
    """Authorization (and the header names a harvest adds: its secret ones) go to the first URL's origin only."""
    seen = []

    def recording(answer):
        def app(environ, start_response):
            seen.append((environ["PATH_INFO"], {k: v for k, v in environ.items() if k.startswith("HTTP_")}))
            start_response(*answer(environ))
            return [b"there"]
        return app

    other = http_server(app=recording(lambda environ: ("200 OK", [])))
    base = http_server(app=recording(lambda environ: (
        "302 Found", [("Location", "/away" if environ["PATH_INFO"] == "/here" else f"{other}/x")])))
    client = HttpClient(allow_private=True)
    client.credential_headers |= {"x-api-key"}
    headers = {"Authorization": "apikey s3cr3t", "X-Api-Key": "s3cr3t", "Accept": "application/json"}
    assert client.get(f"{base}/here", headers=headers).content == b"there"
    assert [path for path, _ in seen] == ["/here", "/away", "/x"]
    for path, received in seen:
        assert received["HTTP_ACCEPT"] == "application/json"
        kept = path != "/x"  # a same-origin hop keeps them, the hop to another origin drops them
        assert ("HTTP_AUTHORIZATION" in received, "HTTP_X_API_KEY" in received) == (kept, kept), path


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


def test_connection_broken_mid_body_is_retried(tmp_path):
    import hashlib

    def answer(conn):
        conn.recv(65536)
        if len(attempts) % 2:  # every other answer promises 100 bytes, sends 10 and hangs up
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
        else:
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\nwhole")

    port, attempts = raw_tcp_server(answer)
    client, url = HttpClient(allow_private=True, backoff=0.01), f"http://127.0.0.1:{port}/"
    assert client.get(url).content == b"whol" and len(attempts) == 2
    got = client.download(url, tmp_path / "body", hashes=("md5",))  # the file restarts: no bytes of the broken try
    assert (tmp_path / "body").read_bytes() == b"whol" and got.size == 4 and len(attempts) == 4
    assert got.digests == {"md5": hashlib.md5(b"whol").hexdigest()}


def test_retry_after_as_an_http_date_is_honoured_and_capped(http_server, monkeypatch):
    import math
    import time
    from email.utils import formatdate

    import ingest_assets.core.http

    arrivals = []
    not_before = math.ceil(time.time()) + 2
    busy = [("503 Busy", [("Retry-After", formatdate(not_before, usegmt=True))], b"")]

    def app(environ, start_response):
        arrivals.append(time.time())
        status, headers, body = busy.pop(0) if busy else ("200 OK", [], b"fine")
        start_response(status, headers)
        return [body]

    base = http_server(app=app)
    assert HttpClient(allow_private=True, backoff=0.01).get(f"{base}/").content == b"fine"
    assert len(arrivals) == 2 and arrivals[1] >= not_before  # waited for the date, not the 0.01 s backoff

    monkeypatch.setattr(ingest_assets.core.http, "MAX_RETRY_AFTER", 0.1)  # an hour's Retry-After waits only the cap
    busy.append(("429 Slow down", [("Retry-After", "3600")], b""))
    assert HttpClient(allow_private=True, backoff=0.01).get(f"{base}/").content == b"fine"
    assert len(arrivals) == 4


def test_guard_judges_the_host_the_connection_uses(http_server, monkeypatch):
    import socket

    app, calls = app_factory({"/": [("200 OK", [], b"internal")]})
    port = http_server(app=app).rsplit(":", 1)[1]
    real_getaddrinfo = socket.getaddrinfo

    def resolve(host, *args, **kwargs):  # public.example is a public address; everything else resolves as usual
        if host == "public.example":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", 80))]
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    for url in (
        f"http://127.0.0.1:{port}\\@public.example/",  # urlsplit saw public.example; urllib3 connects to 127.0.0.1
        f"http://public.example\\@127.0.0.1:{port}/",
        f"http://user@127.0.0.1:{port}/",
        f"http://public.example%2f@127.0.0.1:{port}/",
        f"http://127.0.0.1:{port}\t/",
    ):
        with pytest.raises(FetchError) as err:
            HttpClient(retries=0).get(url)
        assert not err.value.retryable and "internal" not in str(err.value)
    assert calls == []


def test_the_connection_goes_to_the_address_that_was_checked(http_server, monkeypatch):
    """DNS rebinding: the name answers a public address to the guard, then 127.0.0.1. The socket is opened to
    the public address the guard approved (here recorded, not reached), never to the internal server."""
    import socket

    import urllib3.util.connection

    app, calls = app_factory({"/": [("200 OK", [], b"internal")]})
    port = int(http_server(app=app).rsplit(":", 1)[1])
    answers = iter(["93.184.216.34"] + ["127.0.0.1"] * 10)
    real_getaddrinfo, real_connect = socket.getaddrinfo, urllib3.util.connection.create_connection
    connected = []

    def resolve(host, *args, **kwargs):
        if host == "rebinding.example":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (next(answers), port))]
        return real_getaddrinfo(host, *args, **kwargs)

    def connect(address, *args, **kwargs):
        connected.append(address)
        if address[0] == "93.184.216.34":
            raise OSError("unreachable in this test")
        return real_connect(address, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    monkeypatch.setattr(urllib3.util.connection, "create_connection", connect)
    with pytest.raises(FetchError) as err:
        HttpClient(retries=0, timeout=(2, 2)).get(f"http://rebinding.example:{port}/")
    assert err.value.retryable and "internal" not in str(err.value)
    assert connected == [("93.184.216.34", port)] and calls == []


def test_a_pinned_connection_keeps_the_host_name_and_follows_checked_redirects(http_server, monkeypatch):
    """A public name pinned to the address the guard saw (here the test server's, as if public): the request
    carries the original Host, and each redirect hop is checked and pinned again."""
    import ipaddress
    import socket

    import ingest_assets.core.http

    seen = []

    def app(environ, start_response):
        seen.append((environ["PATH_INFO"], environ.get("HTTP_HOST")))
        if environ["PATH_INFO"] == "/old":
            start_response("302 Found", [("Location", "http://second.example:%s/new" % environ["SERVER_PORT"])])
            return [b""]
        start_response("200 OK", [])
        return [b"moved here"]

    port = int(http_server(app=app).rsplit(":", 1)[1])
    real_getaddrinfo = socket.getaddrinfo
    lookups = []

    def resolve(host, *args, **kwargs):
        if host in ("first.example", "second.example"):
            lookups.append(host)
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    # 127.0.0.1 counts as public here, so the names are pinned to the local test server
    monkeypatch.setattr(ingest_assets.core.http, "_addresses_within", lambda address: [ipaddress.ip_address("93.184.216.34")])
    response = HttpClient(retries=0).get(f"http://first.example:{port}/old")
    assert response.content == b"moved here"
    assert seen == [("/old", f"first.example:{port}"), ("/new", f"second.example:{port}")]
    assert lookups == ["first.example", "second.example"]  # one lookup per hop: the guard's, none at connect



def test_a_trickling_body_ends_at_the_response_deadline(http_server):
    """Each byte arrives within the read timeout, so only a wall-clock limit per response ends it."""
    import time

    def trickle(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])

        def body():
            for _ in range(100):
                time.sleep(0.1)
                yield b"x"

        return body()

    base = http_server(app=trickle)
    started = time.monotonic()
    with pytest.raises(FetchError) as err:
        HttpClient(allow_private=True, retries=0, timeout=(2, 2), max_seconds=1).get(f"{base}/slow")
    assert "not complete within 1 s" in str(err.value) and err.value.retryable
    assert time.monotonic() - started < 5  # not the 10 s the body would take
    with HttpClient(allow_private=True, retries=0, max_seconds=1).stream(f"{base}/slow") as (response, _):
        with pytest.raises(FetchError, match="not complete within"):
            for _ in response.iter_content(1):
                pass


def body_app(pieces):
    """A WSGI app answering every path with ``pieces`` (bytes, sent one after another) and their Content-Length."""

    def app(environ, start_response):
        start_response("200 OK", [("Content-Length", str(sum(len(p) for p in pieces)))])
        return iter(pieces)

    return app


@pytest.mark.parametrize("limit", [4096, 4095])
def test_a_body_exactly_at_the_cap_passes_and_one_byte_over_fails(http_server, tmp_path, limit):
    from ingest_assets.core.errors import TooLargeError

    base = http_server(app=body_app([b"x" * 1000, b"y" * 3096]))  # 4096 bytes in two pieces
    client = HttpClient(allow_private=True, retries=0)
    dest = tmp_path / "body"
    if limit == 4096:
        assert client.get(f"{base}/b", max_bytes=limit).content == b"x" * 1000 + b"y" * 3096
        assert client.download(f"{base}/b", dest, max_bytes=limit).size == 4096 and dest.stat().st_size == 4096
        with client.open(f"{base}/b", max_bytes=limit) as body:
            assert len(body.read()) == 4096
        return
    for read in (lambda: client.get(f"{base}/b", max_bytes=limit), lambda: client.download(f"{base}/b", dest, max_bytes=limit)):
        with pytest.raises(TooLargeError) as err:
            read()
        assert isinstance(err.value, FetchError) and not err.value.retryable and err.value.limit == 4095
        assert str(err.value) == f"a body larger than 4095 bytes (file '{base}/b')"
    assert not dest.exists()  # a refused download leaves nothing behind


def test_download_digests_equal_hashlib_over_a_multi_chunk_body(http_server, tmp_path):
    import hashlib
    import os

    data = os.urandom(3 * 1024 * 1024 + 17)
    pieces = [data[:1000], data[1000:70_000], data[70_000:2_500_001], data[2_500_001:]]  # across the parallel threshold
    base = http_server(app=body_app(pieces))
    client = HttpClient(allow_private=True)
    got = client.download(f"{base}/data", tmp_path / "data", hashes=("md5", "sha1", "sha256"), max_bytes=len(data))
    assert got.digests == {name: hashlib.new(name, data).hexdigest() for name in ("md5", "sha1", "sha256")}
    assert got.size == len(data) and (tmp_path / "data").read_bytes() == data
    assert got.url == f"{base}/data" and got.status == 200 and got.headers["content-length"] == str(len(data))
    with client.open(f"{base}/data", hashes=("sha1",)) as body:
        assert b"".join(body.chunks()) == data
        assert body.digests() == {"sha1": hashlib.sha1(data).hexdigest()} and body.size == len(data)


def test_a_50_mb_download_streams_to_disk_in_flat_memory(http_server, tmp_path):
    import hashlib
    import tracemalloc

    piece, count = bytes(range(256)) * 4096, 50  # 1 MiB, sent 50 times by the server (one object, no copies)
    base = http_server(app=body_app([piece] * count))
    expected = hashlib.sha256()
    for _ in range(count):
        expected.update(piece)
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        got = HttpClient(allow_private=True).download(f"{base}/big", tmp_path / "big", hashes=("sha256",))
        peak = tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()
    assert got.size == len(piece) * count == (tmp_path / "big").stat().st_size
    assert got.digests["sha256"] == expected.hexdigest()
    assert peak < 16 * 1024 * 1024  # a body held in memory would take 50 MB and more


def test_context_fills_only_missing_fields_and_keeps_type_retryability_and_cause(http_server):
    from ingest_assets.core.errors import IngestError, ParseError, context

    app, _ = app_factory({"/down": [("503 Busy", [], b"try later")]})
    url = f"{http_server(app=app)}/down"
    with pytest.raises(FetchError) as err:
        with context(provider="p1", file="not this", record="r1", doing="fetching page 3"):
            HttpClient(allow_private=True, retries=0).get(url)
    error = err.value
    assert type(error) is FetchError and error.status == 503 and error.retryable and error.body == b"try later"
    assert (error.provider, error.file, error.record) == ("p1", url, "r1")  # the URL the client named stays
    assert str(error) == f"HTTP 503 fetching page 3 (provider 'p1', file '{url}', record 'r1')"

    with pytest.raises(FetchError) as err:  # an error with a cause, already naming its provider
        with context(provider="outer"):
            with context(provider="inner"):
                check_url("http://example.org:99999/")
    assert err.value.provider == "inner" and not err.value.retryable and err.value.__cause__ is not None

    cause = ValueError("bad byte")
    with pytest.raises(ParseError) as err:
        with context(file="f.xml"):
            raise ParseError("not XML", provider="p2") from cause
    assert err.value.__cause__ is cause and (err.value.provider, err.value.file) == ("p2", "f.xml")
    assert str(err.value) == "not XML (provider 'p2', file 'f.xml')"

    with pytest.raises(KeyError), context(provider="p3"):  # anything else passes untouched
        raise KeyError("x")
    assert IngestError("x").add_context(record="r").record == "r"


def test_a_source_that_drops_each_connection_is_tried_retries_plus_one_times_each_retry_one_line(caplog):
    """Each try is accepted and hung up on at once. The Retry retries it; the client does not retry that again
    around it (it did: 4 x 4 tries), and each retry is one line naming the URL, why and the wait."""
    port, accepted = raw_tcp_server(lambda conn: None)  # accepted, then closed unanswered
    url = f"http://127.0.0.1:{port}/oai"
    with caplog.at_level("WARNING", logger="ingest_assets.core.http"), pytest.raises(FetchError) as err:
        HttpClient(allow_private=True, backoff=0.01).get(url, params={"verb": "Identify"})
    assert len(accepted) == 4 and err.value.retryable and err.value.status is None
    assert str(err.value).startswith(f"cannot reach 127.0.0.1:{port}: ") and url in str(err.value)
    lines = [r.getMessage() for r in caplog.records if r.name == "ingest_assets.core.http"]
    assert [line.split("; ")[-1] for line in lines] == ["retry 1 of 3 at once", "retry 2 of 3 in 0.02 s",
                                                        "retry 3 of 3 in 0.04 s"]
    assert all(line.startswith(f"GET {url}?verb=Identify: ") for line in lines), lines


def test_a_refused_connection_is_named_as_such():
    import socket

    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there: the connection is refused
    with pytest.raises(FetchError) as err:
        HttpClient(allow_private=True, retries=1, backoff=0.01).get(f"http://127.0.0.1:{port}/oai")
    assert str(err.value) == (f"cannot reach 127.0.0.1:{port}: connection refused (tried 2 times) "
                              f"(file 'http://127.0.0.1:{port}/oai')")
