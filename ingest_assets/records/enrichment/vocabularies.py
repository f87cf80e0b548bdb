"""ingestion3's vocabulary enrichments, from the data files: TypeEnrichment (DCMI type labels),
LanguageEnrichment (ISO 639 code or name -> language name) and WikiEntityEnrichment (Wikidata ids of
providers and their institutions, from the institutions table: :mod:`.institutions`). Lookups ignore case and
surrounding whitespace, as ingestion3's do; the lookups in the shipped files are cached (a provider's values repeat
from record to record; the institutions table is the hub's setting, so its lookup is not)."""

from __future__ import annotations

from functools import cache, lru_cache

from ingest_assets.records.enrichment.data import rows
from ingest_assets.records.enrichment.institutions import WIKIDATA_ENTITY, institutions
from ingest_assets.records.enrichment.normalize import vocabulary_key as _key

LOOKUPS_CACHED = 65536  # distinct values remembered per lookup
# TypeEnrichment's web labels of DCMI types (the others are the local name in lower case)
_TYPE_LABELS = {"InteractiveResource": "interactive resource", "MovingImage": "moving image",
                "PhysicalObject": "physical object", "StillImage": "still image"}


@cache
def _types() -> dict[str, str]:
    return {_key(term): _TYPE_LABELS.get(dcmi, dcmi.lower()) for term, dcmi in rows("types/type-enrichment.csv", 2)}


@lru_cache(maxsize=LOOKUPS_CACHED)
def dcmi_type(value: str) -> str | None:
    """The DPLA label of the DCMI type for a provider type value (``Photographs`` -> ``image``), else ``None``."""
    return _types().get(_key(value))


@cache
def _languages() -> dict[str, str]:
    """Code and name -> name; ``dpla-lang.csv`` is read last, so it overrides (its stated purpose)."""
    table: dict[str, str] = {}
    for name in ("languages/deduped-iso639x.csv", "languages/dpla-lang.csv"):
        for code, term in rows(name, 2):
            table[_key(code)] = term
            table[_key(term)] = term
    return table


@lru_cache(maxsize=LOOKUPS_CACHED)
def language_name(value: str) -> str | None:
    """The language name for an ISO 639 code or name (``eng``, ``en``, ``en-us``, ``English``), else ``None``."""
    return _languages().get(_key(value))


@cache
def _iso639_3() -> dict[str, str]:
    """Language name (as the lookup gives it) -> ISO 639-3 code, for the names the 639-3 codes have."""
    codes = {row[0] for row in rows("languages/iso639-3.csv", 2)}
    out: dict[str, str] = {}
    for code, term in rows("languages/deduped-iso639x.csv", 2):
        if code in codes:
            out.setdefault(_key(term), code)
    return out


@lru_cache(maxsize=LOOKUPS_CACHED)
def iso639_3(name: str) -> str | None:
    """The ISO 639-3 code of a language name from :func:`language_name` (``English`` -> ``eng``), else ``None``."""
    return _iso639_3().get(_key(name))


def wikidata_uri(name: str, provider: str = "") -> str | None:
    """The Wikidata entity URI of a provider (``name`` alone) or of one of its institutions, else ``None``."""
    return _entity(institutions().wikidata, provider + name)


def wikidata_uris(provider: str, data_provider: str) -> tuple[str | None, str | None]:
    """``wikidata_uri(provider)`` and ``wikidata_uri(data_provider, provider)``, the table read once."""
    table = institutions().wikidata
    return _entity(table, provider), _entity(table, provider + data_provider)


def _entity(table: dict[str, str], name: str) -> str | None:
    found = table.get(_key(name))
    return WIKIDATA_ENTITY + found if found else None
