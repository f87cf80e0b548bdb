"""Template records -> repository objects, per the spec's mapping tables.

* ``Key Start`` (identification keys): the spec's table plus the implied values; each wiki page is its
  own collection and the wiki (BaseURL) is the provider.
* ``Infobox Organisation`` (providers): the spec's provider table; the PID comes from the homepage.
* ``Metadata``: parameters are K2N field names; Title/Type/Language go to DC, the rest to K2N.
  ``Type = Collection`` makes a collection object; other types are members of their ``Collection Page``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ingest_assets.core.errors import ValidationError
from ingest_assets.repository.model import RepositoryObject
from ingest_assets.repository.pids import member_pid, pid_from_uri, type_code
from ingest_assets.repository.records import TemplateRecord, page_url
from ingest_assets.core.version import software_version

MULTI_SEPARATOR = re.compile(r"\s*;\s*")

KEY_START_FIELDS = {
    "title": "dc:title",
    "language": "dc:language",
    "category": "General_Keywords",
    "geoscope": "World_Region_or_Locality",
    "audience": "Audience",
    "description": "Description",
    "source": "Published_Source",
    "creators": ("Metadata_Creator", "Creators"),
    "initiated by": "Contributors",
    "edited by": "Contributors",
    "general review by": "Reviewer_Names",
    "nomreview by": "Reviewer_Names",
    "expert review by": "Reviewer_Names",
    "commonnames": "Common_Names",
    "parent key": "Taxonomic_Coverage",
}
KEY_START_IGNORED = {"id", "collaboration limited to"}
KEY_START_IMPLIED = {
    "Host_Application": "Web Browser",
    "Interactivity": "Dynamic",
    "ID_Tool_Structure": "polytomous",
    "Copyright_Statement": "Copyright reserved by the contributing authors",
    "License_Statement": "Licensed under Creative Commons cc-by-sa 3.0",
    "Best_Quality_Availability": "online (free)",
}
ORGANISATION_IGNORED = {"foundation", "name", "abbreviation", "type", "logo", "homepage"}
ORGANISATION_FIELDS = {"location country": "Country_Names", "location city": "City_or_Place_Name"}
METADATA_DC = {"title": "title", "type": "type", "language": "language", "languages": "language"}
METADATA_RELATIONS = {"collection page", "provider page"}


@dataclass
class Mapped:
    """Objects made from one record (a member may bring its synthetic collection/provider) + notes."""

    obj: RepositoryObject
    collection_uri: str
    notes: list[str] = field(default_factory=list)


def _add(obj: RepositoryObject, name: str, value: str, *, split: bool = True) -> None:
    values = [v for v in MULTI_SEPARATOR.split(value) if v] if split else [value]
    if name.startswith("dc:"):
        obj.dc.setdefault(name[3:], []).extend(values)
    else:
        obj.k2n.setdefault(name, []).extend(values)


def _provenance(obj: RepositoryObject, record: TemplateRecord) -> None:
    obj.k2n["TemplateName"] = [record.template]
    for name, stamp in (("Harvested", record.harvested), ("Modified", record.modified)):
        if stamp is not None:
            obj.k2n[name] = [stamp.isoformat().replace("+00:00", "Z")]
    obj.harvesting_url = record.page_url
    facts = {"source": record.source_url, "page": record.page_url, "revision": record.revision,
             "template": record.template, "occurrence": record.occurrence, "software_version": software_version()}
    obj.lineage = {name: str(value) for name, value in facts.items() if value not in (None, "")}


def map_key_start(record: TemplateRecord, *, default_language: str) -> Mapped:
    """A ``Key Start`` record -> identification-tool member of its page's collection."""
    url = record.page_url + (f"#{record.get('id')}" if record.get("id") else "")
    obj = RepositoryObject(pid=member_pid("id", record.item_xml()), kind="member",
                           collection=pid_from_uri(record.page_url), provider=pid_from_uri(record.base_url))
    notes = []
    for key, value in record.params.items():
        target = KEY_START_FIELDS.get(key)
        if target is None:
            if key not in KEY_START_IGNORED:
                notes.append(f"parameter {record.names.get(key, key)!r} has no K2N mapping and was ignored")
            continue
        for name in (target if isinstance(target, tuple) else (target,)):
            _add(obj, name, value, split=name not in ("dc:title", "Description", "Audience", "Published_Source"))
    obj.dc["type"] = ["Identification Tool"]
    obj.dc.setdefault("language", [default_language])
    for name, value in KEY_START_IMPLIED.items():
        obj.k2n[name] = [value]
    obj.k2n["Best_Quality_URI"] = [url]
    obj.k2n["Resource_ID"] = [url]
    _provenance(obj, record)
    return Mapped(obj, record.page_url, notes)


