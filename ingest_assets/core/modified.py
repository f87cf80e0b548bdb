"""``modified`` values (registry and ``dcterms:modified``) as time-zone-aware UTC datetimes.

Both forms occur: date-only (``2015-10-10``, ``xsd:date``, optionally with a zone such as ``2015-10-10Z``)
and datetimes (``2015-12-04 14:25:44.758604``, ``2015-12-04T14:25:44+01:00``). A date means the start of
that day; values without a zone are taken as UTC (the convention of the GeoLink registry).
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, timezone

_DATE_WITH_ZONE = re.compile(r"^(\d{4}-\d{2}-\d{2})(Z|[+-]\d{2}:\d{2})$")


def _zone(text: str) -> timezone:
    if text == "Z":
        return timezone.utc
    sign = -1 if text[0] == "-" else 1
    hours, minutes = int(text[1:3]), int(text[4:6])
    return timezone(sign * timedelta(hours=hours, minutes=minutes))


def parse_modified(value: str | date | datetime) -> datetime:
    """A registry or VoID ``modified`` value as an aware UTC datetime; ``ValueError`` if it is not one."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime.combine(value, time(0))
    elif isinstance(value, str):
        text = value.strip()
        if not text:
            raise ValueError("empty date")
        zoned = _DATE_WITH_ZONE.match(text)
        if zoned:
            moment = datetime.combine(date.fromisoformat(zoned[1]), time(0), tzinfo=_zone(zoned[2]))
        else:
            moment = datetime.fromisoformat(text)
    else:
        raise ValueError(f"not a date or datetime: {value!r}")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


def format_modified(moment: datetime) -> str:
    """The canonical text of a parsed ``modified`` (used in run keys and status documents)."""
    return moment.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")
