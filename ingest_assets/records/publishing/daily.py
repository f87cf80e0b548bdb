"""What publishing does with each provider day before anything is published: register it for review (held when
the provider requires review), write its report, and mail the report to the provider's contacts."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from ingest_assets.core import smtp
from ingest_assets.core.errors import IngestError
from ingest_assets.core.registry import ProviderEntry
from ingest_assets.operations.failures import Failure, record_failure
from ingest_assets.records.indexing import SearchIndex
from ingest_assets.records.publishing import render
from ingest_assets.records.publishing.candidates import live_indices
from ingest_assets.records.publishing.mail import report_message
from ingest_assets.records.publishing.report import build_report, write_report
from ingest_assets.records.publishing.review import DayState, Ledger
from ingest_assets.records.publishing.takedowns import Takedowns
from ingest_assets.storage.activities import RecordSource

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Mail:
    """How reports leave: the SMTP server (``INGEST_SMTP_URL``), its password, the sender, and the UI's address
    (for the link a failure carries)."""

    smtp_url: str
    password: str | None
    sender: str
    ui_url: str


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
    mail: Mail | None = None,
    run: tuple[str, str] = ("", ""),
) -> DayReport:
    """Register ``entry``'s ``day`` (its indexing output ``indexing``), write its report and mail it (``mail``
    None: no SMTP server is set). ``run`` is the ``(job, run id)`` a mail failure is recorded with."""
    review = Ledger(engine).register(entry.name, day, indexing.key, entry.settings.review, now)
    mine = live_indices(index, alias).get(entry.name, [])
    report = build_report(entry, day, indexing, index, mine[0] if len(mine) == 1 else None, review,
                          Takedowns(engine).suppressed(entry.name), now)
    text, page = render.markdown(report), render.html(report)
    outcome = DayReport(report, text, write_report(indexing, report, page), review)
    if not entry.settings.contact:
        outcome.mailed = "no contact: addresses in the registry"
    elif mail is None:
        outcome.mailed = "no SMTP server set (INGEST_SMTP_URL)"
    else:
        message = report_message(mail.sender, entry.settings.contact, report, text, page,
                                 json.dumps(report, indent=2, ensure_ascii=False).encode("utf-8"))
        try:
            smtp.send(mail.smtp_url, mail.password, message, "report mail")
            outcome.mailed = ", ".join(entry.settings.contact)
        except IngestError as exc:  # a report not mailed never holds the data back; it is the provider's failure
            log.warning("report of %s %s not mailed: %s", entry.name, day, exc)
            outcome.mailed, outcome.mail_error = "not sent", str(exc)
            job, run_id = run
            record_failure(indexing.storage, Failure("run", job, entry.name, (day,), "report mail", str(exc), run_id,
                                                     f"{mail.ui_url}/runs/{run_id}", now))
    return outcome
