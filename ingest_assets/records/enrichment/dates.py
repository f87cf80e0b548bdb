"""Dates as ingestion3 reads them.

``begin_end`` is ingestion3's ``DateBuilder``, the one its enrichment chain runs on every ``date``: a year
(``1930``) or a range of years (``1917-1934``) gives begin and end years, anything else none. ``parse_date``
is its ``ParseDateEnrichment`` (EDTF dates and intervals, ranges, calendar formats, decades, circa), which
ingestion3 ships and tests but does not run; a provider chooses it with ``enrichment: {dates: parse}``.
"""

from __future__ import annotations

import calendar
import re
from functools import lru_cache
from typing import NamedTuple

from ingest_assets.records.enrichment.normalize import JAVA_TRIM

_YEAR = re.compile(r"[0-9]{4}")
_YEARS = re.compile(r"[0-9]{4}\s*-\s*[0-9]{4}", re.ASCII)


@lru_cache(maxsize=8192)
def begin_end(label: str) -> tuple[str | None, str | None]:
    """DateBuilder: ``(begin, end)`` of a year or a range of years, else ``(None, None)``."""
    text = label.strip(JAVA_TRIM)
    if _YEAR.fullmatch(text):
        return text, text
    if _YEARS.fullmatch(text):
        parts = text.split("-")
        return parts[0].strip(JAVA_TRIM), parts[-1].strip(JAVA_TRIM)
    return None, None


class ParsedDate(NamedTuple):
    """ParseDateEnrichment's EdmTimeSpan: its preferred label and, for EDTF values and ranges, begin and end."""

    pref_label: str | None
    begin: str | None
    end: str | None


# EDTFDate's patterns
_YEAR4 = r"-?\d{1,4}"
_YEAR_LONG = r"y-?\d{5,}"
_MONTH = "(?:0[1-9]|1[0-2])"
_DAY = "(?:0[1-9]|[12][0-9]|3[01])"
_MONTH_AND_DAY = f"-?(?:{_MONTH}?-?{_DAY}?|2[1-4])"
_BASIC_YMD = f"(?:{_YEAR4}|{_YEAR_LONG}){_MONTH_AND_DAY}"
_UNSPECIFIED = r"(?:\d{3}u|\d{2}uu|\d{4}(?:-uu){1,2}|\d{4}-\d{2}-uu)"
_FULL_YMD = f"(?:{_BASIC_YMD}|{_UNSPECIFIED})"
_EDTF_DATE = re.compile(f"^({_FULL_YMD})(?:[?~]+)?$", re.ASCII)
_EDTF_DATE_TIME = re.compile(r"^(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}:\d{2}(?:Z|[+\-]\d{2}:\d{2})?$", re.ASCII)
_EDTF_INTERVAL = re.compile(f"^((?:{_FULL_YMD}|unknown))(?:[?~]+)?/((?:{_FULL_YMD}|unknown))(?:[?~]+)?$", re.ASCII)
_EDTF_OPEN = re.compile(f"^({_FULL_YMD})/open$", re.ASCII)


def _edtf_clean(value: str) -> str:
    return re.sub(r"(\d{4})-2[1-4]", r"\1", value.replace("y", "", 1).replace("unknown", "", 1), count=1)


def _unspecified(value: str) -> tuple[str, str]:
    if re.fullmatch(r"\d{3}u", value):
        return value.replace("u", "0", 1), value.replace("u", "9", 1)
    if re.fullmatch(r"\d{2}uu", value):
        return value.replace("uu", "00", 1), value.replace("uu", "99", 1)
    if re.fullmatch(r"\d{4}-\d{2}-uu", value):
        return value[:7], value[:7]
    if re.fullmatch(r"\d{4}-uu-uu", value):
        return value[:4] + "-01-01", value[:4] + "-12-31"
    return "", ""


def edtf_range(value: str) -> tuple[str, str] | None:
    """EDTFDate.rangeForEDTF: ``(begin, end)`` of an EDTF date, timestamp or interval (``""``: unknown/open)."""
    if match := _EDTF_DATE.search(value):
        date = match.group(1)
        return _unspecified(date) if "u" in date else (_edtf_clean(date), _edtf_clean(date))
    if match := _EDTF_DATE_TIME.search(value):
        return match.group(1), match.group(1)
    if match := _EDTF_INTERVAL.search(value):
        return _edtf_clean(match.group(1)), _edtf_clean(match.group(2))
    if match := _EDTF_OPEN.search(value):
        return _edtf_clean(match.group(1)), ""
    return None


_RANGE = re.compile(
    r"([a-zA-Z]{0,3}\s?[\d\-/.xu?~a-zA-Z]*,?\s?\d{3}[\d\-xs][s\d\-.xu?~]*)\s*[-.]+\s*"
    r"([a-zA-Z]{0,3}\s?[\d\-/.xu?~a-zA-Z]*,?\s?\d{3}[\d\-xs][s\d\-.xu?~]*)", re.ASCII)
