"""Template records: one template occurrence on a wiki page, as the TemplateParameterIndex reports it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from urllib.parse import quote

from lxml import etree

_SPACES = re.compile(r"[\s_]+")


def template_name(name: str) -> str:
    """Canonical template name: ``Template:`` dropped, ``_`` = space, first letter upper-case."""
    text = _SPACES.sub(" ", name).strip()
    if text.lower().startswith("template:"):
        text = text[len("template:"):].strip()
    return text[:1].upper() + text[1:]


def parameter_name(name: str) -> str:
    """Canonical parameter key: case-folded, ``_`` and runs of whitespace -> one space."""
    return _SPACES.sub(" ", name).strip().casefold()


def page_url(base_url: str, page: str) -> str:
    """URL of a wiki page: BaseURL + page name (spaces -> ``_``, escaped like MediaWiki's wfUrlencode)."""
    return base_url + quote(_SPACES.sub("_", page.strip()), safe=";@$!*(),/~:")


def parse_timestamp(value: str | None) -> datetime | None:
    """ISO-ish timestamps (``2010-01-25 00:07:43``, ``2014-09-08T19:05:22Z``); naive ones are UTC."""
    if not value or not value.strip():
        return None
    parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


@dataclass(frozen=True)
class TemplateRecord:
    template: str
    base_url: str
    page: str
    params: dict[str, str]
    modified: datetime | None = None
    harvested: datetime | None = None
    source_url: str = ""
    occurrence: int = 0
    revision: int | None = None  # the wiki revision the page was read at, when the source says
    names: dict[str, str] = field(default_factory=dict, compare=False)

    @property
    def page_url(self) -> str:
        return page_url(self.base_url, self.page)

    @property
    def ref(self) -> str:
        """Short human reference used in errors and reports."""
        return f"{self.page}#{self.template}[{self.occurrence}]"

    def get(self, name: str, default: str = "") -> str:
        return self.params.get(parameter_name(name), default)

    def item_xml(self) -> bytes:
        """Canonical XML of the record (no harvest/modify times): the input of member PIDs' md5."""
        root = etree.Element("record", template=self.template, base=self.base_url, page=self.page)
        for key in sorted(self.params):
            etree.SubElement(root, "param", name=key).text = self.params[key]
        return etree.tostring(root, encoding="utf-8")


def make_record(template: str, base_url: str, page: str, raw_params: dict[str, str], **kwargs) -> TemplateRecord:
    """Build a record from source parameter names/values, canonicalizing names; empty values dropped."""
    params, names = {}, {}
    for name, value in raw_params.items():
        key = parameter_name(name)
        if key and value is not None and value.strip():
            params[key] = value.strip()
            names[key] = name.strip()
    return TemplateRecord(template_name(template), base_url, page, params, names=names, **kwargs)
