"""Language codes or names -> ISO 639-3 code and English name, from the ``iso639-lang`` package."""

from __future__ import annotations

import re
from functools import lru_cache

from iso639 import Lang, iter_langs
from iso639.exceptions import InvalidLanguageValue

_SUBTAG = re.compile(r"^([a-z]{2,3})(?:[-_][a-z0-9]{2,8})+$")
_QUALIFIED = re.compile(r"^(.*?)\s*\(.*\)$")


@lru_cache(maxsize=1)
def _by_name() -> dict[str, Lang]:
    """Case-insensitive index of language names (built once, on first use)."""
    return {lang.name.casefold(): lang for lang in iter_langs()}


@lru_cache(maxsize=8192)
def normalize_language(value: str) -> tuple[str, str] | None:
    """``(iso639-3 code, name)`` for a code (``en``, ``eng``, ``fre``, ``en-US``) or a name
    (``English``, ``english``, ``English (United States)``), else ``None``."""
    text = value.strip().rstrip(".;,").strip()
    key = text.casefold()
    if not key:
        return None
    if match := _SUBTAG.match(key):
        key = match.group(1)
    lang = None
    if len(key) in (2, 3) and key.isalpha():
        try:
            lang = Lang(key)
        except InvalidLanguageValue:
            lang = None
    if lang is None:
        if match := _QUALIFIED.match(key):
            key = match.group(1)
        lang = _by_name().get(key)
    if lang is None or not lang.pt3:
        return None
    return lang.pt3, lang.name
