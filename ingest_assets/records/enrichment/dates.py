"""Date labels -> (begin, end) ISO dates for edm:TimeSpan.

Handles YYYY, YYYY-MM, YYYY-MM-DD (and ISO date-times), YYYY-YYYY, YYYY/YYYY and EDTF
intervals with month/day precision or open ends (``1950-05/..``), decades (``1950s``),
centuries (``19th century``), ``[19--]``/``[195-]``/``19XX``/``195u`` forms, ``circa``/``ca.``/
``c.``/``approximately``, a trailing ``?``/``~``, brackets, and English month names
(``October 21, 2008``, ``21 Oct 2008``, ``Oct. 2008``). Uncertainty markers keep the stated
range: ``ca. 1950`` spans 1950. Anything else (or an impossible date) gives ``None``.
"""

from __future__ import annotations

import calendar
import re
from functools import lru_cache

_QUALIFIER = re.compile(
    r"^(?:circa|ca\.?|c\.|approximately|approx\.?|about|around)\s*", re.IGNORECASE | re.ASCII
)
_UNCERTAIN = re.compile(r"[?~%]+$", re.ASCII)
_DAY = r"\d{4}(?:-\d{2}(?:-\d{2})?)?"
_ISO = re.compile(
    r"^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[T ][0-9:.]+(?:Z|[+-]\d{2}:?\d{2})?)?)?)?$", re.IGNORECASE | re.ASCII
)
_EDTF_INTERVAL = re.compile(rf"^({_DAY}|\.\.)?\s*/\s*({_DAY}|\.\.)?$", re.ASCII)
_YEAR_RANGE = re.compile(r"^(\d{4})\s*(?:-|–|—|to|until)\s*(\d{4})$", re.IGNORECASE | re.ASCII)
_DECADE = re.compile(r"^(\d{3})0'?s$", re.IGNORECASE | re.ASCII)
_CENTURY_WORDS = re.compile(r"^(\d{1,2})(?:st|nd|rd|th)\s+century$", re.IGNORECASE | re.ASCII)
_UNSPECIFIED = re.compile(r"^(\d{2,3})(-+|[xu]+)$", re.IGNORECASE | re.ASCII)
_MONTHS = {
    name.lower(): number
    for number in range(1, 13)
    for name in (calendar.month_name[number], calendar.month_abbr[number])
}
_MONTH = r"([A-Za-z]{3,9})\.?"
_MONTH_DAY_YEAR = re.compile(rf"^{_MONTH}\s+(\d{{1,2}}),?\s+(\d{{4}})$", re.ASCII)
_DAY_MONTH_YEAR = re.compile(rf"^(\d{{1,2}})\s+{_MONTH},?\s+(\d{{4}})$", re.ASCII)
_MONTH_YEAR = re.compile(rf"^{_MONTH},?\s+(\d{{4}})$", re.ASCII)

Span = tuple[str | None, str | None]


@lru_cache(maxsize=8192)
def parse_date(label: str) -> Span | None:
    """``(begin, end)`` for a provided date label, or ``None`` when it is not understood (cached: labels repeat)."""
    text = label.strip().rstrip(".;,").strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1].strip()
    text = _UNCERTAIN.sub("", _QUALIFIER.sub("", text)).strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1].strip()
    if not text:
        return None
    if text[0].isdigit() and (match := _ISO.match(text)):
        return _point(*match.groups())
    if "/" in text and (match := _EDTF_INTERVAL.match(text)):
        return _interval(match.group(1), match.group(2))
    if match := _YEAR_RANGE.match(text):
        begin, end = _begin(match.group(1)), _end(match.group(2))
        return _ordered(begin, end) if begin and end else None
    if match := _DECADE.match(text):
        return _years(int(match.group(1)) * 10, int(match.group(1)) * 10 + 9)
    if match := _UNSPECIFIED.match(text):
        digits, width = match.group(1), 4 - len(match.group(1))
        if len(match.group(2)) == width:
            start = int(digits) * 10**width
            return _years(start, start + 10**width - 1)
        return None
    if match := _CENTURY_WORDS.match(text):
        century = int(match.group(1))
        return _years((century - 1) * 100, century * 100 - 1) if century else None
    if match := _MONTH_DAY_YEAR.match(text):
        return _named(match.group(3), match.group(1), match.group(2))
    if match := _DAY_MONTH_YEAR.match(text):
        return _named(match.group(3), match.group(2), match.group(1))
    if match := _MONTH_YEAR.match(text):
        return _named(match.group(2), match.group(1), None)
    return None


def _years(first: int, last: int) -> Span:
    return f"{max(first, 1):04d}-01-01", f"{last:04d}-12-31"


def _point(year: str, month: str | None, day: str | None) -> Span | None:
    begin, end = _begin(year, month, day), _end(year, month, day)
    return (begin, end) if begin and end else None


def _named(year: str, month_name: str, day: str | None) -> Span | None:
    month = _MONTHS.get(month_name.lower())
    return _point(year, f"{month:02d}", f"{int(day):02d}" if day else None) if month else None


def _split(day: str) -> tuple[str, str | None, str | None]:
    parts = day.split("-")
    return parts[0], (parts[1] if len(parts) > 1 else None), (parts[2] if len(parts) > 2 else None)


def _interval(start: str | None, stop: str | None) -> Span | None:
    begin = None if start in (None, "..") else _begin(*_split(start))
    end = None if stop in (None, "..") else _end(*_split(stop))
    if (start not in (None, "..") and begin is None) or (stop not in (None, "..") and end is None):
        return None
    return _ordered(begin, end)


def _ordered(begin: str | None, end: str | None) -> Span | None:
    if begin is None and end is None:
        return None
    if begin is not None and end is not None and begin > end:
        return None
    return begin, end


def _valid(year: str, month: str | None, day: str | None) -> bool:
    if year == "0000":  # there is no year 0 in ISO 8601 calendar dates as used here
        return False
    if month is None:
        return True
    m = int(month)
    if not 1 <= m <= 12:
        return False
    return day is None or 1 <= int(day) <= calendar.monthrange(int(year), m)[1]


def _begin(year: str, month: str | None = None, day: str | None = None) -> str | None:
    if not _valid(year, month, day):
        return None
    return f"{year}-{month or '01'}-{day or '01'}"


def _end(year: str, month: str | None = None, day: str | None = None) -> str | None:
    if not _valid(year, month, day):
        return None
    if month is None:
        return f"{year}-12-31"
    return f"{year}-{month}-{day or calendar.monthrange(int(year), int(month))[1]}"
