"""``ingest-assets harvest``: a provider's days through the record pipeline on the configured instance."""

import os
import re
import socket
import subprocess
import sys
from datetime import date
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.instance.ref import InstanceRef

from ingest_assets.demo.oai_server import serve_in_thread
from ingest_assets.demo.samples import sample_records
from ingest_assets.cli.main import main
from ingest_assets.core.settings import Settings
from ingest_assets.operations.failures import last_failure
from ingest_assets.storage import LocalStorage, layout

CLI = str(Path(sys.executable).parent / "ingest-assets")


@pytest.fixture
def hub(tmp_path):
    """A registry with the demo provider, one asking for a format the source lacks, one allowing no mapping failure,
    one whose endpoint refuses connections, and a linked-data entry; no DAGSTER_HOME (the form docs/operating.md
    gives: the instance then lives under INGEST_HOME)."""
    server, url = serve_in_thread(sample_records(day=date(2026, 1, 15)))
    registry = tmp_path / "registry.yaml"
    registry.write_text(
        f"demo: {{harvest: {{type: oai, endpoint: '{url}', metadata_prefix: oai_dc, allow_private: true}}, mapping: oai_dc}}\n"
        f"wrong: {{harvest: {{type: oai, endpoint: '{url}', metadata_prefix: marc21, allow_private: true}}, mapping: oai_dc}}\n"
        f"strict: {{harvest: {{type: oai, endpoint: '{url}', allow_private: true}}, mapping: oai_dc, "
        "quality: {max_failure_rate: 0.0}}\n"
        f"down: {{harvest: {{type: oai, endpoint: '{closed_url()}', allow_private: true}}, mapping: oai_dc}}\n"
        "lod: {void: 'https://example.org/void.ttl'}\n"
    )
    (tmp_path / "cwd").mkdir()
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    env.update(INGEST_HOME=str(tmp_path / "home"), INGEST_REGISTRY=str(registry), DAGSTER_TELEMETRY_DISABLED="1")
    yield env, tmp_path
    server.shutdown()


def closed_url() -> str:
    """An endpoint on a port nothing listens on (the connection is refused)."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    return f"http://127.0.0.1:{port}/oai"


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


def test_a_failed_check_says_what_it_found_the_limit_and_the_key_everywhere(hub, monkeypatch, capsys):
    """The command line, the check's result (the UI's run page), ``status`` and ``report`` each say which check,
    the figure, the limit and the registry key; the failure is kept as the provider's last failure."""
    env, tmp_path = hub
    failed = harvest(env, "strict", "--date", "2026-01-15")
    assert failed.returncode == 1 and failed.stderr == ""
    cause = failed.stdout.strip().splitlines()[-1]
    found = "mapping failure rate 5.3% (1 of 20 records failed to map, deletions not counted), above the limit 0.0%"
    assert cause.startswith(f"strict 2026-01-15: FAILED at mapped_records_mapping_failure_rate: {found}"), cause
    assert "raising strict.quality.max_failure_rate in the registry (now 0)" in cause
    recorded = last_failure(LocalStorage(tmp_path / "home" / "storage"), "strict")
    assert (recorded.kind, recorded.stage, recorded.days) == ("check", "mapped_records_mapping_failure_rate",
                                                              (date(2026, 1, 15),))
    assert recorded.message.startswith(found) and "strict.quality.max_failure_rate" in recorded.message
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(tmp_path / "home" / "dagster"))) as instance:
        [run] = instance.get_run_records(dg.RunsFilter(job_name="record_pipeline"))
        [judged] = [e.dagster_event.asset_check_evaluation_data for e in instance.all_logs(
            run.dagster_run.run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION)
            if e.dagster_event.asset_check_evaluation_data.check_name == "mapping_failure_rate"]
        assert not judged.passed and judged.description.startswith(found)  # what the run page shows
        assert judged.metadata["registry_key"].value == "strict.quality.max_failure_rate"
        assert (judged.metadata["failed"].value, judged.metadata["limit"].value) == (1, 0.0)

    for name in ("INGEST_HOME", "INGEST_REGISTRY"):  # the commands that read, in this process (faster)
        monkeypatch.setenv(name, env[name])
    monkeypatch.setattr(Settings, "current", staticmethod(lambda: Settings.from_env()))
    assert main(["status", "strict"]) == 0
    assert f"in mapped_records_mapping_failure_rate: {found}" in capsys.readouterr().out
    assert main(["report", "strict"]) == 1
    error = capsys.readouterr().err
    assert "harvest it first" not in error and "ingest-assets harvest strict --date 2026-01-15`" in error, error
    assert f"the run of 2026-01-15 stopped at mapped_records_mapping_failure_rate before indexing: {found}" in error


def test_a_provider_that_is_down_fails_in_bounded_tries_naming_the_url_and_the_cause(hub):
    """Connection refused: one line per retry (the URL, why, the wait) and nothing of urllib3's; the HTTP client
    tries each request 4 times and the step is run INGEST_STEP_RETRIES + 1 times, then the run fails naming the
    URL and the cause, kept as the provider's last failure."""
    env, tmp_path = hub
    url = re.search(r"down: \{harvest: \{type: oai, endpoint: '([^']+)'", Path(env["INGEST_REGISTRY"]).read_text())[1]
    failed = harvest({**env, "INGEST_STEP_RETRIES": "1", "INGEST_STEP_RETRY_DELAY": "0"}, "down", "--date", "2026-01-15")
    assert failed.returncode == 1
    lines = failed.stderr.splitlines()
    tries = [line for line in lines if line.startswith(f"WARNING ingest_assets.core.http: GET {url}?verb=Identify: "
                                                       "connection refused; retry ")]
    assert [line.rsplit("; ", 1)[1] for line in tries] == ["retry 1 of 3 at once", "retry 2 of 3 in 1 s",
                                                          "retry 3 of 3 in 2 s"] * 2, lines
    reason = f"cannot reach {url.split('/')[2]}: connection refused (tried 4 times) fetching Identify"
    step = f"down 2026-01-15: original_records failed: {reason} (provider 'down', file '{url}'); step retry 1 of 1 in 0 s"
    assert sorted(lines) == sorted([*tries, step])  # the step's line comes within a second (polled), maybe later
    cause = failed.stdout.strip().splitlines()[-1]
    assert cause.startswith(f"down 2026-01-15: FAILED at original_records: {reason} (provider 'down', file '{url}')")
    recorded = last_failure(LocalStorage(tmp_path / "home" / "storage"), "down")
    assert recorded.stage == "original_records" and recorded.message.startswith(reason)


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
