"""The shipped registry of hubs (``records/mapping/hubs.yaml``) loads strictly, holds every hub of ingestion3's
CHProviderRegistry with the harvest and profile ingestion3 binds, and DPLA's three names of each hub; ``ingest-assets
hubs init`` copies an entry into an operator's registry, which refuses a private delivery until it is filled in."""

from __future__ import annotations

from datetime import date, datetime, timezone
from pathlib import Path

import pytest
import yaml

from ingest_assets.cli.main import main
from ingest_assets.core.errors import ConfigError, UsageError
from ingest_assets.core.registry import load_registry
from ingest_assets.core.settings import Settings
from ingest_assets.defs.records.refresh import refresh_day
from ingest_assets.records.mapping.hubs import add_hub, entry_texts, shipped_hubs, shipped_text
from ingest_assets.records.mapping.mapper import profile_for
from ingest_assets_tests.support import ingestion3
from ingest_assets_tests.support.hub_sources import (
    Cite,
    Fact,
    cited_text,
    cron_months,
    facts,
    location_keys,
    unsaid,
    value,
)
from ingest_assets_tests.support.ingestion3 import HARVEST_TYPES, HARVESTERS, REGISTRY

PACKAGE = Path(__file__).resolve().parents[3] / "ingest_assets"
INSTITUTIONS = PACKAGE / "records" / "enrichment" / "data" / "wiki" / "institutions_v2.json"
# ingestion3's profile class -> the profile this project maps it with (CHProviderProfiles' getMapping)
PROFILES = {
    "IthakaProfile": "ithaka", "BhlProfile": "bhl", "CtProfile": "ct", "CommunityWebsProfile": "community-webs",
    "DcProfile": "dc", "FlProfile": "fl", "GettyProfile": "getty", "GpoProfile": "gpo", "DlgProfile": "dlg",
    "HarvardProfile": "harvard", "HathiProfile": "hathi", "IlProfile": "illinois", "InProfile": "in",
    "Jh3Profile": "jh3", "IaProfile": "ia", "LocProfile": "json-retcon", "MaProfile": "ma", "MarylandProfile": "maryland",
    "MdlProfile": "mdl", "MiProfile": "michigan", "MississippiProfile": "mississippi", "HeartlandProfile": "heartland",
    "MtProfile": "mt", "MwdlProfile": "mwdl", "NaraProfile": "nara", "NJDEProfile": "njde", "NcProfile": "nc",
    "NorthwestHeritageProfile": "northwest-heritage", "NYPLProfile": "nypl", "OhioProfile": "ohio",
    "OklahomaProfile": "oklahoma", "P2PProfile": "p2p", "PaProfile": "pa", "RumseyProfile": "rumsey",
    "ScProfile": "sc", "SdProfile": "sd", "TnProfile": "tn", "TxProfile": "tx", "TxdlProfile": "txdl", "SiProfile": "si",
    "VirginiasProfile": "virginias", "VtProfile": "vt", "WiProfile": "wi",
}
S3_PREFIXES = {"hathi": "hathitrust", "tn": "tennessee"}  # DPLA's exceptions to "the S3 prefix is the short name"


def test_ingestion3s_registry_is_the_list_the_tests_hold():
    """Parsed from ingestion3's Scala when this machine has its mirror; the carried-over lists must say the same."""
    registry, profiles = ingestion3.show(ingestion3.REGISTRY_SCALA), ingestion3.show(ingestion3.PROFILES_SCALA)
    if registry is None or profiles is None:
        pytest.skip("no ingestion3 mirror here: the carried-over lists stand")
    assert ingestion3.parse_registry(registry) == REGISTRY
    assert {cls: harvester for cls, harvester in ingestion3.parse_harvesters(profiles).items() if cls in HARVESTERS} \
        == HARVESTERS


