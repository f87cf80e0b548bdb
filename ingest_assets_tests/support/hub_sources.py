"""Where each public fact of a shipped hub comes from: the ``# source WHAT: FILE:LINE`` lines of its entry's comment in
``records/mapping/hubs.yaml`` (the file's header says how they read), parsed; what a fact says, checked against the
lines it cites in ingestion3's mirror (read with ``git show``); and the docs table's "source" cell made of them.

    [fact] = [f for f in facts("maryland") if f.months]
    unsaid(fact, entry, cited_text(fact))   # [] when every value the fact names is in the lines it cites
"""

from __future__ import annotations

import calendar
import re
import subprocess
from dataclasses import dataclass
from functools import cache
from typing import Any
from urllib.parse import urlsplit

from ingest_assets.records.mapping.hubs import entry_texts
from ingest_assets_tests.support import ingestion3

COMMIT = "1d1dbae5"  # the ingestion3 commit a FILE:LINE without its own commit is read at
SOURCE_RE = re.compile(r"^# source (?P<what>.+?): (?P<cites>\S+:\d+(?:-\d+)?(?:; \S+:\d+(?:-\d+)?)*)$")
CITE_RE = re.compile(r"^(?:(?P<commit>[0-9a-f]{7,40}):)?(?P<path>[^:\s]+):(?P<first>\d+)(?:-(?P<last>\d+))?$")
MONTHS_RE = re.compile(r"^months (?P<months>\d{1,2}(?:, \d{1,2})*)$")


@dataclass(frozen=True)
class Cite:
    """Lines ``first``..``last`` of ``path`` at ingestion3's ``commit``."""

    path: str
    first: int
    last: int
    commit: str = COMMIT

    def __str__(self) -> str:
        lines = f"{self.first}" if self.first == self.last else f"{self.first}-{self.last}"
        return f"{'' if self.commit == COMMIT else self.commit + ':'}{self.path}:{lines}"


@dataclass(frozen=True)
class Fact:
    """One ``# source`` line: the entry's keys it is the source of (``harvest.endpoint``), or the re-ingest months
    it names, or a phrase of the file (``"VPN"``), and where ingestion3 says it."""

    what: str
    cites: tuple[Cite, ...]

    @property
    def months(self) -> list[int] | None:
        found = MONTHS_RE.match(self.what)
        return [int(month) for month in found["months"].split(", ")] if found else None

    @property
    def quote(self) -> str | None:
        return self.what[1:-1] if len(self.what) > 2 and self.what[0] == self.what[-1] == '"' else None

    @property
    def keys(self) -> list[str]:
        return [] if self.months is not None or self.quote is not None else self.what.split(", ")


def parse_cite(text: str) -> Cite:
    found = CITE_RE.match(text)
    if found is None:
        raise ValueError(f"not FILE:LINE or COMMIT:FILE:LINE: {text!r}")
    first = int(found["first"])
    return Cite(found["path"], first, int(found["last"] or first), found["commit"] or COMMIT)


_entry_texts = cache(entry_texts)


def facts(hub: str) -> list[Fact]:
    """The ``# source`` lines of ``hub``'s shipped entry, in order."""
    found = []
    for line in _entry_texts()[hub].splitlines():
        if line.startswith("# source "):
            match = SOURCE_RE.match(line)
            if match is None:
                raise ValueError(f"{hub}: a source line is not '# source WHAT: FILE:LINE[; FILE:LINE]': {line!r}")
            found.append(Fact(match["what"], tuple(parse_cite(cite) for cite in match["cites"].split("; "))))
    return found


@cache
def _file(commit: str, path: str) -> list[str] | None:
    """The lines of ``path`` at ``commit``; None without a mirror that has the commit; [] when it has no such file."""
    try:
        text = ingestion3.show(path, commit)
    except subprocess.CalledProcessError:
        return []
    return None if text is None else text.splitlines()


def cited_text(fact: Fact) -> str | None:
    """The lines ``fact`` cites, one text (None when this machine cannot read one of them)."""
    parts = []
    for cite in fact.cites:
        lines = _file(cite.commit, cite.path)
        if lines is None:
            return None
        parts.append("\n".join(lines[cite.first - 1:cite.last]) if cite.last <= len(lines) else "")
    return "\n".join(parts)


def value(entry: dict, key: str) -> Any:
    """The value at the dotted ``key`` of a shipped entry (``harvest.params.vid``)."""
    node: Any = entry
    for part in key.split("."):
        node = node[part]
    return node


def fragments(item: Any) -> list[str]:
    """What the cited lines must hold for ``item`` to be said there: a URL's scheme, host and path (code builds them
    apart), an s3:// URI's bucket and each key segment, a template's text around ``{set}``, a list's items."""
    if isinstance(item, list):
        return [part for element in item for part in fragments(element)]
    text = str(item)
    if text.startswith("s3://"):
        return [part for part in text[len("s3://"):].split("/") if part]
    if re.match(r"^https?://", text):
        url = urlsplit(text)
        return [url.scheme, url.netloc] + ([url.path.rstrip("/")] if url.path.rstrip("/") else [])
    return [part for part in text.split("{set}") if part]


def cron_months(cron: str) -> list[int]:
    """The months of a five-field cron (``*``: every month)."""
    field = cron.split()[3]
    return list(range(1, 13)) if field == "*" else sorted(int(month) for month in field.split(","))


def _month_said(month: int, text: str) -> bool:
    words = (str(month), calendar.month_name[month], calendar.month_abbr[month])
    return any(re.search(rf"\b{word}\b", text) for word in words)


def unsaid(fact: Fact, entry: dict, text: str) -> list[str]:
    """What ``fact`` claims that the lines it cites (``text``) do not say: [] when they say it all."""
    if fact.months is not None:
        return [f"month {month}" for month in fact.months if not _month_said(month, text)]
    if fact.quote is not None:
        return [] if fact.quote.lower() in text.lower() else [f'"{fact.quote}"']
    return [f"{key}: {part!r}" for key in fact.keys for part in fragments(value(entry, key)) if part not in text]


LOCATION_KEYS = ("endpoint", "metadata_prefix", "sets", "exclude_sets", "path")


def location_keys(harvest: dict) -> list[str]:
    """The keys of a harvest block that say where and what to harvest (``harvest.endpoint``, each query parameter
    but a secret's reference): each must be a public fact's or one to fill in."""
    keys = [f"harvest.{key}" for key in LOCATION_KEYS if key in harvest]
    params = harvest.get("params", {})
    return keys + [f"harvest.params.{name}" for name, param in params.items() if not isinstance(param, dict)]


def source_cell(hub: str, harvest: dict) -> str:
    """docs/hubs.md's "source" cell: each public fact and where ingestion3 says it, then what is yours to confirm
    (a public value, DPLA's own bucket) or to fill in."""
    said, cited = [], set()
    for fact in facts(hub):
        what = (f"months {', '.join(map(str, fact.months))}" if fact.months is not None else
                f'"{fact.quote}"' if fact.quote is not None else ", ".join(f"`{key}`" for key in fact.keys))
        said.append(f"{what} ({'; '.join(f'`{cite}`' for cite in fact.cites)})")
        cited.update(fact.keys)
    keys = [f"harvest.{key}" for key in harvest.get("fill_in", {})]
    for verb, named in (("confirm", [key for key in keys if key in cited]), ("yours", [k for k in keys if k not in cited])):
        said += [f"{verb}: {', '.join(f'`{key}`' for key in named)}"] if named else []
    return "; ".join(said) or "-"
