"""The wiki markup of a Commons file page, as ingestion3's ``buildWikiMarkup`` writes it for a record (an
``{{Artwork}}`` template with creator, title, description, date, the permission template of the rights statement,
the ``{{DPLA}}`` source and the institution), here from the record's index document."""

from __future__ import annotations

import re

from ingest_assets.records.enrichment.institutions import WIKIDATA_ENTITY
from ingest_assets.records.wikimedia.eligibility import wikidata_entity

# reservedWikiChars, replaced in this order, each by itself inside <nowiki>
RESERVED = ("|", "=", "[[", "]]", "{{", "}}", "''")
# getWikiPermissionTemplate: rights statement prefix -> Commons template (CC BY and BY-SA: licenseToMarkupCode)
PERMISSIONS = (
    ("http://rightsstatements.org/vocab/NKC/", "NKC"),
    ("http://rightsstatements.org/vocab/NoC-US/", "NoC-US"),
    ("http://creativecommons.org/publicdomain/mark/", "PD-US"),
    ("http://creativecommons.org/publicdomain/zero/", "cc-zero"),
)
LICENSE = re.compile(r"(^http://creativecommons.org/licenses/)(.*)")


def escape_wiki(text: str) -> str:
    """escapeWikiChars."""
    for chars in RESERVED:
        text = text.replace(chars, f"<nowiki>{chars}</nowiki>")
    return text


def license_code(uri: str) -> str:
    """licenseToMarkupCode: ``http://creativecommons.org/licenses/by-sa/2.5/scotland/`` -> ``Cc-by-sa-2.5-scotland``
    (the path's slashes as hyphens, its last character dropped, as ingestion3 does)."""
    match = LICENSE.fullmatch(uri)
    return f"Cc-{match[2].replace('/', '-')[:-1]}" if match else ""


def permission_template(rights: str | None) -> str:
    """getWikiPermissionTemplate."""
    for prefix, template in PERMISSIONS:
        if rights and rights.startswith(prefix):
            return template
    if rights and rights.startswith(("http://creativecommons.org/licenses/by/", "http://creativecommons.org/licenses/by-sa/")):
        return license_code(rights)
    return ""


def _qid(agent) -> str:
    """The agent's Wikidata id (``Q…``); the caller made sure it has one (an eligible record has both)."""
    uri = wikidata_entity(agent)
    if uri is None:
        raise ValueError(f"{agent!r} has no Wikidata entity")
    return uri.removeprefix(WIKIDATA_ENTITY)


def _joined(values) -> str:
    return "; ".join(escape_wiki(value) for value in values or () if isinstance(value, str))


def wiki_markup(document: dict) -> str:
    """buildWikiMarkup for an index document whose provider and data provider have Wikidata entities."""
    source = document.get("sourceResource") or {}
    institution, hub = _qid(document.get("dataProvider")), _qid(document.get("provider"))
    rights = document.get("rights")
    permission = permission_template(rights)
    if rights and "http://rightsstatements.org" in rights:
        permission = f"{permission} | {institution}"
    dates = [span.get("displayDate") for span in source.get("date") or () if isinstance(span, dict)]
    return "\n".join((
        "== {{int:filedesc}} ==",
        " {{ Artwork",
        f"   | Other fields 1 = {{{{ InFi | Creator | {_joined(source.get('creator'))} }}}}",
        f"   | title = {_joined(source.get('title'))}",
        f"   | description = {_joined(source.get('description'))}",
        f"   | date = {_joined(dates)}",
        f"   | permission = {{{{{permission}}}}}",
        "   | source = {{ DPLA",
        f"       | {escape_wiki(institution)}",
        f"       | hub = {escape_wiki(hub)}",
        f"       | url = {escape_wiki(document.get('isShownAt') or '')}",
        f"       | dpla_id = {document.get('id')}",
        f"       | local_id = {_joined(source.get('identifier'))}",
        "   }}",
        f"   | Institution = {{{{ Institution | wikidata = {institution} }}}}",
        " }}",
    ))
