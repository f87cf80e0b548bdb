"""Mailing a provider report to the registry's ``contact:`` addresses over SMTP (``INGEST_SMTP_*``).

One message per report: the Markdown as text, the HTML as its rich alternative, the JSON attached. When the
day is held for review, the subject says so and the review commands come first.
"""

from __future__ import annotations

import smtplib
import ssl
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from typing import Any

from ingest_assets.core.errors import FetchError
from ingest_assets.core.settings import MailSettings

TIMEOUT = 30.0  # seconds per SMTP command


def report_message(sender: str, to: list[str], report: dict[str, Any], text: str, html: str, json_bytes: bytes) -> EmailMessage:
    held = report.get("review", {}).get("state") == "pending"
    message = EmailMessage()
    message["Subject"] = (f"{'Review needed: ' if held else ''}ingest report for {report['label']} "
                          f"({report['provider']}), {report['day']}")
    message["From"] = sender
    message["To"] = ", ".join(to)
    message["Date"] = formatdate(localtime=False)
    message["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2] or None)
    message.set_content(text)
    message.add_alternative(html, subtype="html")
    message.add_attachment(json_bytes, maintype="application", subtype="json",
                           filename=f"{report['provider']}-{report['day']}-report.json")
    return message


def send(settings: MailSettings, password: str | None, message: EmailMessage) -> None:
    """Deliver ``message``; a refused or unreachable server is a (retryable) FetchError naming it."""
    where = f"smtp://{settings.host}:{settings.port}"
    try:
        if settings.security == "ssl":
            client: smtplib.SMTP = smtplib.SMTP_SSL(settings.host, settings.port, timeout=TIMEOUT,
                                                    context=ssl.create_default_context())
        else:
            client = smtplib.SMTP(settings.host, settings.port, timeout=TIMEOUT)
        with client:
            if settings.security == "starttls":
                client.starttls(context=ssl.create_default_context())
            if settings.user:
                client.login(settings.user, password or "")
            refused = client.send_message(message)
    except (smtplib.SMTPException, OSError) as exc:
        raise FetchError(f"mail to {message['To']} not sent: {exc}", url=where, retryable=True) from exc
    if refused:
        raise FetchError(f"mail refused for {sorted(refused)}", url=where, retryable=False)
