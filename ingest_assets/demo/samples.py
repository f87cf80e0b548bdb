"""Deterministic sample records: a fictional local-history photo collection, as Dublin Core fields.

The values are deliberately untidy in the ways real providers are (date formats, language labels,
rights URIs with https and /page/, stray whitespace and punctuation) so enrichment has work to do.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone

PLACES = ["Millbrook", "Harlow Falls", "East Ferry", "Cedar Bend", "Stonegate"]
SUBJECTS = ["Railroads", "Floods", "Main streets", "Schools", "Harvest festivals", "Bridges", "Mills"]
DATES = ["1923", "1950s", "ca. 1910", "1948-06", "1936-07-04", "[19--]", "1901-1905", "1962/1964", "circa 1889"]
LANGUAGES = ["eng", "English", "en", "spa"]
TYPES = ["Image", "still image", "photograph", "Text"]
RIGHTS = [
    "https://rightsstatements.org/page/InC-EDU/1.0/?language=en",
    "http://rightsstatements.org/vocab/NoC-US/1.0/",
    "https://creativecommons.org/licenses/by/4.0",
]


@dataclass(frozen=True)
class SampleRecord:
    identifier: str
    datestamp: datetime
    deleted: bool
    fields: dict[str, list[str]]


def sample_records(count: int = 60, day: date = date(2026, 1, 15)) -> list[SampleRecord]:
    """``count`` records with datestamps spread over ``day`` and the days before and after it;
    every 15th record is a deletion and every 20th lacks a rights statement (mapping must reject it)."""
    first = datetime.combine(day - timedelta(days=1), time(0), tzinfo=timezone.utc)
    step = timedelta(days=3) / max(count, 1)
    records = []
    for n in range(count):
        place = PLACES[n % len(PLACES)]
        subject = SUBJECTS[n % len(SUBJECTS)]
        fields = {
            "title": [f"  {subject} in {place}, view {n + 1}. "],
            "creator": [f"Photographer {chr(65 + n % 6)}."],
            "subject": [subject, f"{place} (Imaginary County)"],
            "description": [f"Glass-plate negative of <i>{subject.lower()}</i> in {place}."],
            "date": [DATES[n % len(DATES)]],
            "type": [TYPES[n % len(TYPES)]],
            "format": ["image/jpeg"],
            "identifier": [f"https://demo.example.org/items/{n + 1:05d}", f"demo-{n + 1:05d}"],
            "language": [LANGUAGES[n % len(LANGUAGES)]],
            "publisher": ["Riverside Historical Society"],
            "coverage": [place],
            "rights": [] if n % 20 == 19 else [RIGHTS[n % len(RIGHTS)]],
        }
        records.append(SampleRecord(f"oai:demo.example.org:{n + 1:05d}", first + step * n, n % 15 == 14, fields))
    return records