_MONTH_YEAR = re.compile(r"^(\d{2})-(\d{4})$", re.ASCII)
_PARTIAL_RANGE = re.compile(r"^(\d{2})(\d{2})-(\d{2})$", re.ASCII)
_DECADE_STRING = re.compile(r"^(\d{3})0s$", re.ASCII)
_DECADE_HYPHEN = re.compile(r"^(\d{3})-$", re.ASCII)
# ParseDateEnrichment's trial formats, in its order, as (field or literal) tokens of SimpleDateFormat
_FORMATS = (("yyyy", "-", "MM", "-", "dd"), ("MMM", " ", "dd", ", ", "yyyy"), ("MM", "/", "dd", "/", "yyyy"),
            ("MM", ".", "dd", ".", "yyyy"), ("MM", "-", "dd", "-", "yyyy"), ("MMM", ", ", "yyyy"), ("yyyy",))
_MONTH_NAMES = sorted(((name.lower(), number) for number in range(1, 13)
                       for name in (calendar.month_name[number], calendar.month_abbr[number])),
                      key=lambda pair: -len(pair[0]))
_DIGITS = re.compile(r"\d+", re.ASCII)


def _simple_date(text: str, tokens: tuple[str, ...]) -> str | None:
    """A non-lenient java.text.SimpleDateFormat parse of the start of ``text`` (trailing text is ignored, as
    ``parse(String)`` ignores it), formatted ``yyyy-MM-dd``."""
    fields = {"yyyy": None, "MM": 1, "dd": 1}
    at = 0
    for token in tokens:
        if token in fields or token == "MMM":
            while at < len(text) and text[at] in " \t":  # SimpleDateFormat skips spaces before a field
                at += 1
            if token == "MMM":
                lower = text[at:].lower()
                found = next(((name, number) for name, number in _MONTH_NAMES if lower.startswith(name)), None)
                if found is None:
                    return None
                fields["MM"] = found[1]
                at += len(found[0])
                continue
            match = _DIGITS.match(text, at)
            if match is None:
                return None
            fields[token] = int(match.group())
            at = match.end()
        elif text.startswith(token, at):
            at += len(token)
        else:
            return None
    year, month, day = fields["yyyy"], fields["MM"], fields["dd"]
    if not year or not 1 <= month <= 12 or not 1 <= day <= calendar.monthrange(year if year <= 9999 else 2000,
                                                                              month)[1]:
        return None
    return f"{year:04d}-{month:02d}-{day:02d}"


def _calendar_date(text: str) -> str | None:
    for tokens in _FORMATS:
        if (parsed := _simple_date(text, tokens)) is not None:
            return parsed
    return None


def preprocess_date(text: str) -> str:
    """ParseDateEnrichment.preprocess: ``late``/``early`` out, whitespace reduced, ``1980s`` -> ``198x``,
    ``1978--`` -> ``1978xx``."""
    text = re.sub(r"\s+", " ", re.sub("[eE]arly", "", re.sub("[lL]ate", "", text)).strip(JAVA_TRIM), flags=re.ASCII)
    if re.fullmatch(r"\d{2,3}0s", text, re.ASCII):
        text = re.sub(r"0s\b", "x", text)
    if re.fullmatch(r"\d{2,4}-+", text, re.ASCII):
        text = text.replace("-", "x")
    return text


def _interval(text: str) -> tuple[str, str] | None:
    match = _RANGE.search(text.replace("to", "-").replace("until", "-"))
    if match is None:
        return None
    begin, end = _calendar_date(match.group(1)), _calendar_date(match.group(2))
    return (begin, end) if begin and end else None


def _circa(text: str) -> str | None:
    cleaned = re.sub(r".*about", "", re.sub(r".*[cC][irca.]*", "", text))
    return cleaned if _calendar_date(cleaned) is not None else None


@lru_cache(maxsize=8192)
def parse_date(label: str) -> ParsedDate | None:
    """ParseDateEnrichment.parse: the timespan it makes of a date label, or ``None`` where it returns the
    original timespan unchanged."""
    text = preprocess_date(label)
    if (edtf := edtf_range(text)) is not None:
        return ParsedDate(text, edtf[0] or None, edtf[1] or None)
    if (interval := _interval(text)) is not None:
        return ParsedDate(label, *interval)
    for parser in (_calendar_date, _decade_hyphen, _month_year, _decade_string, _partial_range, _circa):
        if (found := parser(text)) is not None:
            return ParsedDate(found, None, None)
    return None


def _month_year(text: str) -> str | None:
    return f"{match.group(2)}-{match.group(1)}" if (match := _MONTH_YEAR.search(text)) else None


def _partial_range(text: str) -> str | None:
    if match := _PARTIAL_RANGE.search(text):
        return f"{match.group(1)}-{match.group(2)}/{match.group(1)}-{match.group(3)}"
    return None


def _decade_string(text: str) -> str | None:
    return match.group(1) + "x" if (match := _DECADE_STRING.search(text)) else None


def _decade_hyphen(text: str) -> str | None:
    return match.group(1) + "x" if (match := _DECADE_HYPHEN.search(text)) else None
