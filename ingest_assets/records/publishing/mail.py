"""The provider report as a mail to the registry's ``contact:`` addresses, sent through ``INGEST_SMTP_URL`` by
the one SMTP client (:mod:`ingest_assets.core.smtp`).

One message per report: the Markdown as text, the HTML as its rich alternative, the JSON attached. When the
day is held for review, the subject says so and the review commands come first.
"""

from __future__ import annotations

from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from typing import Any


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