def test_every_hub_of_ingestion3_is_shipped_with_the_harvest_and_profile_it_binds():
    hubs = shipped_hubs()
    assert len(REGISTRY) == 44 and sorted(hubs) == sorted(REGISTRY)
    bound = {name: (HARVEST_TYPES.get(HARVESTERS[cls], "file"), PROFILES[cls]) for name, cls in REGISTRY.items()}
    assert {name: (hubs[name].settings.harvest.type, hubs[name].settings.mapping) for name in hubs} == bound


def test_every_entry_carries_the_hubs_three_names_and_its_records_say_its_label():
    """Short name, S3 prefix and display name (DPLA's Contract 1), each given; the label is the provider name the
    profile puts on the records (where the profile names one)."""
    hubs = shipped_hubs()
    for name, entry in hubs.items():
        assert {"label", "s3_prefix", "mapping", "harvest"} <= entry.settings.model_fields_set, name
        assert entry.settings.s3_prefix == S3_PREFIXES.get(name, name)
        profile = profile_for(entry)
        assert entry.label == (profile.provider.label or entry.label), name
    assert hubs["sd"].label == hubs["minnesota"].label  # ingestion3's SdMapping keeps MDL's provider


def test_every_display_name_is_a_hub_of_dplas_institutions_table():
    """The label is each hub's key in institutions_v2.json (the wikidata step and Wikimedia read the table by it)."""
    table = ingestion3.institutions_hubs(INSTITUTIONS)
    if table is None:
        pytest.skip("institutions_v2.json is neither shipped nor in an ingestion3 mirror here")
    assert {name: entry.label for name, entry in shipped_hubs().items() if entry.label not in table} == {}


def test_the_entry_texts_are_the_file_one_entry_each():
    texts = entry_texts()
    assert {name: yaml.safe_load(text)[name] for name, text in texts.items()} == yaml.safe_load(shipped_text())
    assert all(text.startswith("# ") for text in texts.values())  # each says where ingestion3 binds it


def test_a_private_delivery_names_the_key_to_fill_in_and_public_ones_are_ingestion3s():
    hubs = shipped_hubs()
    public = sorted(name for name, entry in hubs.items() if entry.settings.harvest.delivery == "public")
    assert public == ["artstor", "bpl", "harvard", "il", "ithaka", "maryland", "minnesota", "mt", "pa", "texas",
                      "wisconsin"]
    assert hubs["harvard"].settings.harvest.sets == ["dag", "lap", "crimes", "scarlet", "ihp", "ward", "rubbings",
                                                     "botanicals"]  # the setlist's sets LibraryCloud still lists
    placeholders = {name: entry.settings.harvest.placeholder()[0] for name, entry in hubs.items() if name not in public}
    assert set(placeholders.values()) == {"endpoint", "metadata_prefix", "path", "params.q", "params.query", "params",
                                          "sets"}
    assert hubs["indiana"].settings.harvest.fill_in.keys() == {"metadata_prefix"}  # its endpoint is public


def test_every_location_is_a_cited_fact_or_one_to_fill_in_and_months_are_the_schedules():
    """Each endpoint, prefix, set, query parameter and path of a shipped block is named by a ``# source`` line of its
    entry or by its ``fill_in``; the months a source line names are the months the schedule runs in (a whole OAI-PMH
    harvest: ``full``), and a file hub's stay named only (it is harvested when its delivery arrives)."""
    shipped = yaml.safe_load(shipped_text())
    for name, entry in shipped.items():
        harvest, said = entry["harvest"], facts(name)
        cited = {key for fact in said for key in fact.keys}
        assert all(value(entry, key) is not None for key in cited), name
        named = [f"harvest.{key}" for key in harvest.get("fill_in", {})]
        unsourced = [key for key in location_keys(harvest)
                     if key not in cited and not any(key == fill or key.startswith(fill + ".") for fill in named)]
        assert unsourced == [], name
        [months] = [fact.months for fact in said if fact.months is not None] or [None]
        schedule = entry.get("schedule")
        if months is not None and harvest["type"] != "file":
            assert cron_months(schedule["cron"]) == sorted(months) and schedule["cron"].startswith("0 2 25 "), name
            assert harvest.get("full") or harvest["type"] == "api", name
        else:
            assert schedule is False or schedule is None or cron_months(schedule["cron"]) == list(range(1, 13)), name
    assert facts("texas")[0].cites[0] == Cite("src/main/resources/profiles/ingestion3.conf", 82, 87, "d39f1c96")
    assert [fact.months for fact in facts("sd") if fact.months] == [[1, 3, 5, 7, 8, 11]]  # DPLA runs it with MDL


