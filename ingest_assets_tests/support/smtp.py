"""A real SMTP server on 127.0.0.1 (aiosmtpd) that keeps every message it receives, for the report mail tests."""

from __future__ import annotations

import email
import email.policy
from email.message import EmailMessage

from aiosmtpd.controller import Controller

from ingest_assets_tests.support import free_port


class MailSink:
    """Accepts every message (no TLS, no login) and keeps it parsed in :attr:`messages`."""

    def __init__(self):
        self.messages: list[EmailMessage] = []
        self.envelopes: list[tuple[str, list[str]]] = []
        self.port = free_port()
        self._controller = Controller(self, hostname="127.0.0.1", port=self.port)
        self._controller.start()

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 - aiosmtpd's handler hook
        self.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos)))
        self.messages.append(email.message_from_bytes(envelope.original_content, policy=email.policy.default))
        return "250 Message accepted for delivery"

    @property
    def settings(self) -> dict[str, str]:
        """The ``INGEST_SMTP_*`` settings that send to this server."""
        return {"INGEST_SMTP_HOST": "127.0.0.1", "INGEST_SMTP_PORT": str(self.port), "INGEST_SMTP_SECURITY": "none",
                "INGEST_SMTP_FROM": "ingest@hub.example.org"}

    def close(self) -> None:
        self._controller.stop()
