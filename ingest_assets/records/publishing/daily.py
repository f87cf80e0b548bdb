"""What publishing does with each provider day before anything is published: register it for review (held when
the provider requires review), write its report, and mail the report to the provider's contacts."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from ingest_assets.core.errors import IngestError
from ingest_assets.core.registry import ProviderEntry
from ingest_assets.core.settings import MailSettings
from ingest_assets.records.indexing import SearchIndex
from ingest_assets.records.publishing import mail, render
from ingest_assets.records.publishing.candidates import live_indices
from ingest_assets.records.publishing.journal import Journal
from ingest_assets.records.publishing.report import build_report, write_report
from ingest_assets.records.publishing.review import DayState, Ledger
from ingest_assets.records.publishing.takedowns import Takedowns
from ingest_assets.storage.activities import RecordSource

log = logging.getLogger(__name__)


@dataclass
class DayReport:
    report: dict[str, Any]
    markdown: str
    files: list[str]
    review: DayState
    mailed: str = ""  # to whom, or why not
    mail_error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def report_day(
    entry: ProviderEntry,
    day: date,
    indexing: RecordSource,
    index: SearchIndex,
    alias: str,
    engine,
    now: datetime,
    mail_settings: MailSettings | None = None,
    mail_password: str | None = None,
    run_id: str | None = None,
) -> DayReport:
    """Register ``entry``'s ``day`` (its indexing output ``indexing``), write its report and mail it."""
    review = Ledger(engine).register(entry.name, day, indexing.key, entry.settings.review, now)
    mine = live_indices(index, alias).get(entry.name, [])
    report = build_report(entry, day, indexing, index, mine[0] if len(mine) == 1 else None, review,
                          Takedowns(engine).suppressed(entry.name), now)
    text, page = render.markdown(report), render.html(report)
    outcome = DayReport(report, text, write_report(indexing, report, page), review)
    if not entry.settings.contact:
        outcome.mailed = "no contact: addresses in the registry"
    elif mail_settings is None:
        outcome.mailed = "no SMTP server configured (INGEST_SMTP_HOST)"
    else:
        message = mail.report_message(mail_settings.sender, entry.settings.contact, report, text, page,
                                      json.dumps(report, indent=2, ensure_ascii=False).encode("utf-8"))
        try:
            mail.send(mail_settings, mail_password, message)
            outcome.mailed = ", ".join(entry.settings.contact)
        except IngestError as exc:  # a report not mailed never holds the data back; it is recorded for status
            log.warning("report of %s %s not mailed: %s", entry.name, day, exc)
            outcome.mailed, outcome.mail_error = "not sent", str(exc)
            Journal(engine).failed(entry.name, day, "report mail", str(exc), run_id, now)
    return outcome
