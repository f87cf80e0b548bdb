"""The named value functions a rule's ``clean:`` may apply, in the order it lists them: a small closed set (no
code in profiles). Each takes one value and returns it cleaned ('' drops the value). Names and behaviour follow
the string normalisations ingestion3's hub mappings use."""

from __future__ import annotations

import re
from collections.abc import Callable

_EDGE_PUNCTUATION = re.compile(r"[-;:,/\\\s]+")  # ingestion3's begin-and-end punctuation (and whitespace)
_ENDING_PERIOD = re.compile(r"(?<=[^.])\.\s*$")
_WHITESPACE = re.compile(r"\s+")


def _first_alnum(value: str) -> int:
    return next((i for i, char in enumerate(value) if char.isalnum()), -1)


def _last_alnum(value: str) -> int:
    return next((i for i in range(len(value) - 1, -1, -1) if value[i].isalnum()), -1)


def trim_leading_punctuation(value: str) -> str:
    """Colons, semicolons, commas, slashes, hyphens and whitespace before the first letter or digit."""
    start = _first_alnum(value)
    return value if start < 0 else _EDGE_PUNCTUATION.sub("", value[:start]) + value[start:]


def trim_trailing_punctuation(value: str) -> str:
    """Colons, semicolons, commas, slashes, hyphens and whitespace after the last letter or digit."""
    end = _last_alnum(value)
    return value if end < 0 else value[:end + 1] + _EDGE_PUNCTUATION.sub("", value[end + 1:])


def trim_trailing_comma(value: str) -> str:
    """Commas and whitespace after the last letter or digit."""
    end = _last_alnum(value)
    return value if end < 0 else value[:end + 1] + re.sub(r"[,\s]+", "", value[end + 1:])


def strip_ending_period(value: str) -> str:
    """One final period (and the space after it); an ellipsis or '..' is left alone."""
    return _ENDING_PERIOD.sub("", value)


def strip_unmatched_brackets(value: str) -> str:
    """A ']' without any '[' (or a '[' without any ']') is removed."""
    if "[" not in value:
        value = value.replace("]", "")
    if "]" not in value:
        value = value.replace("[", "")
    return value


def capitalize_first(value: str) -> str:
    """The first letter or digit in upper case, the rest untouched ('...vacationland' -> '...Vacationland')."""
    start = _first_alnum(value)
    return value if start < 0 else value[:start] + value[start].upper() + value[start + 1:]


def collapse_whitespace(value: str) -> str:
    """Runs of whitespace as one space, none at either end."""
    return _WHITESPACE.sub(" ", value).strip()


def collapse_year_list(value: str) -> str:
    """A ';'-separated run of consecutive years in any order ('1901; 1903;1902', as Primo expands a range) as one
    range ('1901-1903'); anything else unchanged."""
    parts = [part.strip() for part in value.split(";") if part.strip()]
    if len(parts) < 2 or not all(len(part) == 4 and part.isdigit() for part in parts):
        return value
    years = sorted({int(part) for part in parts})
    return f"{years[0]}-{years[-1]}" if years[-1] - years[0] + 1 == len(years) else value


CLEANERS: dict[str, Callable[[str], str]] = {
    "trim-leading-punctuation": trim_leading_punctuation,
    "trim-trailing-punctuation": trim_trailing_punctuation,
    "trim-trailing-comma": trim_trailing_comma,
    "strip-ending-period": strip_ending_period,
    "strip-unmatched-brackets": strip_unmatched_brackets,
    "capitalize-first": capitalize_first,
    "lowercase": str.lower,
    "uppercase": str.upper,
    "collapse-whitespace": collapse_whitespace,
    "collapse-year-list": collapse_year_list,
}
