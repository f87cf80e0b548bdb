"""ingestion3's string normalizations (``StringNormalizationUtils``), one function each, with the same results.

Java semantics are kept where they show: ``reduce_whitespace`` replaces runs of Java's ``\\h``/``\\v`` classes,
``strip_ending_period`` only looks at single-line values (Java's ``.`` stops at a line break), letters and
digits are Unicode letters (L*) and decimal digits (Nd), and ``strip_html`` gives what jsoup's ``clean`` with an
empty safelist gives (entities decoded, tags and the content of script/style dropped, whitespace collapsed
within each text run, a blank run before another blank run dropped, the whole trimmed).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from functools import lru_cache

# Java's \h and \v classes
_H = " \t\u00a0\u1680\u180e\u2000-\u200a\u202f\u205f\u3000"
_V = "\n\x0b\f\r\x85\u2028\u2029"
_RUNS = re.compile(f"[{_H}{_V}]+")
JAVA_TRIM = "".join(chr(c) for c in range(0x21))  # String.trim(): every char <= U+0020

_HTML_WHITE = " \t\n\r\f"
_HTML_SPACE = re.compile("[ \t\n\r\f]+")  # jsoup collapses these within a text run
# jsoup's tokens: comments, <!...> and <?...> (bogus comments), start and end tags (a letter after < or </)
_TOKEN = re.compile(r"<!--.*?(?:-->|\Z)|<[!?][^>]*(?:>|\Z)|</?[A-Za-z][^>]*(?:>|\Z)|</>", re.DOTALL)
_RAW_TEXT = re.compile(r"<(script|style)\b[^>]*>.*?(?:</\1\s*>|\Z)", re.DOTALL | re.IGNORECASE)
_PUNCTUATION = re.compile(r"[-;:,/\\\s]")  # ingestion3's beginAndEndPunctuationToRemove (\s: Java's ASCII \s)
_ENDING_PERIOD = re.compile(r".*?[^.]\.[\n\r \t\x0b\f]*")
_PERIOD_ENDS = frozenset(".\n\r \t\x0b\f")
_PERIOD_TAIL = re.compile(f"\\.[\\n\\r \\t\\x0b\\f{_H}{_V}]*\\Z")
_COORDINATES = re.compile(r"(-?\d+(\.\d+)?),\s*(-?\d+(\.\d+)?)")
_SENTENCE = re.compile(r".*?\.")


def vocabulary_key(term: str) -> str:
    """How ingestion3's vocabulary lookups key a term: lower case, Java-trimmed."""
    return term.lower().strip(JAVA_TRIM)


def _letter_or_digit(char: str) -> bool:
    return char.isalpha() or char.isdecimal()  # Java's isLetterOrDigit: L* and Nd


def _plain(value: str) -> bool:
    """Only single ASCII spaces inside, none at the ends (every other whitespace is not printable)."""
    return value.isprintable() and "  " not in value and value[:1] != " " and value[-1:] != " "


def reduce_whitespace(value: str) -> str:
    """Runs of horizontal and vertical whitespace -> one space, then trimmed."""
    return value if _plain(value) else _RUNS.sub(" ", value).strip(JAVA_TRIM)


@lru_cache(maxsize=16384)
def strip_html(value: str) -> str:
    """HTML markup and entities out (jsoup clean with no allowed tags, between two HTML 4 unescapes)."""
    if "&" in value:
        value = html.unescape(value)
    elif "<" not in value and _plain(value):
        return value
    if "<" in value:
        texts = [text for text in _TOKEN.split(_RAW_TEXT.sub("", value)) if text]
    else:
        texts = [value]
    last = len(texts) - 1
    out = []
    for n, text in enumerate(texts):
        blank = not text.strip(_HTML_WHITE)
        if blank and n < last and not texts[n + 1].strip(_HTML_WHITE):
            continue  # jsoup skips a blank text run followed by another
        if "&" in text:
            text = html.unescape(text)
        text = _HTML_SPACE.sub(" ", text)
        out.append(text.lstrip(" ") if n == 0 else text)
    return "".join(out).strip(JAVA_TRIM)


