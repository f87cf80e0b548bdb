"""Repository test fixtures: the fakes of :mod:`ingest_assets_tests.support.repository` on local servers (the
TemplateParameterIndex is the root ``template_index`` fixture, which the faults suite shares)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ingest_assets.core.wsgi import WsgiServer
from ingest_assets_tests.support.repository import THALICTRUM, FakeFedora, MediaWikiApiApp


@pytest.fixture
def fake_fedora() -> Iterator[tuple[FakeFedora, str]]:
    """``(fake, base_url)`` with the REST root at ``<base>/rest``."""
    fake = FakeFedora()
    with WsgiServer() as server:
        fake.base = server.url
        server.start(fake)
        yield fake, f"{fake.base}/rest"


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
