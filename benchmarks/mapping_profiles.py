"""Mapping throughput per shipped profile, on one core: each profile's fixture record(s) repeated (with unique
ids) to ``--records`` OriginalRecords, mapped by the mapper a registry entry using the profile gets, and the rate
printed next to oai_dc's (the stock profile every hub starts from).

    uv run python -m benchmarks.mapping_profiles --records 20000 [--repeat 3] [--baseline DIR] [PROFILE...]

``--baseline DIR`` (another checkout's root, e.g. ``git archive main | tar -x -C DIR``) also maps the same
records with DIR's ``ingest_assets``: each side in a child process of its own (same imports, same heap), profile
by profile in turn (so both see the same load); both rates are printed with their ratio.

(as a module from the checkout, which imports the realistic records of ``ingest_assets_tests.support.mapping``)

Fixtures: the ingestion3 test records of each hub profile (its parity files name them: ma's two), the OAI-PMH
pages the records pipeline benchmark uses for oai_dc/qdc/mods, a real page for harvard (its test has no fixture),
the realistic records of the mapping tests for cdl, njde and ithaka, a parity file's inline record (pa, p2p),
mdl's record for sd (SdMapping reads MDL's JSON). The
process is pinned to one CPU; the rate is records per CPU second of the best of ``--repeat`` runs (CPU time, so
other jobs on a shared machine weigh less than in wall time, which is printed too). Needs ../shared/fixtures.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT.parent / "shared" / "fixtures"
PARITY = ROOT / "ingest_assets_tests" / "records" / "mapping" / "parity"
STOCK = {  # the records_pipeline benchmark's fixtures
    "oai_dc": ["oai-pmh/zenodo-listrecords-oai_dc.xml", "oai-pmh/cyberleninka-listrecords-cyrillic-dcterms.xml"],
    "qdc": ["dpla/provider-maryland-cdm-oai_qdc-record.xml"],
    "mods": ["oai-pmh/harvard-librarycloud-listrecords-mods-resumption.xml", "dpla/provider-montana-repox-getrecord-mods.xml"],
}
HUB_PAGES = {"harvard": ["oai-pmh/harvard-librarycloud-listrecords-mods-resumption.xml"]}  # tests without fixtures
REQUIRED = {  # what the stock fixtures lack and a hub sets per provider
    "dataProvider": {"default": "Fixture Data Provider"},
    "rights": {"default": "http://rightsstatements.org/vocab/InC/1.0/"},
}


def fixture_files() -> dict[str, list[Path] | str]:
    """profile -> its fixture files, or the text of one record (the first a parity file gives inline, or a realistic
    record of a hub whose ingestion3 test reads none)."""
    from ingest_assets_tests.support.mapping import HUB_RECORDS

    found: dict[str, list[Path] | str] = {name: [FIXTURES / f for f in files]
                                          for name, files in {**STOCK, **HUB_PAGES}.items()}
    inline: dict[str, str] = {}
    for path in sorted(PARITY.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if "records" in data:
            inline.setdefault(data["hub"], next(iter(data["records"].values())))
        if "fixture" in data:  # a file may give both: its fixture is measured
            found.setdefault(data["hub"], []).append(FIXTURES / "ingestion3" / data["fixture"])
    found.setdefault("sd", [FIXTURES / "ingestion3" / "mdl.json"])  # SdMapping reads MDL's JSON; no sd test
    return {**inline, **found, **HUB_RECORDS}


def originals(profile_name: str, files: list[Path] | str, tmp: Path) -> list[dict]:
    """The fixture's OriginalRecords, as ``ingest-assets map`` reads them (deleted ones left out)."""
    from ingest_assets.records.preview import read_inputs
    from ingest_assets.records.mapping.profiles import PROFILES

    if profile_name == "cdl":
        from ingest_assets_tests.support.mapping import CALISPHERE

        path = tmp / "calisphere.json"
        path.write_text(json.dumps(CALISPHERE))
        files = [path]
    elif isinstance(files, str):  # one record's text
        path = tmp / f"{profile_name}.xml"
        path.write_text(files, encoding="utf-8")
        files = [path]
    found = [o for o in read_inputs([str(f) for f in files], PROFILES[profile_name], "bench") if isinstance(o, dict)]
    return [o for o in found if not o.get("deleted")]


