"""DPLA's ingestion3 as the tests read it: its source at ``../.mirror/dpla+ingestion3/repo`` (a bare git directory,
read with ``git show``) when this machine has it, else the facts carried over from it below (dpla/ingestion3
1d1dbae5), which the tests hold against the source whenever it is there."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

MIRROR = Path(__file__).resolve().parents[3] / ".mirror" / "dpla+ingestion3" / "repo"
REGISTRY_SCALA = "src/main/scala/dpla/ingestion3/utils/CHProviderRegistry.scala"
PROFILES_SCALA = "src/main/scala/dpla/ingestion3/profiles/CHProviderProfiles.scala"
INSTITUTIONS_JSON = "src/main/resources/wiki/institutions_v2.json"

# CHProviderRegistry: hub name -> its profile class (the 44 names, aliases included)
REGISTRY = {
    "artstor": "IthakaProfile", "ithaka": "IthakaProfile", "bhl": "BhlProfile", "bpl": "MaProfile",
    "community-webs": "CommunityWebsProfile", "ct": "CtProfile", "dc": "DcProfile", "florida": "FlProfile",
    "georgia": "DlgProfile", "getty": "GettyProfile", "gpo": "GpoProfile", "harvard": "HarvardProfile",
    "hathi": "HathiProfile", "heartland": "HeartlandProfile", "ia": "IaProfile", "il": "IlProfile",
    "indiana": "InProfile", "jh3": "Jh3Profile", "lc": "LocProfile", "maryland": "MarylandProfile", "mi": "MiProfile",
    "minnesota": "MdlProfile", "mississippi": "MississippiProfile", "mt": "MtProfile", "mwdl": "MwdlProfile",
    "nara": "NaraProfile", "digitalnc": "NcProfile", "njde": "NJDEProfile",
    "northwest-heritage": "NorthwestHeritageProfile", "nypl": "NYPLProfile", "ohio": "OhioProfile",
    "oklahoma": "OklahomaProfile", "p2p": "P2PProfile", "pa": "PaProfile", "david-rumsey": "RumseyProfile",
    "scdl": "ScProfile", "sd": "SdProfile", "smithsonian": "SiProfile", "texas": "TxProfile", "tn": "TnProfile",
    "txdl": "TxdlProfile", "virginias": "VirginiasProfile", "vt": "VtProfile", "wisconsin": "WiProfile",
}
# CHProviderProfiles: profile class -> its harvester class, for the profiles CHProviderRegistry names
HARVESTERS = {
    "IthakaProfile": "LocalOaiHarvester", "BhlProfile": "LocalOaiHarvester", "CtProfile": "VaFileHarvester",
    "CommunityWebsProfile": "CommunityWebsHarvester", "DcProfile": "LocalOaiHarvester", "FlProfile": "FlFileHarvester",
    "GettyProfile": "GettyHarvester", "GpoProfile": "LocalOaiHarvester", "DlgProfile": "DlgFileHarvester",
    "HarvardProfile": "LocalOaiHarvester", "HathiProfile": "HathiFileHarvester", "IlProfile": "LocalOaiHarvester",
    "InProfile": "LocalOaiHarvester", "Jh3Profile": "OaiXmllHarvester", "IaProfile": "IaHarvester",
    "LocProfile": "DplaJsonlFileHarvester", "MaProfile": "LocalOaiHarvester", "MarylandProfile": "LocalOaiHarvester",
    "MdlProfile": "MdlHarvester", "MiProfile": "LocalOaiHarvester", "MississippiProfile": "MississippiHarvester",
    "HeartlandProfile": "HeartlandFileHarvester", "MtProfile": "LocalOaiHarvester", "MwdlProfile": "MwdlHarvester",
    "NaraProfile": "NaraFileHarvester", "NJDEProfile": "LocalOaiHarvester", "NcProfile": "LocalOaiHarvester",
    "NorthwestHeritageProfile": "OaiFileHarvester", "NYPLProfile": "NYPLFileHarvester", "OhioProfile": "OaiFileHarvester",
    "OklahomaProfile": "LocalOaiHarvester", "P2PProfile": "LocalOaiHarvester", "PaProfile": "LocalOaiHarvester",
    "RumseyProfile": "LocalOaiHarvester", "ScProfile": "LocalOaiHarvester", "SdProfile": "MdlHarvester",
    "TnProfile": "LocalOaiHarvester", "TxProfile": "LocalOaiHarvester", "TxdlProfile": "OaiFileHarvester",
    "SiProfile": "SiFileHarvester", "VirginiasProfile": "VaFileHarvester", "VtProfile": "VtFileHarvester",
    "WiProfile": "LocalOaiHarvester",
}
# the harvest type this platform harvests each of ingestion3's harvesters with
HARVEST_TYPES = {"LocalOaiHarvester": "oai", "GettyHarvester": "api", "IaHarvester": "api", "MdlHarvester": "api",
                 "MississippiHarvester": "api", "MwdlHarvester": "api"}  # every other one: file


def show(path: str, commit: str = "HEAD") -> str | None:
    """The text of ``path`` at ``commit`` of the mirror (its HEAD by default), or None when this machine has no mirror
    or the mirror not that commit."""
    if not MIRROR.is_dir():
        return None
    if commit != "HEAD" and subprocess.run(["git", "--git-dir", str(MIRROR), "cat-file", "-e", f"{commit}^{{commit}}"],
                                           capture_output=True).returncode:
        return None
    return subprocess.run(["git", "--git-dir", str(MIRROR), "show", f"{commit}:{path}"], capture_output=True,
                          text=True, check=True).stdout


def parse_registry(scala: str) -> dict[str, str]:
    """CHProviderRegistry's ``"name" -> new XProfile`` pairs."""
    return dict(re.findall(r'"([a-z0-9-]+)"\s*->\s*new\s+(\w+)', scala))


def parse_harvesters(scala: str) -> dict[str, str]:
    """CHProviderProfiles' ``class XProfile ... getHarvester ... classOf[Y]`` pairs."""
    return dict(re.findall(r"class\s+(\w+Profile)\b.*?classOf\[(\w+)\]", scala, re.S))


def institutions_hubs(shipped: Path) -> set[str] | None:
    """The hub names of DPLA's institutions table (institutions_v2.json's top-level keys): the shipped copy, else
    ingestion3's own in the mirror; None when neither is here."""
    text = shipped.read_text(encoding="utf-8") if shipped.is_file() else show(INSTITUTIONS_JSON)
    return set(json.loads(text)) if text is not None else None
