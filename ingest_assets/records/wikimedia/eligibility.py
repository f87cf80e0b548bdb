"""Which published records may go to Wikimedia Commons, decided as ingestion3's WikiMapper decides it, on the index
document DPLA's API serves (``provider``/``dataProvider`` with their ``exactMatch``, ``rights``, ``iiifManifest``,
``mediaMaster``, ``isShownAt``, ``id``):

* institution: the hub's and the data provider's Wikidata entities are a pair of the institutions table, and the
  hub or the institution says ``upload: true``;
* asset: the record has an IIIF manifest or media masters; a CONTENTdm record without either gets the manifest
  CONTENTdm serves (derived from ``isShownAt``, as WikimediaMetadataExecutor does before it judges);
* rights: the rights statement is one of the six Commons accepts (NoC-US, NKC, PDM, CC0, CC BY, CC BY-SA);
* id: the record is not on the NARA block list (``ignore-nara.txt``: NARA ids, compared with the record's local id).
"""

from __future__ import annotations

import gzip
import re
from array import array
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, fields
from importlib.resources import files
from typing import Any

from ingest_assets.records.enrichment.institutions import WIKIDATA_ENTITY, Institutions

# WikiMapper.wikiEligibleRightsUris: a rights statement starting with one of these may go to Commons
ELIGIBLE_RIGHTS = (
    "http://rightsstatements.org/vocab/NoC-US/",
    "http://rightsstatements.org/vocab/NKC/",
    "http://creativecommons.org/publicdomain/mark/",
    "http://creativecommons.org/publicdomain/zero/",
    "http://creativecommons.org/licenses/by/",
    "http://creativecommons.org/licenses/by-sa/",
)
# WikiMapper.contentDMPattern, matched against the whole URL (Java's matches(); the same backtracking as re's)
CONTENTDM = re.compile(r"(.*)(.*/cdm/.*collection/)(.*)(/id/)(.*)")
NARA_BLOCKED = "wiki/ignore-nara-deltas.txt.gz"


@dataclass(frozen=True)
class Criteria:
    """WikiCriteria: each test a record passes (True) or fails."""

    institution: bool
    asset: bool
    rights: bool
    id: bool

    @property
    def eligible(self) -> bool:
        return self.institution and self.asset and self.rights and self.id

    def failed(self) -> list[str]:
        return [f.name for f in fields(self) if not getattr(self, f.name)]


def iiif_from_contentdm(is_shown_at: str) -> str | None:
    """buildIIIFFromUrl: ``…/cdm/ref/collection/<c>/id/<n>`` -> ``…/iiif/info/<c>/<n>/manifest.json``, else None."""
    match = CONTENTDM.fullmatch(is_shown_at)
    return f"{match[1]}/iiif/info/{match[3]}/{match[5]}/manifest.json" if match else None


def rights_eligible(rights: str | None) -> bool:
    """isRightsWikiEligible."""
    return bool(rights) and rights.startswith(ELIGIBLE_RIGHTS)


def asset_eligible(iiif: str | None, media_masters: list[str] | None) -> bool:
    """isAssetEligible: an IIIF manifest or at least one media master."""
    return bool(iiif) or bool(media_masters)


def wikidata_entity(agent: Any) -> str | None:
    """The first Wikidata entity URI of an agent's ``exactMatch`` (``provider``, ``dataProvider``)."""
    matches = agent.get("exactMatch") if isinstance(agent, dict) else None
    return next((uri for uri in matches or () if isinstance(uri, str) and uri.startswith(WIKIDATA_ENTITY)), None)


def institution_eligible(hub: str | None, institution: str | None, table: Institutions) -> bool:
    """institutionalEligibility: the pair is in the table, and its hub or institution may upload."""
    return bool(hub and institution) and table.upload.get((hub, institution), False)


def with_derived_manifest(document: dict) -> dict:
    """The document with the IIIF manifest CONTENTdm serves when it has neither a manifest nor media masters
    (unchanged otherwise, or when ``isShownAt`` is no CONTENTdm page)."""
    if document.get("iiifManifest") or document.get("mediaMaster"):
        return document
    derived = iiif_from_contentdm(document.get("isShownAt") or "")
    return {**document, "iiifManifest": derived} if derived else document


def judge(document: dict, table: Institutions, blocked: Callable[[str], bool]) -> Criteria:
    """isWikiEligible on an index document (after :func:`with_derived_manifest`); ``blocked``: whether a DPLA id
    is on the block list."""
    return Criteria(
        institution=institution_eligible(wikidata_entity(document.get("provider")),
                                         wikidata_entity(document.get("dataProvider")), table),
        asset=asset_eligible(document.get("iiifManifest"), document.get("mediaMaster")),
        rights=rights_eligible(document.get("rights")),
        id=not blocked(document.get("id") or ""),
    )


def nara_blocked_ids() -> list[int]:
    """The NARA ids of ``ignore-nara.txt`` (shipped as sorted differences, see ``data/SOURCES.md``)."""
    data = files("ingest_assets.records.enrichment.data").joinpath(NARA_BLOCKED).read_bytes()
    ids, current = [], 0
    for line in gzip.decompress(data).decode("ascii").splitlines():
        if line and not line.startswith("#"):
            current += int(line)
            ids.append(current)
    return ids


class BlockList:
    """Whether a DPLA id is one of the NARA ids as ``mint`` (the provider's minter) makes DPLA ids of them: WikiMapper
    compares a record's local id, which an index document no longer carries. Held as the ids' first 64 bits,
    sorted (2 MB, where the ids as text would take 50); a DPLA id matches on those bits (the chance that an unlisted
    one does is below one in 10^13)."""

    def __init__(self, mint: Callable[[str], str]):
        self._bits = array("Q", sorted({int(mint(str(naid))[:16], 16) for naid in nara_blocked_ids()}))

    def __call__(self, dpla_id: str) -> bool:
        try:
            bits = int(dpla_id[:16], 16)
        except ValueError:
            return False
        at = bisect_left(self._bits, bits)
        return at < len(self._bits) and self._bits[at] == bits


_BLOCK_LISTS: dict[str, BlockList] = {}  # per minter (known by the id it mints of ''): built once per process


def block_list(mint: Callable[[str], str]) -> BlockList:
    """The :class:`BlockList` of the provider whose minter is ``mint``."""
    key = mint("")
    if key not in _BLOCK_LISTS:
        _BLOCK_LISTS[key] = BlockList(mint)
    return _BLOCK_LISTS[key]
