"""The shipped registry of hubs (``records/mapping/hubs.yaml``) loads strictly, holds every hub of ingestion3's
CHProviderRegistry with the harvest and profile ingestion3 binds, and DPLA's three names of each hub; ``ingest-assets
hubs init`` copies an entry into an operator's registry, which refuses a private delivery until it is filled in."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ingest_assets.cli.main import main
from ingest_assets.core.errors import ConfigError, UsageError
from ingest_assets.core.registry import load_registry
from ingest_assets.core.settings import Settings
from ingest_assets.records.mapping.hubs import add_hub, entry_texts, shipped_hubs, shipped_text
from ingest_assets.records.mapping.mapper import profile_for
from ingest_assets_tests.support import ingestion3
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
    assert public == ["harvard", "indiana", "maryland", "minnesota", "mt"]
    assert hubs["harvard"].settings.harvest.sets == ["dag", "lap", "crimes", "scarlet", "manuscripts", "eda", "cna",
                                                     "ihp", "ward", "rubbings"]  # ingestion3.conf.sample's setlist
    placeholders = {name: entry.settings.harvest.placeholder()[0] for name, entry in hubs.items() if name not in public}
    assert {key for key in placeholders.values()} == {"endpoint", "path", "params.q", "params.query", "params", "sets"}


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
