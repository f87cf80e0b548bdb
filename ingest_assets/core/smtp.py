"""The one SMTP client: a message delivered through ``INGEST_SMTP_URL`` (``smtp://[user@]host[:25]`` plain,
``smtp+starttls://...:587``, ``smtps://...:465``; the password is ``INGEST_SMTP_PASSWORD``), for failure notices
and provider reports alike."""

from __future__ import annotations

import smtplib
import ssl
from email.message import EmailMessage
from urllib.parse import unquote, urlsplit

from ingest_assets.core.errors import FetchError
from ingest_assets.core.settings import SMTP_SCHEMES

TIMEOUT_SECONDS = 20


def send(smtp_url: str, password: str | None, message: EmailMessage, what: str = "e-mail") -> None:
    """Deliver ``message``; a server that cannot be reached or refuses it is a FetchError naming host and port
    (retryable: the server may be back later), a recipient it refuses one that is not."""
    parts = urlsplit(smtp_url)  # checked by the settings
    host, port = parts.hostname or "localhost", parts.port or SMTP_SCHEMES[parts.scheme]
    user = unquote(parts.username) if parts.username else None
    try:
        if parts.scheme == "smtps":
            client = smtplib.SMTP_SSL(host, port, timeout=TIMEOUT_SECONDS, context=ssl.create_default_context())
        else:
            client = smtplib.SMTP(host, port, timeout=TIMEOUT_SECONDS)
        with client:
            if parts.scheme == "smtp+starttls":
                client.starttls(context=ssl.create_default_context())
            if user:
                client.login(user, password or "")
            refused = client.send_message(message)
    except (smtplib.SMTPException, OSError) as exc:
        raise FetchError(f"{what} not sent through {host}:{port}: {exc}", url=f"{parts.scheme}://{host}",
                         retryable=True) from exc
    if refused:
        raise FetchError(f"{what} refused for {sorted(refused)} by {host}:{port}", url=f"{parts.scheme}://{host}",
                         retryable=False)