def rate(profile_name: str, base: list[dict], count: int, repeat: int) -> tuple[float, float, int]:
    """(records per CPU second, per wall second, records mapped) of the best of ``repeat`` runs."""
    from ingest_assets.core.registry import ProviderEntry
    from ingest_assets.records.mapping import mapper_for

    overrides = REQUIRED if profile_name in STOCK else {}
    mapper = mapper_for(ProviderEntry("bench", {"mapping": profile_name, "mapping_overrides": overrides}))
    records = [{**base[n % len(base)], "id": f"{base[n % len(base)]['id']}#{n}"} for n in range(count)]
    best_cpu = best_wall = float("inf")
    mapped = 0
    for _ in range(repeat):
        cpu, wall = time.process_time(), time.perf_counter()
        mapped = sum(mapper.map(record).record is not None for record in records)
        best_cpu = min(best_cpu, time.process_time() - cpu)
        best_wall = min(best_wall, time.perf_counter() - wall)
    return count / best_cpu, count / best_wall, mapped


BASELINE_CHILD = """
import json, os, sys
sys.path.insert(0, sys.argv[1])  # the baseline's ingest_assets first
sys.path.append(sys.argv[2])  # this script
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
import ingest_assets
assert ingest_assets.__file__.startswith(sys.argv[1]), ingest_assets.__file__
from mapping_profiles import rate
for line in sys.stdin:
    name, base, count, repeat = json.loads(line)
    print(json.dumps(rate(name, base, count, repeat)), flush=True)
"""


class Side:
    """A child process mapping with one checkout's code: one JSON line per profile each way."""

    def __init__(self, root: Path):
        import subprocess
        import sys

        self.root = root.resolve()
        if not (self.root / "ingest_assets").is_dir():
            raise SystemExit(f"{root}: no ingest_assets package there")
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}  # nothing written into the other checkout
        self.process = subprocess.Popen([sys.executable, "-c", BASELINE_CHILD, str(self.root), str(Path(__file__).parent)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)

    def rate(self, profile_name: str, base: list[dict], count: int, repeat: int) -> tuple[float, float, int]:
        self.process.stdin.write(json.dumps([profile_name, base, count, repeat]) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"the process mapping with {self.root} ended at {profile_name} (exit {self.process.wait()})")
        return tuple(json.loads(line))

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("profiles", nargs="*", help="profiles to measure (default: every shipped one)")
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="another checkout whose code maps the same records")
    args = parser.parse_args()
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    import tempfile

    files = fixture_files()
    wanted = args.profiles or ["oai_dc", *sorted(name for name in files if name != "oai_dc")]
    if "oai_dc" not in wanted:
        wanted = ["oai_dc", *wanted]
    baseline, current = (Side(args.baseline), Side(ROOT)) if args.baseline else (None, None)
    figures, before = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in wanted:
            base = originals(name, files.get(name, []), Path(tmp))
            if baseline is not None:
                before[name] = baseline.rate(name, base, args.records, args.repeat)
            figures[name] = (current.rate if current is not None else rate)(name, base, args.records, args.repeat)
    for side in (baseline, current):
        if side is not None:
            side.close()
    reference = figures["oai_dc"][0]
    compared = f" {'baseline':>10} {'x baseline':>10}" if baseline is not None else ""
    print(f"{'profile':<19} {'records':>8} {'mapped':>8} {'rec/CPU s':>10} {'rec/s wall':>11} {'vs oai_dc':>10}{compared}")
    for name, (cpu_rate, wall_rate, mapped) in figures.items():
        line = f"{name:<19} {args.records:>8,} {mapped:>8,} {cpu_rate:>10,.0f} {wall_rate:>11,.0f} {cpu_rate / reference:>9.2f}x"
        if name in before:
            line += f" {before[name][0]:>10,.0f} {cpu_rate / before[name][0]:>9.2f}x"
            if before[name][2] != mapped:
                line += f" (baseline mapped {before[name][2]:,})"
        if mapped < args.records:
            line += "  *"
        print(line)
    if fragments := [n for n, (_, _, mapped) in figures.items() if mapped < args.records]:
        print(f"* {', '.join(fragments)}: the fixture's records do not all map (p2p's are ingestion3's one-field test "
              "fragments, refused for missing required fields after every rule ran): left out of 'slowest'")
    whole = [n for n in figures if n not in fragments] or list(figures)
    slowest = min(whole, key=lambda n: figures[n][0])
    print(f"slowest: {slowest} at {figures[slowest][0]:,.0f} records per CPU second (one core)")
    if before:
        slowest = min(before, key=lambda n: before[n][0])
        print(f"baseline ({args.baseline}) slowest: {slowest} at {before[slowest][0]:,.0f} records per CPU second")


if __name__ == "__main__":
    main()