def cleanup_leading_punctuation(value: str) -> str:
    """Punctuation (``-;:,/\\``) and whitespace before the first letter or digit removed."""
    if value[:1].isalnum() and _letter_or_digit(value[0]):
        return value
    for index, char in enumerate(value):
        if _letter_or_digit(char):
            return _PUNCTUATION.sub("", value[:index]) + value[index:] if index else value
    return value


def cleanup_ending_punctuation(value: str) -> str:
    """Punctuation (``-;:,/\\``) and whitespace after the last letter or digit removed."""
    if value[-1:].isalnum() and _letter_or_digit(value[-1]):
        return value
    for index in range(len(value) - 1, -1, -1):
        if _letter_or_digit(value[index]):
            return value[: index + 1] + _PUNCTUATION.sub("", value[index + 1:])
    return value


def cleanup_ending_comma_and_space(value: str) -> str:
    """Commas and whitespace after the last letter or digit removed."""
    for index in range(len(value) - 1, -1, -1):
        if _letter_or_digit(value[index]):
            return value[: index + 1] + re.sub(r"[,\s]", "", value[index + 1:])
    return value


def strip_ending_period(value: str) -> str:
    """One final period (and whitespace after it) removed; an ellipsis or a lone period stays."""
    if value[-1:] not in _PERIOD_ENDS:
        return value
    if _ENDING_PERIOD.fullmatch(value):
        return _PERIOD_TAIL.sub("", value, count=1)
    return value


def capitalize_first_char(value: str) -> str:
    """The first letter or digit in upper case (one character for one, as Java's toUpperCase(char))."""
    for index, char in enumerate(value):
        if _letter_or_digit(char):
            upper = char.upper()
            return value[:index] + upper + value[index + 1:] if len(upper) == 1 and upper != char else value
    return value


def strip_dbl_quotes(value: str) -> str:
    return value.replace('"', "")


def split_at_delimiter(value: str, delimiter: str) -> list[str]:
    """Split around a delimiter (a regular expression, as Java's split), trimmed, empty parts dropped."""
    return [part.strip(JAVA_TRIM) for part in re.split(delimiter, value) if part.strip(JAVA_TRIM)]


def cleanup_geocoordinates(value: str) -> str:
    """``35.58343N, 83.50822W`` -> ``35.58343, 83.50822``; anything that is not a coordinate pair -> ``""``."""
    parts = split_at_delimiter(value, ",")
    if len(parts) != 2:
        return ""
    coordinates = f"{re.sub('[nN]$', '', parts[0])}, {re.sub('[wW]$', '', parts[1])}"
    return coordinates if _COORDINATES.fullmatch(coordinates) else ""


def convert_to_sentence_case(value: str) -> str:
    """Each sentence (up to a period) trimmed and its first character capitalised; text after the last period goes."""
    return " ".join(_capitalize(sentence.strip(JAVA_TRIM)) for sentence in _SENTENCE.findall(value))


def _capitalize(value: str) -> str:
    return value[:1].upper() + value[1:] if value and len(value[:1].upper()) == 1 else value


def limit_characters(value: str, length: int) -> str:
    return value[:length]


def strip_unmatched_closing_brackets(value: str) -> str:
    return value if "[" in value else value.replace("]", "")


def strip_unmatched_opening_brackets(value: str) -> str:
    return value if "]" in value else value.replace("[", "")


def apply_block_filter(value: str, patterns: Iterable[str]) -> str:
    """Every match of every pattern removed, whitespace reduced after each (ingestion3's ``applyBlockFilter``)."""
    for pattern in patterns:
        value = reduce_whitespace(_compiled(pattern, 0).sub("", value))
    return value


def apply_allow_filter(value: str, patterns: Iterable[str]) -> str:
    """The value (whitespace reduced) when a pattern is found in it, ignoring case, else ``""``."""
    found = any(_compiled(pattern, re.IGNORECASE).search(value) for pattern in patterns)
    return reduce_whitespace(value) if found else ""


@lru_cache(maxsize=1024)
def _compiled(pattern: str, flags: int) -> re.Pattern:
    return re.compile(pattern, flags | re.ASCII)  # as Java: \s, \d and (?i) are ASCII-only
