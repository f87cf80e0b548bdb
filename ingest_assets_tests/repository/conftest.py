"""Repository test fixtures: the fakes of :mod:`ingest_assets_tests.support.repository` (the MediaWiki API; the
TemplateParameterIndex is the root ``template_index`` fixture, which the faults suite shares: services with no
distribution to run) on local servers, and the live Fedora 6.1 behind the recording proxy."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from types import SimpleNamespace
from urllib.parse import urlsplit

import pytest
import requests

from ingest_assets.core.http import HttpClient
from ingest_assets.repository.fedora import FedoraRepository
from ingest_assets_tests.support.repository import THALICTRUM, MediaWikiApiApp
from ingest_assets_tests.support.servers.proxy import RecordingProxy


@pytest.fixture
def fedora(fedora_server) -> Iterator[SimpleNamespace]:
    """The live Fedora behind the recording proxy: ``proxy`` (requests as sent, answers' status and headers),
    ``base`` (a fresh container below the REST root, not created: objects of one test never meet another's),
    ``root`` (the REST root's path), ``repo`` (a :class:`FedoraRepository` on ``base`` as ``fedoraAdmin``) and
    ``direct`` (a requests session straight to Fedora: another client)."""
    proxy = RecordingProxy(fedora_server.url)
    root = urlsplit(fedora_server.url).path
    base = f"{proxy.url}{root}/test-{uuid.uuid4().hex[:12]}"
    auth = (fedora_server.facts["user"], fedora_server.facts["password"])
    http = HttpClient(allow_private=True, retries=0)
    http.session.auth = auth
    direct = requests.Session()
    direct.auth = auth
    yield SimpleNamespace(proxy=proxy, base=base, root=root, repo=FedoraRepository(base, http), direct=direct,
                          server=fedora_server.url.removesuffix(root))
    proxy.close()
    direct.close()


@pytest.fixture
def thalictrum() -> dict[str, str]:
    """The spec's Key Start example record, as the TemplateParameterIndex returns it."""
    return dict(THALICTRUM)


@pytest.fixture
def mediawiki_api(http_server):
    """Factory: ``mediawiki_api(pages)`` -> ``(app, api_url)``."""

    def start(pages):
        app = MediaWikiApiApp(pages)
        return app, http_server(app=app) + "/w/api.php"

    return start
