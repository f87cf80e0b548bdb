"""The enrichment's data files (ingestion3's lists and tables, see SOURCES.md), read through importlib.resources."""

from __future__ import annotations

import csv
from importlib.resources import files


def lines(name: str) -> list[str]:
    """The lines of a data file, without comments (``#``, as ingestion3 reads them) and blank lines."""
    text = files(__package__).joinpath(name).read_text(encoding="utf-8-sig")
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


def rows(name: str, columns: int) -> list[list[str]]:
    """The CSV rows of a data file (comments skipped), split into at most ``columns`` fields."""
    out = []
    for row in csv.reader(lines(name)):
        out.append(row[: columns - 1] + [",".join(row[columns - 1:])] if len(row) > columns else row)
    return out