def test_every_public_fact_is_said_of_its_hub_where_its_entry_cites_it():
    """Each value a ``# source`` line names (URL, prefix, set, parameter, bucket, month, phrase) is in the lines of
    ingestion3 it cites, read from the mirror at the commit cited (1d1dbae5 unless another is named)."""
    shipped = yaml.safe_load(shipped_text())
    checked = 0
    for name, entry in shipped.items():
        for fact in facts(name):
            text = cited_text(fact)
            if text is None:
                pytest.skip("no ingestion3 mirror (or not its commits) here: the cited lines cannot be read")
            assert unsaid(fact, entry, text) == [], f"{name}: {fact.what} is not at {'; '.join(map(str, fact.cites))}"
            checked += 1
    assert checked >= 60


def test_a_fact_its_lines_do_not_say_is_caught():
    """The check above fails a source line whose file does not say the value: a bucket, a month or a phrase it lacks,
    or lines past the file's end."""
    entry = {"harvest": {"path": "s3://dpla-hub-vt/"}}
    config = "    S3_SOURCE_BUCKETS = {\n        \"vt\": \"dpla-hub-vt\","
    assert unsaid(Fact("harvest.path", ()), entry, config) == []
    assert unsaid(Fact("harvest.path", ()), {"harvest": {"path": "s3://dpla-hub-xx/"}}, config) == [
        "harvest.path: 'dpla-hub-xx'"]
    assert unsaid(Fact("months 2, 4", ()), entry, "bimonthly (Feb, Apr, Jun)") == []
    assert unsaid(Fact("months 2, 5", ()), entry, '"months": [2, 8]') == ["month 5"]
    assert unsaid(Fact('"VPN"', ()), entry, "behind our vpn") == []
    assert unsaid(Fact("harvest.endpoint", ()), {"harvest": {"endpoint": "https://archive.org/services/x"}},
                  '.setScheme("http")\n.setHost("archive.org")\n.setPath("/services/x")') == ["harvest.endpoint: 'https'"]


@pytest.fixture
def hub_cli(tmp_path, monkeypatch, capsys):
    """``ingest-assets hubs ARGS`` in this process, with ``INGEST_REGISTRY`` at ``tmp_path/registry.yaml``."""
    monkeypatch.setenv("INGEST_REGISTRY", str(tmp_path / "registry.yaml"))
    monkeypatch.chdir(tmp_path)
    Settings.current.cache_clear()

    def run(*args: str) -> tuple[int, str, str]:
        status = main(["hubs", *args])
        out = capsys.readouterr()
        return status, out.out, out.err

    yield run
    Settings.current.cache_clear()


def test_hub_init_copies_the_entry_which_the_registry_refuses_until_the_delivery_is_filled_in(tmp_path, hub_cli):
    registry = tmp_path / "registry.yaml"
    own = "# our own hub\nlocal: {harvest: {type: oai, endpoint: 'https://oai.example.org/oai'}, mapping: oai_dc}\n"
    registry.write_text(own)
    status, out, err = hub_cli("init", "nara")
    assert status == 0 and err == ""
    assert f"nara: the shipped entry (file harvest, profile nara) is now in {registry}" in out
    assert "nara needs your delivery location, harvest.path: the folder (or s3:// prefix) of NARA's full export" in out
    text = registry.read_text()
    assert text.startswith(own + "\n# National Archives") and text.endswith(entry_texts()["nara"])
    loaded = load_registry(registry)
    assert sorted(loaded) == ["local"]
    with pytest.raises(ConfigError, match="registry key 'nara.harvest.path': needs your delivery location") as refused:
        loaded["nara"]
    assert refused.value.file == str(registry) and "remove harvest.delivery and harvest.fill_in" in refused.value.hint
    filled = text.replace("path: /data/nara/export/", f"path: {tmp_path / 'nara'}")
    filled = "\n".join(line for line in filled.splitlines() if not line.lstrip().startswith(("delivery:", "fill_in:")))
    registry.write_text(filled + "\n")
    assert load_registry(registry)["nara"].settings.harvest.path == str(tmp_path / "nara")


