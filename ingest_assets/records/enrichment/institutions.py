"""DPLA's institutions table (ingestion3's ``institutions_v2.json``): the hubs and their institutions, each with its
Wikidata id and whether its records may go to Wikimedia Commons (``upload``).

One table serves the ``wikidata`` enrichment and Wikimedia eligibility, as ingestion3's InstitutionsLoader hands
both the same snapshot: the shipped copy (``data/wiki/institutions_v2.json``, see ``data/SOURCES.md``), or a hub's
own table in the same format (``INGEST_WIKI_INSTITUTIONS``)::

    {"<hub name>": {"Wikidata": "Q…", "upload": false,
                    "institutions": {"<institution name>": {"Wikidata": "Q…", "upload": true}}}}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from ingest_assets.core import json_input
from ingest_assets.core.errors import ConfigError
from ingest_assets.core.settings import Settings
from ingest_assets.records.enrichment.normalize import vocabulary_key

SHIPPED = "wiki/institutions_v2.json"
WIKIDATA_ENTITY = "http://www.wikidata.org/entity/"


@dataclass(frozen=True)
class Institutions:
    """The table as its two readers use it.

    ``wikidata``: WikiEntityEnrichment's vocabulary, a hub's name (or its name followed by an institution's, as
    ingestion3 concatenates them; lower case, trimmed) -> Wikidata id, for the entries that have one.
    ``upload``: WikiMapper's eligibility pairs, (hub entity URI, institution entity URI) -> whether the hub or the
    institution says ``upload: true``; the first pair listed wins, as WikiMapper's ``find`` does.
    ``hubs``: hub name -> its Wikidata id ('' when the table gives none).
    """

    source: str
    wikidata: dict[str, str] = field(repr=False)
    upload: dict[tuple[str, str], bool] = field(repr=False)
    hubs: dict[str, str] = field(repr=False)


def parse_institutions(data: bytes, source: str) -> Institutions:
    """The table from the bytes of an ``institutions_v2.json``; a file that is not one is a ConfigError naming it
    (ingestion3 refuses a table it extracts nothing from)."""
    try:
        table = json_input.loads(data)
    except ValueError as exc:
        raise ConfigError(f"the institutions table is not JSON: {exc}", file=source) from None
    if not isinstance(table, dict) or not table:
        raise ConfigError("the institutions table must be an object of hubs (institutions_v2.json's format)",
                          file=source)
    wikidata: dict[str, str] = {}
    upload: dict[tuple[str, str], bool] = {}
    hubs: dict[str, str] = {}
    members = []  # (hub, its id, its upload, institution name, institution entry), in the table's order
    for hub, entry in table.items():
        if not isinstance(entry, dict):
            raise ConfigError(f"hub {hub!r} of the institutions table is not an object", file=source)
        hub_id, hub_upload = _text(entry.get("Wikidata")), _text(entry.get("upload"))
        hubs[hub] = hub_id or ""
        if hub_id:
            wikidata[vocabulary_key(hub)] = hub_id
        institutions = entry.get("institutions")
        if isinstance(institutions, dict):
            members += [(hub, hub_id, hub_upload, name, item) for name, item in institutions.items()]
    for hub, hub_id, hub_upload, name, institution in members:  # after every hub, as ingestion3 adds them
        if not isinstance(institution, dict):
            raise ConfigError(f"institution {name!r} of hub {hub!r} is not an object", file=source)
        own_id, own_upload = _text(institution.get("Wikidata")), _text(institution.get("upload"))
        if own_id:
            wikidata[vocabulary_key(hub + name)] = own_id
        if None not in (hub_id, hub_upload, own_id, own_upload):
            pair = (WIKIDATA_ENTITY + hub_id, WIKIDATA_ENTITY + own_id)
            upload.setdefault(pair, hub_upload.lower() == "true" or own_upload.lower() == "true")
    if not wikidata:
        raise ConfigError("the institutions table gives no Wikidata id", file=source)
    return Institutions(source, wikidata, upload, hubs)


def _text(value: Any) -> str | None:
    """A JSON scalar as ingestion3's ``extractString`` reads it (``true`` -> ``"true"``); None for anything else."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (str, int, float)):
        return str(value)
    return None


@cache
def _load(path: str) -> Institutions:
    if not path:
        return parse_institutions(files("ingest_assets.records.enrichment.data").joinpath(SHIPPED).read_bytes(),
                                  f"(shipped) {SHIPPED}")
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"the institutions table (INGEST_WIKI_INSTITUTIONS) cannot be read: {exc.strerror}",
                          file=path) from None
    return parse_institutions(data, path)


def institutions() -> Institutions:
    """The hub's institutions table: ``INGEST_WIKI_INSTITUTIONS`` when set, else the shipped one (read once)."""
    own = Settings.current().wiki_institutions
    return _load(str(own) if own else "")
