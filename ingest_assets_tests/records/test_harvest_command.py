"""``ingest-assets harvest``: a provider's days through the record pipeline on the configured instance."""

import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.instance.ref import InstanceRef

from ingest_assets.demo.oai_server import serve_in_thread
from ingest_assets.demo.samples import sample_records
from ingest_assets.storage import LocalStorage, layout

CLI = str(Path(sys.executable).parent / "ingest-assets")


@pytest.fixture
def hub(tmp_path):
    server, url = serve_in_thread(sample_records(day=date(2026, 1, 15)))
    registry = tmp_path / "registry.yaml"
    registry.write_text(
        f"demo: {{harvest: {{type: oai, endpoint: '{url}', metadata_prefix: oai_dc, allow_private: true}}, mapping: oai_dc}}\n"
        "lod: {void: 'https://example.org/void.ttl'}\n"
    )
    (tmp_path / "dagster").mkdir()
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path / "dagster"), "INGEST_HOME": str(tmp_path / "home"),
           "INGEST_REGISTRY": str(registry), "DAGSTER_TELEMETRY_DISABLED": "1"}
    yield env, tmp_path
    server.shutdown()


def harvest(env, *args):
    return subprocess.run([CLI, "harvest", *args], env=env, capture_output=True, text=True, timeout=300)


def test_a_date_range_runs_as_one_run_each_day_its_own_output(hub):
    env, tmp_path = hub
    done = harvest(env, "demo", "--from", "2026-01-14", "--to", "2026-01-15")
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.strip().splitlines()
    assert [line.split(":")[0] for line in lines] == ["demo 2026-01-14", "demo 2026-01-15"]
    assert all("success" in line and "original_records" in line for line in lines)
    storage = LocalStorage(tmp_path / "home" / "storage")
    for day in (date(2026, 1, 14), date(2026, 1, 15)):
        assert all(layout.latest_output(storage, "demo", a, day) for a in layout.ACTIVITIES)
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(env["DAGSTER_HOME"])) as instance:
        [run] = instance.get_run_records(dg.RunsFilter(job_name="record_pipeline"))  # a range is one run
        tags = run.dagster_run.tags
        assert (tags["dagster/asset_partition_range_start"], tags["dagster/asset_partition_range_end"]) == (
            "2026-01-14|demo", "2026-01-15|demo")
        assert tags["ingest/trigger"] == "cli" and all(f"(run {run.dagster_run.run_id})" in line for line in lines)
        assert instance.get_dynamic_partitions("record_providers") == ["demo"]


@pytest.mark.parametrize("args, message", [
    (["nobody", "--date", "2026-01-15"], "provider 'nobody' is not in the registry"),
    (["lod", "--date", "2026-01-15"], "provider 'lod' has no 'harvest:' block"),
    (["demo", "--date", "2025-06-01"], "before the first partition 2026-01-01"),
    (["demo", "--from", "2026-02-10", "--to", "2026-02-01"], "is before --from"),
])
def test_what_cannot_run_is_refused_with_a_clear_error(hub, args, message):
    env, _ = hub
    refused = harvest(env, *args)
    assert refused.returncode == 2 and message in refused.stderr and "Traceback" not in refused.stderr


@pytest.mark.parametrize(("entry", "message"), [
    ("mapping: marc", "registry key 'demo.mapping': unknown mapping 'marc'"),
    ("mapping: oai_dc, mapping_overrides: {title: {xpath: 'dc:title', clean: shout}}", "mapping rule for 'title'"),
])
def test_a_bad_profile_or_rule_is_refused_before_any_harvest(hub, entry, message):
    env, tmp_path = hub
    registry = Path(env["INGEST_REGISTRY"])
    registry.write_text(registry.read_text().replace("mapping: oai_dc", entry))
    refused = harvest(env, "demo", "--date", "2026-01-15")
    assert refused.returncode == 2 and message in refused.stderr and str(registry) in refused.stderr
    assert not (tmp_path / "home" / "storage").exists()  # nothing was harvested
