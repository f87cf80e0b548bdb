"""A real SMTP server and a webhook receiver for the failure notice tests."""

import pytest

from ingest_assets_tests.support.notices import MailServer, WebhookReceiver


@pytest.fixture
def mail_server():
    server = MailServer().start()
    yield server
    server.stop()


@pytest.fixture
def webhook(http_server):
    receiver = WebhookReceiver()
    return receiver, http_server(app=receiver) + "/hooks/ingest"
