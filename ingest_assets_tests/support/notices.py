"""Where failure notices arrive in the tests: a real SMTP server (aiosmtpd) and a webhook receiver (a WSGI app
for the ``http_server`` fixture), each keeping what it was sent."""

from __future__ import annotations

import email
import email.policy
import json
import threading
from email.message import EmailMessage

from ingest_assets_tests.support import free_port, wait_for


class MailServer:
    """aiosmtpd's SMTP server on 127.0.0.1 (a free port); ``messages`` are the e-mails it accepted."""

    def __init__(self):
        from aiosmtpd.controller import Controller

        self.messages: list[EmailMessage] = []
        self.envelopes: list[tuple[str, list[str]]] = []
        self.port = free_port()
        self._controller = Controller(self, hostname="127.0.0.1", port=self.port)

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 - aiosmtpd's handler hook
        self.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos)))
        self.messages.append(email.message_from_bytes(envelope.content, policy=email.policy.default))
        return "250 OK"

    @property
    def url(self) -> str:
        return f"smtp://127.0.0.1:{self.port}"

    def start(self) -> MailServer:
        self._controller.start()
        return self

    def stop(self) -> None:
        self._controller.stop()

    def wait(self, count: int) -> list[EmailMessage]:
        wait_for(f"{count} e-mail(s)", lambda: len(self.messages) >= count, timeout=30)
        return self.messages


class WebhookReceiver:
    """A WSGI app taking POSTs: keeps each JSON body, answers ``status``."""

    def __init__(self, status: str = "204 No Content"):
        self.bodies: list[dict] = []
        self.status = status
        self._lock = threading.Lock()

    def __call__(self, environ, start_response):
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length)
        if environ["REQUEST_METHOD"] == "POST" and environ.get("CONTENT_TYPE", "").startswith("application/json"):
            with self._lock:
                self.bodies.append(json.loads(body))
        start_response(self.status, [("Content-Length", "0")])
        return [b""]
