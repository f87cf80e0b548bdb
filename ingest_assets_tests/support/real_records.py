"""Whether a hub's real records map whole: every original record of ``../shared/fixtures/dpla-published/`` (the
ingestion3-era documents at its top level, the ingestion1-era ones in ``ingestion1-era/``), as its hub delivered
it, mapped with the profile ingestion3's ``CHProviderRegistry`` binds the hub to; a record maps whole when the
mapper gives a record (no required field missing, nothing refused).

A document's hub is DPLA's contributor (the last part of its ``provider`` URI) by its ingestion3 name (:data:`HUBS`),
mapped with the profile of its entry in the shipped hub registry; :data:`UNBOUND` names the others.
ingestion1-era originals are written back to the hub's document by :mod:`.ingestion1`. A record in a delivery
format its hub has since replaced (:data:`RETIRED`: NARA's ARC export, DLG's and Minnesota Reflections' OAI DC) is
mapped with the profile of that format under the hub's settings, as a hub delivering that format would map it.
Hubs ingestion3 has no mapping for are counted, with the reason, not mapped.

    uv run python -m ingest_assets_tests.support.real_records [--records]

prints records mapped whole / records per hub and era (``--records``: each record, and the messages of those
that do not map whole).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ingest_assets.core.registry import ProviderEntry
from ingest_assets.records.mapping import mapper_for
from ingest_assets.records.mapping.hubs import shipped_hubs
from ingest_assets.records.mapping.mapper import Mapper, MappingResult
from ingest_assets.records.preview import read_inputs
from ingest_assets.records.mapping.profiles import PROFILES
from ingest_assets_tests.support import SHARED_FIXTURES
from ingest_assets_tests.support.ingestion1 import Delivered, delivered

FOLDER = SHARED_FIXTURES / "dpla-published"
ERAS = {"ingestion3": FOLDER, "ingestion1": FOLDER / "ingestion1-era"}
# profiles of formats no shipped profile reads, written as a hub onboarding the format would write them
PROFILES_FOLDER = Path(__file__).resolve().parents[1] / "records" / "mapping" / "real_records"


# DPLA's contributor (the last part of a document's provider URI) -> the hub's name in ingestion3's
# CHProviderRegistry, its entry in the shipped hub registry (``records/mapping/hubs.yaml``), whose profile maps it
HUBS: dict[str, str] = {
    "digital-commonwealth": "bpl", "digitalnc": "digitalnc", "georgia": "georgia", "gpo": "gpo",
    "hathitrust": "hathi", "maryland": "maryland", "mdl": "minnesota", "mwdl": "mwdl", "nara": "nara",
    "northwest-digital-heritage": "northwest-heritage", "nypl": "nypl", "smithsonian": "smithsonian",
    "scdl-clemson": "scdl", "scdl-usc": "scdl",  # South Carolina's two contributors of 2014, one hub today
    "the_portal_to_texas_history": "texas",
}
# contributors ingestion3 binds no more, or never did: the profile that ships for one (None: none), and why
UNBOUND: dict[str, tuple[str | None, str]] = {
    "cdl": ("cdl", "CdlMapping left CHProviderRegistry in dpla/ingestion3 861b8056 (2024-12); the cdl profile ships"),
    "esdn": (None, "Empire State Digital Network: EsdnMapping was deleted from dpla/ingestion3 in 861b8056 (2024-12)"),
    "uiuc": (None, "University of Illinois at Urbana-Champaign, harvested from its own CONTENTdm by ingestion1 "
                   "(2013): never an ingestion3 hub (its collections reach DPLA through 'il')"),
    "usc": (None, "University of Southern California, harvested by ingestion1 (2014): never an ingestion3 hub"),
}

# (contributor, shape) -> the profile of a delivery format the hub has since replaced, and what it delivers now
RETIRED: dict[tuple[str, str], tuple[str, str]] = {
    ("georgia", "flat-dc"): ("oai_dc", "DLG's OAI-PMH oai_dc (2014); DLG delivers its Blacklight JSON now (DlgMapping)"),
    ("mdl", "flat-dc"): ("oai_dc", "Minnesota Reflections' CONTENTdm oai_dc (2013); MDL delivers its API's JSON now "
                                   "(MdlMapping)"),
    ("nara", "nara-arc"): (str(PROFILES_FOLDER / "nara-arc.yaml"),
                           "NARA's ARC XML export (2013); NARA delivers description.das.nara.gov XML now (NaraMapping)"),
}


@dataclass
class Outcome:
    """One document's original record: its hub, the profile the hub is bound to and the one the record was mapped
    with (another for a retired format; None: not mapped), and how it mapped."""

    document: str
    era: str
    contributor: str
    hub: str
    shape: str
    bound: str | None  # the profile the hub is bound to
    profile: str | None  # the one it was mapped with
    result: MappingResult | None = None
    note: str = ""

    @property
    def whole(self) -> bool:
        return self.result is not None and self.result.record is not None


@dataclass
class Figures:
    outcomes: list[Outcome] = field(default_factory=list)

    def per_hub(self) -> dict[tuple[str, str], tuple[int, int]]:
        """(hub, era) -> (records mapped whole, records)."""
        records, whole = Counter(), Counter()
        for outcome in self.outcomes:
            records[outcome.hub, outcome.era] += 1
            whole[outcome.hub, outcome.era] += outcome.whole
        return {key: (whole[key], records[key]) for key in sorted(records)}

    def table(self) -> str:
        lines = [f"{'hub':<20} {'era':<11} {'profile':<24} whole / records"]
        for (hub, era), (whole, records) in self.per_hub().items():
            profiles = sorted({_short(o.profile) for o in self.outcomes if (o.hub, o.era) == (hub, era)})
            lines.append(f"{hub:<20} {era:<11} {', '.join(profiles):<24} {whole} / {records}")
        mapped = [o for o in self.outcomes if o.profile is not None]
        lines.append(f"{'(hubs with a profile)':<57} {sum(o.whole for o in mapped)} / {len(mapped)}")
        for outcome in self.outcomes:
            if outcome.profile is None:
                lines.append(f"no profile: {outcome.era}/{outcome.document}: {outcome.note}")
        return "\n".join(lines)


def _short(profile: str | None) -> str:
    return "-" if profile is None else Path(profile).stem if profile.endswith(".yaml") else profile


def documents() -> list[tuple[str, Path]]:
    """(era, path) of every DPLA document, the ingestion3 era first."""
    return [(era, path) for era, folder in ERAS.items() for path in sorted(folder.glob("*.json"))]


def original(era: str, dpla: dict) -> Delivered:
    """The hub's document of a DPLA document's original record."""
    contributor = contributor_of(dpla)
    if era == "ingestion1":
        return delivered(dpla["originalRecord"], contributor)
    text = dpla["originalRecord"]["stringValue"]
    return Delivered(text, "xml" if text.lstrip().startswith("<") else "json", "as harvested")


def contributor_of(dpla: dict) -> str:
    return dpla["provider"]["@id"].rstrip("/").rsplit("/", 1)[-1]


def binding(contributor: str) -> tuple[str, str | None, str]:
    """(hub, the profile it is bound to, a note) of a DPLA contributor; an unknown one is a KeyError saying where to
    add it."""
    if contributor in HUBS:
        hub = HUBS[contributor]
        return hub, shipped_hubs()[hub].settings.mapping, ""
    if contributor in UNBOUND:
        return (contributor, *UNBOUND[contributor])
    raise KeyError(f"DPLA contributor {contributor!r} is in neither HUBS nor UNBOUND ({__name__})")


def outcome(era: str, path: Path) -> Outcome:
    dpla = json.loads(path.read_text(encoding="utf-8"))
    contributor = contributor_of(dpla)
    hub, bound, note = binding(contributor)
    document = original(era, dpla)
    if bound is None:
        return Outcome(path.name, era, contributor, hub, document.shape, None, None, note=note)
    profile, note = RETIRED.get((contributor, document.shape), (bound, note))
    settings = {}
    if profile != bound:  # a retired format's profile, under the hub's label, URI and id prefix
        given = PROFILES[bound].provider
        settings = {"label": given.label, "provider_uri": given.uri, "id_prefix": given.id_prefix}
    return Outcome(path.name, era, contributor, hub, document.shape, bound, profile,
                   map_document(document, profile, settings), note)


_MAPPERS: dict[str, Mapper] = {}  # compiled once per profile and settings


def map_document(document: Delivered, profile: str, settings: dict) -> MappingResult:
    """The one record of ``document`` mapped as a registry entry naming ``profile`` (with ``settings``) maps it,
    read from a file as ``ingest-assets map`` reads one."""
    entry = ProviderEntry("realrecords", {**settings, "mapping": profile})
    key = json.dumps([profile, settings], sort_keys=True)
    mapper = _MAPPERS.get(key) or _MAPPERS.setdefault(key, mapper_for(entry))
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / f"record.{document.kind}"
        file.write_text(document.document, encoding="utf-8")
        items = list(read_inputs([str(file)], mapper.profile, entry.name))
    if len(items) != 1 or not isinstance(items[0], dict):
        raise ValueError(f"the document holds {len(items)} records readable under {profile!r}, not one: {items[:2]}")
    return mapper.map(items[0])


def figures() -> Figures:
    return Figures([outcome(era, path) for era, path in documents()])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ingest_assets_tests.support.real_records", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", action="store_true", help="each record, and why one does not map whole")
    args = parser.parse_args(argv)
    found = figures()
    print(found.table())
    if args.records:
        for o in found.outcomes:
            status = "whole" if o.whole else "not mapped" if o.result is None else "NOT WHOLE"
            print(f"{o.era:<11} {o.document:<40} {o.hub:<20} {o.shape:<13} {_short(o.profile):<20} {status}")
            for message in [] if o.result is None or o.whole else o.result.messages:
                print(f"    {message.kind} {message.field}: {message.reason} {message.value[:80]!r}")
    return 0 if all(o.whole for o in found.outcomes if o.profile is not None) else 1


if __name__ == "__main__":
    sys.exit(main())
