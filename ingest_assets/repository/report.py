"""The metadata aggregation report of one collection, in MediaWiki syntax."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from ingest_assets.repository.validation import Issue

CATEGORY = "Metadata aggregation reports"


def _nowiki(text: str) -> str:
    return "<nowiki>" + text.replace("</nowiki>", "&lt;/nowiki&gt;") + "</nowiki>" if text else ""


def render_report(*, collection_title: str, collection_url: str, generated: datetime, records: int,
                  ingested: int, issues: Sequence[Issue]) -> str:
    """Errors and warnings as sortable wikitables linking each record's page; categorized."""
    errors = [i for i in issues if i.severity == "error"]
    warnings = [i for i in issues if i.severity == "warning"]
    lines = [
        f"== Metadata aggregation report: {_nowiki(collection_title)} ==",
        f"Collection: [{collection_url} {_nowiki(collection_title)}]<br />",
        f"Generated: {generated.isoformat(timespec='seconds')}<br />",
        f"Records: {records}; objects ingested: {ingested}; errors: {len(errors)}; warnings: {len(warnings)}",
    ]
    for heading, group in (("Errors", errors), ("Warnings", warnings)):
        lines.append(f"=== {heading} ===")
        if not group:
            lines.append("None.")
            continue
        lines += ['{| class="wikitable sortable"', "! Record !! Field !! Message"]
        for item in group:
            record = f"[{item.url} {_nowiki(item.record)}]" if item.url else _nowiki(item.record)
            lines += ["|-", f"| {record} || {_nowiki(item.field)} || {_nowiki(item.message)}"]
        lines.append("|}")
    lines.append(f"[[Category:{CATEGORY}]]")
    return "\n".join(lines) + "\n"
