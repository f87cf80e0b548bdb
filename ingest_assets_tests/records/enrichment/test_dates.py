"""Dates as ingestion3 reads them: DateBuilder (its chain) and ParseDateEnrichment (``dates: parse_date``)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest_assets.records.enrichment.dates import begin_end, edtf_range, parse_date


@pytest.mark.parametrize(
    ("label", "span"),
    [
        ("1930", ("1930", "1930")),  # what DPLA published for Digital Commonwealth's "1930"
        ("1917-1934", ("1917", "1934")),  # ... and for "1917-1934"
        (" 1846 ", ("1846", "1846")),
        ("1860 - 1870", ("1860", "1870")),
        ("1980-1970", ("1980", "1970")),  # DateBuilder does not order a range
        # DPLA published these without begin and end: DateBuilder reads only years
        ("1914-04-24", (None, None)), ("circa 1873", (None, None)), ("19th century", (None, None)),
        ("ca. 1940-1979", (None, None)), ("July 1939", (None, None)), ("1939-07", (None, None)),
        ("1970-1979;", (None, None)), ("", (None, None)), ("12345", (None, None)), ("١٩٣٠", (None, None)),
    ],
)
def test_date_builder(label, span):
    assert begin_end(label) == span


@pytest.mark.parametrize(
    ("label", "edtf"),
    [
        ("1950", ("1950", "1950")), ("1950-05", ("1950-05", "1950-05")), ("1950~", ("1950", "1950")),
        ("195u", ("1950", "1959")), ("19uu", ("1900", "1999")), ("1950-uu-uu", ("1950-01-01", "1950-12-31")),
        ("2001-10-07T07:00:00Z", ("2001-10-07", "2001-10-07")), ("1950/1960", ("1950", "1960")),
        ("unknown/1960", ("", "1960")), ("1950-05/open", ("1950-05", "")), ("2001-21", ("2001", "2001")),
        ("undated", None), ("1950s", None),
    ],
)
def test_edtf(label, edtf):
    assert edtf_range(label) == edtf


@pytest.mark.parametrize(
    ("label", "parsed"),
    [
        ("October 21, 2008", ("2008-10-21", None, None)),
        ("1950-05/1951-02-10", ("1950-05/1951-02-10", "1950-05", "1951-02-10")),
        ("1860 to 1870", ("1860 to 1870", "1860-01-01", "1870-01-01")),  # ranges: each year's first day
        # SimpleDateFormat's "yyyy" reads the start of a value and ignores the rest, before the decade,
        # month-year and partial-range readers are tried (so they seldom are): ingestion3 does the same
        ("1950s", ("0195-01-01", None, None)),  # preprocessed to "195x"
        ("02-1950", ("0002-01-01", None, None)),
        ("1850-60", ("1850-01-01", None, None)),
        ("undated", None),
    ],
)
def test_parse_date(label, parsed):
    assert parse_date(label) == (tuple(parsed) if parsed else None)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=30), st.from_regex(r"\A(ca\. |circa |late )?\d{3,4}[-/s?~xu]{0,2}(\d{2,4})?\Z")))
def test_any_label_parses_or_not_without_error(label):
    begin, end = begin_end(label)
    assert (begin is None) == (end is None) and (begin is None or re.fullmatch(r"\d{4}", begin))
    parsed = parse_date(label)
    assert parsed is None or isinstance(parsed.pref_label, str)
