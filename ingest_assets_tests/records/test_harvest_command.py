"""``ingest-assets harvest``: a provider's days through the record pipeline on the configured instance."""

import os
import re
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
    """A registry with the demo provider, one asking for a format the source lacks, and a linked-data entry; no DAGSTER_HOME
    (the form docs/operating.md gives: the instance then lives under INGEST_HOME)."""
    server, url = serve_in_thread(sample_records(day=date(2026, 1, 15)))
    registry = tmp_path / "registry.yaml"
    registry.write_text(
        f"demo: {{harvest: {{type: oai, endpoint: '{url}', metadata_prefix: oai_dc, allow_private: true}}, mapping: oai_dc}}\n"
        f"wrong: {{harvest: {{type: oai, endpoint: '{url}', metadata_prefix: marc21, allow_private: true}}, mapping: oai_dc}}\n"
        "lod: {void: 'https://example.org/void.ttl'}\n"
    )
    (tmp_path / "cwd").mkdir()
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    env.update(INGEST_HOME=str(tmp_path / "home"), INGEST_REGISTRY=str(registry), DAGSTER_TELEMETRY_DISABLED="1")
    yield env, tmp_path
    server.shutdown()


def harvest(env, *args):
    return subprocess.run([CLI, "harvest", *args], env=env, capture_output=True, text=True, timeout=300,
                          cwd=env["INGEST_HOME"].replace("/home", "/cwd"))


def test_a_date_range_runs_as_one_run_each_day_its_own_output(hub):
    env, tmp_path = hub
    done = harvest(env, "demo", "--from", "2026-01-14", "--to", "2026-01-15")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stderr == ""  # no event log unless --verbose
    started, *stages, first, last = done.stdout.strip().splitlines()
    assert started.startswith("demo 2026-01-14..2026-01-15: running (run ")
    assert [line.split(": ")[1].split()[0] for line in stages] == ["harvested", "mapped", "enriched", "indexed"]
    assert all(line.endswith("records over 2 day(s)") for line in stages), stages
    assert [first.split(":")[0], last.split(":")[0]] == ["demo 2026-01-14", "demo 2026-01-15"]
    assert all(re.fullmatch(r"demo [-\d]+: harvested \d+, mapped \d+ \(\d+ failed\), indexed \d+ "
                            r"\(\d+ documents \+ \d+ deletions\)", line) for line in (first, last)), (first, last)
    storage = LocalStorage(tmp_path / "home" / "storage")
    for day in (date(2026, 1, 14), date(2026, 1, 15)):
        assert all(layout.latest_output(storage, "demo", a, day) for a in layout.ACTIVITIES)
    assert list((tmp_path / "cwd").iterdir()) == []  # nothing of Dagster's in the current folder
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(tmp_path / "home" / "dagster"))) as instance:
        [run] = instance.get_run_records(dg.RunsFilter(job_name="record_pipeline"))  # a range is one run
        tags = run.dagster_run.tags
        assert (tags["dagster/asset_partition_range_start"], tags["dagster/asset_partition_range_end"]) == (
            "2026-01-14|demo", "2026-01-15|demo")
        assert tags["ingest/trigger"] == "cli" and f"(run {run.dagster_run.run_id})" in started
        assert instance.get_dynamic_partitions("record_providers") == ["demo"]
        assert instance.get_concurrency_config().run_queue_config.max_concurrent_runs == 4  # the shipped dagster.yaml


def test_a_failed_day_prints_the_step_and_its_cause(hub):
    """Run with --verbose, which adds Dagster's event log on stderr and changes nothing on stdout (the range test
    above checks that without it stderr stays empty)."""
    env, _ = hub
    failed = harvest(env, "wrong", "--date", "2026-01-15", "--verbose")
    assert failed.returncode == 1
    started, cause = failed.stdout.strip().splitlines()  # no stage finished, so no day line
    assert started.startswith("wrong 2026-01-15: running")
    assert cause.startswith("wrong 2026-01-15: FAILED at original_records: OAI-PMH error cannotDisseminateFormat"), cause
    assert "STEP_FAILURE" in failed.stderr and "RUN_FAILURE" in failed.stderr


@pytest.mark.parametrize("args, message", [
    (["nobody", "--date", "2026-01-15"], "provider 'nobody' is not in the registry"),
    (["lod", "--date", "2026-01-15"], "provider 'lod' has no 'harvest:' block"),
    (["demo", "--date", "2025-06-01"], "before the first partition 2026-01-01"),
    (["demo", "--from", "2026-02-10", "--to", "2026-02-01"], "is before --from"),
])
def test_what_cannot_run_is_refused_with_a_clear_error(hub, args, message):
    env, _ = hub
    refused = harvest(env, *args)
    assert refused.returncode == 2 and message in refused.stderr and refused.stderr.count("\n") == 1


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
    assert refused.stderr.count("\n") == 1
    assert not (tmp_path / "home" / "storage").exists()  # nothing was harvested
