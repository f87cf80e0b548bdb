"""The search client's choice of product and its SigV4-signed requests to an AWS OpenSearch Service endpoint.

AWS cannot be reached from a test: the endpoint's requests go, through an HTTP proxy, to a local server that
records them and answers as OpenSearch would; the signature is then recomputed with botocore."""

from __future__ import annotations

import json

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from ingest_assets.core.errors import ConfigError
from ingest_assets.core.search_clients import ELASTICSEARCH, OPENSEARCH, aws_endpoint, connect
from ingest_assets.core.settings import is_search_server

ENDPOINT = "http://search-hub-4fjk2l.eu-west-1.es.amazonaws.com:9200"  # plain HTTP, so the test's proxy sees it


def test_urls_name_servers_and_aws_endpoints():
    assert is_search_server("https://search:9200") and is_search_server("opensearch+http://127.0.0.1:9200")
    assert not is_search_server("/var/lib/ingest/search") and not is_search_server("solr+http://x:8983")
    assert aws_endpoint("https://search-hub-4fjk2l.eu-west-1.es.amazonaws.com") == ("eu-west-1", "es")
    assert aws_endpoint("https://abc123.us-east-1.aoss.amazonaws.com") == ("us-east-1", "aoss")
    assert aws_endpoint("https://search.example.org") is None
    assert connect("opensearch+http://127.0.0.1:9").product == OPENSEARCH  # named: no question to the server
    assert connect("elasticsearch+http://127.0.0.1:9").product == ELASTICSEARCH
    assert connect(ENDPOINT).product == OPENSEARCH
    with pytest.raises(ConfigError, match="invalid search server URL"):
        connect("solr+http://127.0.0.1:8983")


def test_aws_endpoint_requests_are_signed_with_sigv4(http_server, monkeypatch):
    seen = []

    def opensearch(environ, start_response):
        length = int(environ.get("CONTENT_LENGTH") or 0)
        headers = {k[5:].replace("_", "-").lower(): v for k, v in environ.items() if k.startswith("HTTP_")}
        headers.update({"content-type": environ.get("CONTENT_TYPE", ""), "content-length": environ.get("CONTENT_LENGTH", "")})
        seen.append((environ["REQUEST_METHOD"], environ["PATH_INFO"], environ.get("QUERY_STRING", ""), headers,
                     environ["wsgi.input"].read(length)))
        body = json.dumps({"count": 7, "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0}}).encode()
        start_response("200 OK", [("Content-Type", "application/json; charset=UTF-8")])
        return [body]

    proxy = http_server(app=opensearch)
    monkeypatch.setenv("HTTP_PROXY", proxy)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    client = connect(ENDPOINT, request_timeout=10, max_retries=0)
    assert client.count(index="dpla-map4", query={"match_all": {}})["count"] == 7

    [(method, path, query, headers, body)] = seen
    assert headers["host"] == ENDPOINT.removeprefix("http://")  # as signed: AWS checks the signature against it
    assert method == "POST" and path.endswith("/dpla-map4/_count") and json.loads(body) == {"query": {"match_all": {}}}
    authorization = headers["authorization"]
    assert authorization.startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/eu-west-1/es/aws4_request" in authorization
    # the same request signed by botocore with the same headers at the same moment gives the same signature
    signed = authorization.split("SignedHeaders=")[1].split(",")[0].split(";")
    assert {"host", "x-amz-date", "x-amz-content-sha256"} <= set(signed)
    url = (path if path.startswith("http") else f"http://{headers['host']}{path}") + (f"?{query}" if query else "")
    expected = AWSRequest(method="POST", url=url, data=body, headers={h: headers[h] for h in signed})
    expected.context["timestamp"] = headers["x-amz-date"]
    SigV4Auth(Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"), "es", "eu-west-1").add_auth(expected)
    assert authorization.split("Signature=")[1] == expected.headers["Authorization"].split("Signature=")[1]