def page_collection(base_url: str, page: str) -> RepositoryObject:
    """The implied collection of a wiki page (keys' pages; Metadata collections without a collection
    record); its provider is the wiki."""
    url = page_url(base_url, page)
    return RepositoryObject(pid=pid_from_uri(url), kind="collection", provider=pid_from_uri(base_url),
                            dc={"title": [page], "type": ["Collection"]},
                            k2n={"Best_Quality_URI": [url], "Resource_ID": [url]}, harvesting_url=url)


def wiki_provider(base_url: str) -> RepositoryObject:
    """The implied provider of wiki-page collections: the wiki itself."""
    return RepositoryObject(pid=pid_from_uri(base_url), kind="provider",
                            dc={"title": [base_url], "type": ["Provider"]},
                            k2n={"Best_Quality_URI": [base_url], "Page_Context_URI": [base_url]},
                            harvesting_url=base_url)


def logo_url(base_url: str, value: str) -> str:
    """``[[File:Logo.png|...]]`` or ``Logo.png`` -> the wiki's Special:FilePath URL; URLs pass through."""
    text = value.strip().strip("[]").split("|")[0].strip()
    if re.match(r"^https?://", text):
        return text
    text = re.sub(r"^(file|image|datei|bild):", "", text, flags=re.I).strip()
    return page_url(base_url, f"Special:FilePath/{text}")


def map_organisation(record: TemplateRecord) -> Mapped:
    """An ``Infobox Organisation`` record -> provider object (PID from its homepage)."""
    homepage = record.get("homepage")
    if not homepage:
        raise ValidationError("Infobox Organisation without homepage: a provider MUST give one",
                              record=record.ref, file=record.page_url)
    obj = RepositoryObject(pid=pid_from_uri(homepage), kind="provider", dc={"type": ["Provider"]})
    name, abbreviation, kind = record.get("name"), record.get("abbreviation"), record.get("type")
    if abbreviation:
        obj.dc["title"] = [abbreviation]
        if name:
            obj.k2n["Description"] = [name]
        if kind:
            obj.k2n["Caption"] = [kind]
    else:
        if name:
            obj.dc["title"] = [name]
        if kind:
            obj.k2n["Description"] = [kind]
    if record.get("logo"):
        obj.k2n["Attribution_Logo_URL"] = [logo_url(record.base_url, record.get("logo"))]
    for key, target in ORGANISATION_FIELDS.items():
        if record.get(key):
            _add(obj, target, record.get(key))
    obj.k2n["Page_Context_URI"] = [homepage]
    obj.k2n["Best_Quality_URI"] = [record.page_url]
    notes = [f"parameter {record.names.get(k, k)!r} has no K2N mapping and was ignored" for k in record.params
             if k not in ORGANISATION_IGNORED and k not in ORGANISATION_FIELDS]
    _provenance(obj, record)
    return Mapped(obj, record.page_url, notes)


def k2n_field(name: str) -> str:
    """K2N field name from a template parameter name (``Best Quality URI`` -> ``Best_Quality_URI``)."""
    return re.sub(r"\W+", "_", name.strip()).strip("_")


def metadata_collection_uri(record: TemplateRecord) -> str:
    """The collection a ``Metadata`` record belongs to (a collection record is its own)."""
    if record.get("type").strip().lower() == "collection" or not record.get("collection page"):
        return record.page_url
    return page_url(record.base_url, record.get("collection page"))


def map_metadata(record: TemplateRecord, *, provider_pid: str | None = None) -> Mapped:
    """A ``Metadata`` record -> collection object (Type = Collection) or collection member."""
    resource_type = record.get("type")
    if not resource_type:
        raise ValidationError("Metadata record without Type", record=record.ref, file=record.page_url)
    collection_uri = metadata_collection_uri(record)
    provider_page = record.get("provider page")
    provider = provider_pid or (pid_from_uri(page_url(record.base_url, provider_page)) if provider_page else None)
    if resource_type.strip().lower() == "collection":
        obj = RepositoryObject(pid=pid_from_uri(collection_uri), kind="collection", provider=provider)
    else:
        obj = RepositoryObject(pid=member_pid(type_code(resource_type), record.item_xml()), kind="member",
                               collection=pid_from_uri(collection_uri), provider=provider)
    for key, value in record.params.items():
        if key in METADATA_RELATIONS:
            continue
        name = "dc:" + METADATA_DC[key] if key in METADATA_DC else k2n_field(record.names.get(key, key))
        _add(obj, name, value, split=name not in ("dc:title", "Description", "Caption"))
    if obj.kind == "collection":
        obj.k2n.setdefault("Best_Quality_URI", [collection_uri])
    _provenance(obj, record)
    return Mapped(obj, collection_uri)
