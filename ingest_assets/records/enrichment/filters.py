"""ingestion3's block and allow lists (``normalizations/filters``), read from the data files, and the regular
expressions ``FilterRegex`` builds from their terms."""

from __future__ import annotations

import re
from functools import cache

from ingest_assets.records.enrichment.data import lines, rows
from ingest_assets.records.enrichment.normalize import apply_allow_filter, apply_block_filter, reduce_whitespace

SURROGATE_FILES = ("dc", "in", "ohio", "p2p", "vt", "iana-imt-types")


def _escape(term: str) -> str:
    """FilterRegex's escape: only backslash, slash, plus and hyphen (other characters keep their regex meaning)."""
    return term.replace("\\", "\\\\").replace("/", "\\/").replace("+", "\\+").replace("-", "\\-")


def block_list_regex(term: str) -> str:
    """The whole value is the term, ignoring case and surrounding whitespace."""
    return r"(?i)^\s*" + _escape(term) + r"\s*$"


allow_list_regex = block_list_regex  # as in ingestion3, the same pattern for now


@cache
def digital_surrogate_block_list() -> tuple[str, ...]:
    """DigitalSurrogateBlockList: file formats, media types and digital-surrogate values (format field)."""
    return tuple(sorted({block_list_regex(term) for name in SURROGATE_FILES for term in lines(f"formats/{name}.csv")}))


@cache
def format_type_values_block_list() -> tuple[str, ...]:
    """FormatTypeValuesBlockList: DCMI type words that are not formats."""
    return tuple(block_list_regex(term) for term in lines("filters/format-type-values.txt"))


@cache
def extent_identification_list() -> tuple[str, ...]:
    """ExtentIdentificationList: values that look like extents (``1 x 2``, a leading number)."""
    return tuple(lines("filters/extent-identification.txt"))


@cache
def extent_exceptions_list() -> tuple[str, ...]:
    return tuple(lines("filters/extent-exceptions.txt"))


@cache
def type_allow_list() -> tuple[str, ...]:
    """TypeAllowList: the local type terms of ``dpla-type-normalization.csv``."""
    return tuple(sorted({allow_list_regex(row[0]) for row in rows("types/dpla-type-normalization.csv", 2)}))


def extract_extents(value: str) -> str:
    """The value when it looks like an extent, less the exceptions (``extractExtents``), else ``""``."""
    return apply_block_filter(apply_allow_filter(value, extent_identification_list()), extent_exceptions_list())


@cache
def _format_block() -> re.Pattern:
    """DigitalSurrogateBlockList and FormatTypeValuesBlockList as one pattern. Every pattern of both is a whole
    value, so removing the value when any one matches is what applying them one by one does."""
    terms = [pattern[len(r"(?i)^\s*"):-len(r"\s*$")] for pattern in
             (*digital_surrogate_block_list(), *format_type_values_block_list())]
    return re.compile(r"^\s*(?:" + "|".join(terms) + r")\s*$", re.IGNORECASE | re.ASCII)


def block_formats(value: str) -> str:
    """``""`` for a media type, file format or type word, else the value (the format block filter most of
    ingestion3's hub mappings apply; whitespace is the next steps' business)."""
    return "" if _format_block().match(reduce_whitespace(value)) else value
