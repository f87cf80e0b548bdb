"""Date labels -> TimeSpan begin/end, one case per supported pattern (and what is refused)."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest_assets.records.enrichment import parse_date


@pytest.mark.parametrize(
    ("label", "begin", "end"),
    [
        ("1950", "1950-01-01", "1950-12-31"),  # YYYY
        ("1950-05", "1950-05-01", "1950-05-31"),  # YYYY-MM
        ("2000-02", "2000-02-01", "2000-02-29"),  # leap year
        ("1900-02", "1900-02-01", "1900-02-28"),  # not a leap year
        ("2008-10-21", "2008-10-21", "2008-10-21"),  # YYYY-MM-DD
        ("2001-10-07T07:00:00Z", "2001-10-07", "2001-10-07"),  # ISO date-time (Montana)
        ("1970-1979", "1970-01-01", "1979-12-31"),  # YYYY-YYYY
        ("1970-1979;", "1970-01-01", "1979-12-31"),  # CONTENTdm trailing delimiter (Maryland temporal)
        ("1860 - 1870", "1860-01-01", "1870-12-31"),
        ("1860 to 1870", "1860-01-01", "1870-12-31"),
        ("1950s", "1950-01-01", "1959-12-31"),  # decade
        ("1950's", "1950-01-01", "1959-12-31"),
        ("circa 1950", "1950-01-01", "1950-12-31"),
        ("ca. 1950", "1950-01-01", "1950-12-31"),
        ("c. 1950-1960", "1950-01-01", "1960-12-31"),
        ("approximately 1950s", "1950-01-01", "1959-12-31"),
        ("[19--]", "1900-01-01", "1999-12-31"),  # century, catalogue style
        ("[195-]", "1950-01-01", "1959-12-31"),  # decade, catalogue style
        ("[1950?]", "1950-01-01", "1950-12-31"),
        ("1950?", "1950-01-01", "1950-12-31"),
        ("1950~", "1950-01-01", "1950-12-31"),  # EDTF approximate
        ("19XX", "1900-01-01", "1999-12-31"),  # EDTF unspecified digits
        ("195u", "1950-01-01", "1959-12-31"),  # MARC-style unknown digit
        ("1950/1960", "1950-01-01", "1960-12-31"),  # EDTF interval
        ("1950-05/1951-02-10", "1950-05-01", "1951-02-10"),
        ("1950-05/..", "1950-05-01", None),  # open end
        ("../1960", None, "1960-12-31"),  # open start
        ("1950/", "1950-01-01", None),  # unknown end
        ("19th century", "1800-01-01", "1899-12-31"),
        ("October 21, 2008", "2008-10-21", "2008-10-21"),
        ("21 Oct 2008", "2008-10-21", "2008-10-21"),
        ("Oct. 2008", "2008-10-01", "2008-10-31"),
    ],
)
def test_understood_labels(label, begin, end):
    assert parse_date(label) == (begin, end)


@pytest.mark.parametrize(
    "label",
    ["", "   ", "undated", "n.d.", "2008-13-01", "2008-02-30", "1980-1970", "1960/1950", "../..", "/", "[1--]",
     "19X", "Smarch 2008", "12345"],
)
def test_refused_labels(label):
    assert parse_date(label) is None


@settings(max_examples=300, deadline=None)
@given(st.one_of(
    st.text(max_size=30),
    st.from_regex(r"\A\[?(ca\. |circa )?\d{3,4}[-/s?~XuU]{0,2}(\d{2,4})?\]?\Z"),
))
def test_any_label_gives_an_ordered_span_or_none(label):
    span = parse_date(label)
    if span is not None:
        begin, end = span
        assert begin is not None or end is not None
        for value in (begin, end):
            assert value is None or date.fromisoformat(value)
        assert begin is None or end is None or begin <= end
