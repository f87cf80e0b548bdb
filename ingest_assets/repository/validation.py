"""Validation of repository objects: controlled vocabularies (XML files in one folder) and field rules.

A vocabulary file is ``<vocabulary name=".." field="dc:type|K2N_Field" severity="error|warning">`` with
``<term>`` children; matching ignores case. Field rules: Best_Quality_URI is mandatory (one absolute
http(s) URI); single-valued fields carry one value; repeated values in multi-valued fields and more
than one comma in a short phrase are warnings. Errors keep a record out of the repository.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from urllib.parse import urlsplit

from lxml import etree

from ingest_assets.core.errors import ConfigError
from ingest_assets.repository.model import RepositoryObject
from ingest_assets.core.xml_input import safe_parser

PACKAGED_VOCABULARIES = files("ingest_assets.repository") / "vocabularies"
SINGLE_VALUED = {"dc:title", "dc:type", "Best_Quality_URI", "Resource_ID", "Subtype", "Interactivity",
                 "ID_Tool_Structure", "Offline_Use", "Best_Quality_Availability", "License_URL",
                 "Page_Context_URI", "Attribution_Logo_URL", "Host_Application"}
FREE_TEXT = {"Description", "Caption", "Published_Source", "Copyright_Statement", "License_Statement",
             "Audience", "TemplateName", "Harvested", "Modified"}


@dataclass(frozen=True)
class Issue:
    severity: str  # "error" | "warning"
    record: str
    url: str
    field: str
    message: str


@dataclass(frozen=True)
class Vocabulary:
    name: str
    field: str
    severity: str
    terms: frozenset[str]
    source: str

    def canonical(self, value: str) -> str | None:
        lowered = value.casefold()
        return next((term for term in self.terms if term.casefold() == lowered), None)


def load_vocabularies(folder: Path | str | None = None) -> list[Vocabulary]:
    """Every ``*.xml`` vocabulary in ``folder`` (default: the ones shipped with the package)."""
    root = Path(folder) if folder else Path(str(PACKAGED_VOCABULARIES))
    if not root.is_dir():
        raise ConfigError(f"vocabulary folder {root} does not exist", file=str(root))
    parser = safe_parser()
    vocabularies = []
    for path in sorted(root.glob("*.xml")):
        try:
            element = etree.parse(str(path), parser).getroot()
        except etree.XMLSyntaxError as exc:
            raise ConfigError(f"vocabulary is not well-formed XML: {exc}", file=str(path)) from exc
        name, target, severity = (element.get(a) for a in ("name", "field", "severity"))
        if element.tag != "vocabulary" or not name or not target or severity not in ("error", "warning"):
            raise ConfigError("vocabulary needs <vocabulary name= field= severity=error|warning>", file=str(path))
        terms = frozenset(t.text.strip() for t in element.iterfind("term") if t.text and t.text.strip())
        vocabularies.append(Vocabulary(name, target, severity, terms, str(path)))
    return vocabularies


def _values(obj: RepositoryObject) -> dict[str, list[str]]:
    values = {f"dc:{name}": v for name, v in obj.dc.items()}
    values.update(obj.k2n)
    return values


def validate(obj: RepositoryObject, vocabularies: list[Vocabulary], *, record: str, url: str) -> list[Issue]:
    """Issues of one object; vocabulary matches are rewritten to the vocabulary's spelling."""
    found: list[tuple[str, str, str]] = []  # (severity, field, message)
    values = _values(obj)
    found += _uri_issues(values.get("Best_Quality_URI", []))
    for name, items in values.items():
        found += _value_issues(name, items)
    for vocabulary in vocabularies:
        found += _apply_vocabulary(obj, vocabulary, values.get(vocabulary.field, []))
    return [Issue(severity, record, url, name, message) for severity, name, message in found]


def _uri_issues(uris: list[str]) -> list[tuple[str, str, str]]:
    if not uris:
        return [("error", "Best_Quality_URI", "mandatory field Best_Quality_URI is missing")]
    return [("error", "Best_Quality_URI", f"{uri!r} is not an absolute http(s) URI") for uri in uris
            if urlsplit(uri).scheme not in ("http", "https") or not urlsplit(uri).netloc]


def _value_issues(name: str, items: list[str]) -> list[tuple[str, str, str]]:
    found = []
    if name in SINGLE_VALUED and len(items) > 1:
        found.append(("error", name, f"single-valued field has {len(items)} values: {'; '.join(items)}"))
    elif len(set(items)) < len(items):
        found.append(("warning", name, "repeated values: " + "; ".join(sorted({v for v in items if items.count(v) > 1}))))
    if name not in FREE_TEXT:
        found += [("warning", name, f"more than one comma in {value!r}: separate multiple values with ';'")
                  for value in items if value.count(",") > 1]
    return found


def _apply_vocabulary(obj: RepositoryObject, vocabulary: Vocabulary, items: list[str]) -> list[tuple[str, str, str]]:
    """Issues of values outside ``vocabulary``; the values it knows are rewritten to its spelling."""
    found, fixed = [], []
    for value in items:
        term = vocabulary.canonical(value)
        if term is None:
            found.append((vocabulary.severity, vocabulary.field, f"{value!r} is not in vocabulary {vocabulary.name}"))
        fixed.append(term or value)
    if items:
        if vocabulary.field.startswith("dc:"):
            obj.dc[vocabulary.field[3:]] = fixed
        else:
            obj.k2n[vocabulary.field] = fixed
    return found
