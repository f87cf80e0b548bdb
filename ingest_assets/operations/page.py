"""The hub status page: one self-contained HTML file (inline CSS and SVG, no script, nothing fetched) rendering a
:class:`~ingest_assets.operations.overview.HubOverview`, readable by anyone the file or its URL is given to."""

from __future__ import annotations

from datetime import date
from html import escape

from ingest_assets.operations.failures import Failure
from ingest_assets.operations.overview import HubOverview, ProviderOverview
from ingest_assets.storage.counts import DayCounts

# series plotted per provider: name, colour, value of a day
SERIES = (
    ("harvested", "#1f6fb4", lambda c: c.harvested),
    ("mapped", "#2b9a3e", lambda c: c.mapped),
    ("failed", "#d0312d", lambda c: c.harvest_failed + c.mapping_failed),
    ("indexed", "#7b4fb0", lambda c: c.indexed),
)
WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 760, 170, 56, 12, 12, 26
TABLE_DAYS = 14  # newest days with data listed under each chart

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;max-width:1000px;color:#222;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 6px}.muted{color:#666}
table{border-collapse:collapse;width:100%;margin:8px 0}th,td{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;
vertical-align:top}th{background:#f5f5f5}td.n{text-align:right;font-variant-numeric:tabular-nums}
.alert{background:#fdecea;border:1px solid #d0312d;color:#8a1c17;padding:8px 12px;margin:12px 0;border-radius:4px}
.bad{color:#b3261e;font-weight:600}.ok{color:#2b7a3a}.legend span{margin-right:14px}.key{display:inline-block;width:10px;
height:10px;margin-right:4px;border-radius:2px}svg{display:block;max-width:100%;height:auto}
"""


def render_page(overview: HubOverview, title: str = "Hub status") -> str:
    first, last = overview.window
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f'<p class="muted">Generated {escape(overview.generated.strftime("%Y-%m-%d %H:%M UTC"))}; counts cover '
        f"{first} to {last} ({(last - first).days + 1} days ending with the newest day harvested).</p>",
    ]
    parts += [f'<div class="alert" role="alert">{escape(note)}</div>' for note in overview.registry_notes]
    parts.append(_summary(overview.providers))
    for provider in overview.providers:
        parts.append(_provider(provider, first, last))
    parts.append("</body></html>")
    return "\n".join(parts)


def _summary(providers: tuple[ProviderOverview, ...]) -> str:
    rows = []
    for p in providers:
        newest = p.days[-1] if p.days else None
        rows.append(
            f'<tr id="summary-{escape(p.name)}"><td><a href="#provider-{escape(p.name)}">{escape(p.name)}</a><br>'
            f'<span class="muted">{escape(p.label)}</span></td>'
            f"<td>{escape(', '.join(p.capabilities)) or '&mdash;'}</td>"
            f"<td>{p.last_good_day or '&mdash;'}</td>"
            f'<td class="n">{_number(newest.indexed) if newest else "&mdash;"}</td>'
            f'<td class="n">{_number(p.live_in_index) if p.live_in_index is not None else "&mdash;"}</td>'
            f"<td>{escape(p.review_state) if p.review_state else '&mdash;'}</td>"
            f"<td>{_failure(p.last_failure, p.problem)}</td></tr>"
        )
    return ("<h2>Providers</h2><table><thead><tr><th>provider</th><th>capabilities</th><th>last good day</th>"
            "<th>indexed (newest day)</th><th>live in index</th><th>review</th><th>last failure</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>")


def _failure(failure: Failure | None, problem: str | None) -> str:
    if problem:
        return f'<span class="bad">registry entry refused:</span> {escape(problem)}'
    if failure is None:
        return '<span class="ok">none recorded</span>'
    what = "check failed" if failure.kind == "check" else "run failed"
    return (f'<span class="bad">{what}</span> {escape(failure.days_text)} at <code>{escape(failure.stage)}</code> '
            f'({escape(failure.when.strftime("%Y-%m-%d %H:%M UTC"))}): {escape(failure.message)} '
            f'<a href="{escape(failure.run_url, quote=True)}">run {escape(failure.run_id[:8])}</a>')


def _provider(p: ProviderOverview, first: date, last: date) -> str:
    head = f'<section id="provider-{escape(p.name)}"><h2>{escape(p.label)} <span class="muted">({escape(p.name)})</span></h2>'
    if p.problem:
        return head + f'<div class="alert">{escape(p.problem)}</div></section>'
    if "records" not in p.capabilities:
        return head + f'<p class="muted">No record harvest ({escape(", ".join(p.capabilities) or "no capability")}).</p></section>'
    if not p.days:
        return head + f'<p class="muted">No day harvested between {first} and {last}.</p></section>'
    legend = "".join(f'<span><i class="key" style="background:{colour}"></i>{name}</span>' for name, colour, _ in SERIES)
    return (head + f'<div class="legend">{legend}</div>' + _chart(p.name, p.days, first, last) + _day_table(p.days)
            + "</section>")


def _chart(name: str, days: tuple[DayCounts, ...], first: date, last: date) -> str:
    """A line per series over the window: a point per day with data, lines only between consecutive days."""
    span = max((last - first).days, 1)
    top = max((value(c) for c in days for _, _, value in SERIES), default=0) or 1
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(day: date) -> float:
        return LEFT + plot_w * (day - first).days / span

    def y(value: int) -> float:
        return TOP + plot_h * (1 - value / top)

    out = [f'<svg role="img" aria-label="{escape(name)}: records per day" viewBox="0 0 {WIDTH} {HEIGHT}" '
           f'width="{WIDTH}" height="{HEIGHT}" data-provider="{escape(name)}">',
           f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="#fafafa" stroke="#ccc"/>',
           f'<text x="{LEFT - 6}" y="{TOP + 10}" text-anchor="end" font-size="11">{_number(top)}</text>',
           f'<text x="{LEFT - 6}" y="{TOP + plot_h}" text-anchor="end" font-size="11">0</text>',
           f'<text x="{LEFT}" y="{HEIGHT - 8}" font-size="11">{first}</text>',
           f'<text x="{LEFT + plot_w}" y="{HEIGHT - 8}" text-anchor="end" font-size="11">{last}</text>']
    for series, colour, value in SERIES:
        out.append(f'<g data-series="{series}" stroke="{colour}" fill="{colour}">')
        run: list[DayCounts] = []
        for counts in days + (None,):
            if run and (counts is None or (counts.day - run[-1].day).days != 1):
                if len(run) > 1:
                    points = " ".join(f"{x(c.day):.1f},{y(value(c)):.1f}" for c in run)
                    out.append(f'<polyline points="{points}" fill="none" stroke-width="1.5"/>')
                run = []
            if counts is not None:
                run.append(counts)
        for c in days:
            out.append(f'<circle cx="{x(c.day):.1f}" cy="{y(value(c)):.1f}" r="3" data-day="{c.day}" '
                       f'data-value="{value(c)}"><title>{c.day} {series}: {value(c)}</title></circle>')
        out.append("</g>")
    out.append("</svg>")
    return "".join(out)


def _day_table(days: tuple[DayCounts, ...]) -> str:
    rows = "".join(
        f"<tr><td>{c.day}</td><td class='n'>{c.harvested}</td><td class='n'>{c.harvest_deleted}</td>"
        f"<td class='n'>{c.harvest_failed}</td><td class='n'>{c.mapped}</td><td class='n'>{c.mapping_failed}</td>"
        f"<td class='n'>{c.indexed - c.index_deletions}</td><td class='n'>{c.index_deletions}</td></tr>"
        for c in reversed(days[-TABLE_DAYS:])
    )
    return ("<table><thead><tr><th>day</th><th>harvested</th><th>of them deleted</th><th>unreadable</th>"
            "<th>mapped</th><th>mapping failed</th><th>index documents</th><th>index deletions</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>")


def _number(value: int) -> str:
    return f"{value:,}"
