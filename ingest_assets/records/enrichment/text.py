"""Text clean-up: HTML, entities, whitespace, stray punctuation, duplicates."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

_BLOCK_TAG = re.compile(r"</?(?:p|br|div|li|ul|ol|tr|td|h[1-6]|blockquote)\b[^<>]*>", re.IGNORECASE)
_TAG = re.compile(r"<!--.*?-->|</?[A-Za-z][A-Za-z0-9:-]*(?:\s[^<>]*)?/?>", re.DOTALL)
_INVISIBLE = re.compile("[\u00ad\u200b\u200c\u200d\ufeff]")
_EDGE_PUNCT = " ,;:/="  # after ``clean`` the only whitespace left is single spaces
# A final period is kept after an initial or abbreviation ("Forel, A.", "Knopf, Inc.", "U.S.").
_KEEP_PERIOD = re.compile(r"(?:\b[A-Z][A-Za-z]{0,2}|\.\w+|\bca|\bco|\bno|\bvol|\bed|\betc)\.$")


def clean(value: str) -> str:
    """Strip HTML tags and entities, invisible characters and runs of whitespace."""
    if "<" in value:
        value = _TAG.sub("", _BLOCK_TAG.sub(" ", value))
    if "&" in value:
        value = html.unescape(value)
    if value.isprintable():  # no whitespace but ' ' and no invisible characters (both are not printable)
        if "  " not in value and not value.startswith(" ") and not value.endswith(" "):
            return value  # most values: already clean
    elif not value.isascii():
        value = _INVISIBLE.sub("", value)
    return " ".join(value.split())  # runs of whitespace -> one space, stripped (as re's \s+ -> " ")


def clean_label(value: str) -> str:
    """``clean`` plus leading/trailing punctuation of a label (title, name, subject, type...)."""
    value = clean(value).strip(_EDGE_PUNCT)
    # _KEEP_PERIOD matches within the last word: search from there (the whole label costs O(length)).
    if value.endswith(".") and not value.endswith("..") and not _KEEP_PERIOD.search(value, value.rfind(" ") + 1):
        value = value[:-1].rstrip()
    return value


def unique(values: Iterable[str]) -> list[str]:
    """Non-empty values in order, dropping case-insensitive duplicates."""
    values = values if isinstance(values, list) else list(values)
    if len(values) < 2:
        return [value for value in values if value]
    seen: set[str] = set()
    out = []
    for value in values:
        key = value.casefold()
        if value and key not in seen:
            seen.add(key)
            out.append(value)
    return out
