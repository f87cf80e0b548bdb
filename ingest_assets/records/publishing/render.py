"""The provider report as Markdown (the UI's metadata, the mail's text, ``ingest-assets report``) and HTML (the
file kept in ``_LOGS/``, the mail's rich part), from Jinja templates shipped with the package."""

from __future__ import annotations

from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape


@cache
def _environment() -> Environment:
    return Environment(loader=PackageLoader("ingest_assets.records.publishing", "templates"),
                       autoescape=select_autoescape(["html"]), undefined=StrictUndefined,
                       trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)


def markdown(report: dict[str, Any]) -> str:
    return _environment().get_template("report.md.j2").render(report=_defaults(report))


def html(report: dict[str, Any]) -> str:
    return _environment().get_template("report.html.j2").render(report=_defaults(report))


def _defaults(report: dict[str, Any]) -> dict[str, Any]:
    """The report with the keys a template reads present (a day never registered has no review; a day not exported
    to Wikimedia no such section)."""
    review = {"state": None, "deadline": None, "decided_by": None, "reason": None, **report.get("review", {})}
    return {"wikimedia": None, **report, "review": review}