def test_hub_init_of_a_public_hub_runs_as_it_is_and_a_second_init_changes_nothing(tmp_path, hub_cli):
    target = tmp_path / "conf" / "hubs.yaml"
    status, out, _ = hub_cli("init", "maryland", "--to", str(target))
    assert status == 0 and "needs your delivery location" not in out and "harvest maryland --date" in out
    entry = load_registry(target)["maryland"]
    assert entry.settings.harvest.endpoint == "http://collections.digitalmaryland.org/oai/oai.php"
    before = target.read_bytes()
    with pytest.raises(UsageError, match="already has an entry 'maryland'"):
        add_hub("maryland", target)
    status, _, err = hub_cli("init", "maryland", "--to", str(target))
    assert status == 2 and err.count("\n") == 1 and target.read_bytes() == before


def test_hub_init_writes_nothing_into_a_registry_that_does_not_load(tmp_path):
    registry = tmp_path / "registry.yaml"
    registry.write_text("demo: {harvest: [unclosed\n")
    with pytest.raises(ConfigError, match="registry is not valid YAML"):
        add_hub("georgia", registry)
    assert registry.read_text() == "demo: {harvest: [unclosed\n" and [p.name for p in tmp_path.iterdir()] == [
        "registry.yaml"]


def test_hub_list_names_each_hub_and_what_it_needs(hub_cli):
    status, out, _ = hub_cli("list")
    lines = out.splitlines()
    assert status == 0 and lines[0].startswith("44 hubs shipped with ingest-assets ") and len(lines) == 45
    assert any(line.split()[:3] == ["northwest-heritage", "file", "northwest-heritage"] and
               line.endswith("Northwest Digital Heritage [fill in harvest.path]") for line in lines)
    assert any(line.split()[:3] == ["harvard", "oai", "harvard"] and line.endswith("[public]") for line in lines)


def test_hub_init_names_every_key_the_hub_must_fill_in(tmp_path, hub_cli):
    status, out, _ = hub_cli("init", "bhl")
    assert status == 0
    assert ("bhl needs your delivery location, harvest.endpoint: BHL's OAI-PMH base URL (ingestion3 keeps "
            "bhl.harvest.endpoint in its private i3.conf); and harvest.metadata_prefix: the prefix it serves MODS "
            "under") in out


def test_a_hub_with_public_months_is_refreshed_on_the_25th_of_those_months_only():
    """DPLA runs a hub's re-ingest in the last week of its scheduled months: the refresh sensor's day for such a hub
    is the 24th of its latest scheduled month; file hubs and the hubs DPLA does not schedule are never refreshed."""
    hubs = shipped_hubs()
    may, late_may = datetime(2026, 5, 10, tzinfo=timezone.utc), datetime(2026, 5, 25, 3, tzinfo=timezone.utc)
    assert refresh_day(hubs["maryland"], may) == refresh_day(hubs["maryland"], late_may) == date(2026, 3, 24)
    assert (refresh_day(hubs["sd"], may), refresh_day(hubs["sd"], late_may)) == (date(2026, 3, 24), date(2026, 5, 24))
    assert refresh_day(hubs["harvard"], may) == date(2026, 4, 24)  # every month
    assert refresh_day(hubs["mississippi"], may) == date(2026, 4, 30)  # no public months: the 1st of each month
    never = {name for name, entry in hubs.items() if refresh_day(entry, may) is None}
    assert never == {name for name, entry in hubs.items() if entry.settings.harvest.type == "file"} | {"dc", "mt"}
