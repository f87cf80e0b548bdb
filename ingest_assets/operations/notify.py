"""Failures reach people: an e-mail through SMTP and a JSON webhook (Slack, Teams and Matrix hookshot incoming
webhooks all read its ``text``), each on when its setting is given (``INGEST_NOTIFY_EMAIL``,
``INGEST_NOTIFY_WEBHOOK``; see ``core/settings.py``)."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from email.message import EmailMessage

from ingest_assets.core import smtp
from ingest_assets.core.errors import FetchError
from ingest_assets.core.http import HttpClient
from ingest_assets.core.settings import Settings
from ingest_assets.operations.failures import Failure

TIMEOUT_SECONDS = 20


def notice_text(failure: Failure) -> str:
    """The body every channel sends: what failed, where, why, and the link to the run."""
    lines = [failure.subject.removeprefix("[ingest-assets] "), ""]
    lines += [f"{label}: {value}" for label, value in (
        ("provider", failure.provider), ("day", failure.days_text), ("stage", failure.stage), ("job", failure.job),
        ("when", failure.when.strftime("%Y-%m-%d %H:%M:%S UTC")), ("message", failure.message),
        ("run", failure.run_url)) if value]
    return "\n".join(lines)


class Notifier(ABC):
    channel: str

    @abstractmethod
    def send(self, failure: Failure) -> None:
        """Deliver the notice; raises an IngestError naming the channel when it cannot."""


class EmailNotifier(Notifier):
    """Through ``INGEST_SMTP_URL`` (:mod:`ingest_assets.core.smtp`)."""

    channel = "e-mail"

    def __init__(self, smtp_url: str, recipients: tuple[str, ...], sender: str, password: str | None = None):
        self.smtp_url, self.password, self.recipients, self.sender = smtp_url, password, recipients, sender

    def send(self, failure: Failure) -> None:
        message = EmailMessage()
        message["Subject"], message["From"], message["To"] = failure.subject, self.sender, ", ".join(self.recipients)
        message.set_content(notice_text(failure))
        smtp.send(self.smtp_url, self.password, message, "e-mail notice")


class WebhookNotifier(Notifier):
    """POSTs ``{"text": ..., "failure": {...}}`` as JSON to the configured URL (the operator's own setting, so a
    private address is allowed)."""

    channel = "webhook"

    def __init__(self, url: str, http: HttpClient | None = None):
        self.url = url
        self.http = http or HttpClient(allow_private=True, retries=2, timeout=(5, TIMEOUT_SECONDS))

    def send(self, failure: Failure) -> None:
        body = json.dumps({"text": notice_text(failure), "failure": json.loads(failure.to_json())}).encode()
        with self.http.open(self.url, method="POST", data=body, headers={"Content-Type": "application/json"}):
            pass  # a status >= 400 raised FetchError


def notifiers(settings: Settings) -> list[Notifier]:
    """The channels the settings configure (none: nobody is told, the failures are still recorded)."""
    found: list[Notifier] = []
    if settings.notify_email:
        found.append(EmailNotifier(settings.smtp_url, settings.notify_email, settings.notify_from,
                                   settings.secret("INGEST_SMTP_PASSWORD")))
    if settings.notify_webhook:
        found.append(WebhookNotifier(settings.notify_webhook))
    return found


def notify(failure: Failure, channels: list[Notifier]) -> list[str]:
    """Send ``failure`` on every channel; one channel failing does not stop the others. Returns the problems."""
    problems = []
    for channel in channels:
        try:
            channel.send(failure)
        except FetchError as exc:
            problems.append(f"{channel.channel}: {exc}")
    return problems
